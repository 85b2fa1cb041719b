// RecordStore: build records and their event logs in SQLite (WAL) under --data-dir.
//
// A record is stored as its JSON document plus the columns queries need (status,
// creation order). Event logs are (build_id, seq, json line) rows, appended in batches,
// one transaction each. Threading: not synchronised; the service uses one store from
// its event-loop thread only (tests from one thread).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

struct sqlite3;

namespace trtwatch::service {

struct StoredEvent {
  uint64_t seq = 0;
  std::string json;
};

class RecordStore {
 public:
  // Opens (creating if needed) DIR/trtwatch.db. Returns null with `*error` set.
  static std::unique_ptr<RecordStore> Open(const std::string& dir, std::string* error);
  ~RecordStore();
  RecordStore(const RecordStore&) = delete;
  RecordStore& operator=(const RecordStore&) = delete;

  // Inserts the record or replaces its status and document; creation order is kept.
  bool Put(const std::string& id, const std::string& status, const std::string& doc);
  std::optional<std::string> Get(const std::string& id);

  struct Page {
    std::vector<std::string> docs;
    std::optional<int64_t> next_cursor;  // pass back as `cursor` for the next page
  };
  // Newest first. `statuses` empty means all; `cursor` 0 means from the newest.
  Page List(const std::vector<std::string>& statuses, int limit, int64_t cursor);
  // Every record in one of `statuses`, oldest first (restart recovery).
  std::vector<std::string> WithStatus(const std::vector<std::string>& statuses);

  bool AppendEvents(const std::string& id, const std::vector<StoredEvent>& events);
  // The log of `id` with seq > `after`, in seq order.
  std::vector<StoredEvent> EventsAfter(const std::string& id, uint64_t after);
  uint64_t LastSeq(const std::string& id);

  const std::string& last_error() const { return last_error_; }

 private:
  explicit RecordStore(sqlite3* db) : db_(db) {}
  bool Exec(const char* sql);
  sqlite3* db_;
  std::string last_error_;
};

}  // namespace trtwatch::service
