// RecordWriter: every write of a build record, its live watchers, and the storage
// health the manager answers with. A record whose write failed is kept here (its
// newest state) and served from here, and written again every second until the store
// takes it; until then the store counts as unhealthy and new builds are refused.
// A queue or event write that failed makes it unhealthy too, until a probe write
// succeeds.
//
// Threading: the build manager's event-loop thread only (the retry timer runs there).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/steady_timer.hpp>

namespace boost::asio {
class io_context;
}

namespace trtwatch::builds {

class RecordStore;
class RecordWatcher;

// "the service could not store WHAT (WHY); free space in --data-dir or fix the disk", or
// with `database` (a PostgreSQL --store): "…; check that the database is up and
// reachable (--store)".
std::string StorageError(const std::string& what, const std::string& why, bool database = false);

// What a record write came to: stored; kept here for a retry (the store failed); or
// refused by the store's fence (the build's lease is another replica's, or its record
// is final already): dropped, never retried.
enum class PutOutcome { kStored, kKept, kRefused };

class RecordWriter {
 public:
  RecordWriter(boost::asio::io_context& io, RecordStore& store);
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  // Stores `doc` under the fence of lease `generation` (RecordStore::PutFenced) and
  // announces it to the watchers once taken (or kept for a retry, with error() set).
  [[nodiscard]] PutOutcome Put(const std::string& id, const std::string& status, std::string doc,
                               int64_t generation);
  // The newest state of a record whose write failed, if `id` is one.
  std::optional<std::string> Unsaved(const std::string& id) const;

  // Whether every record and event reached the store.
  bool healthy() const { return error_.empty() && unsaved_.empty(); }
  // The last storage failure; empty once healthy again.
  const std::string& error() const { return error_; }
  // Writes the unsaved records (and probes the store after a failed event write);
  // returns healthy().
  bool RetryUnsaved();
  // A failed write of something else (events, the queue): unhealthy until a retry passes.
  void Failed(const std::string& error);
  // StorageError's words for this store (the disk under --data-dir, or the database).
  std::string StoreError(const std::string& what, const std::string& why) const;

  // Every record written from now on goes to `watcher` until Unwatch; the frames' ids
  // count record writes since the service started.
  void Watch(RecordWatcher* watcher) { watchers_.push_back(watcher); }
  void Unwatch(RecordWatcher* watcher) { std::erase(watchers_, watcher); }
  bool watched() const { return !watchers_.empty(); }
  void Announce(const std::string& doc);

 private:
  void ScheduleRetry();

  boost::asio::io_context& io_;
  RecordStore& store_;
  struct UnsavedRecord {
    std::string status;
    std::string doc;
    int64_t generation = 0;
  };
  std::map<std::string, UnsavedRecord> unsaved_;  // id -> its newest state
  std::string error_;
  std::unique_ptr<boost::asio::steady_timer> retry_timer_;
  std::vector<RecordWatcher*> watchers_;
  uint64_t writes_ = 0;  // the id of the last "record" frame
};

}  // namespace trtwatch::builds
