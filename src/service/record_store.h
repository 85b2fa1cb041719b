// RecordStore: build records and their event logs in SQLite (WAL) under --data-dir.
//
// One process per data dir: the embedded store is not shared. Open takes an exclusive
// OS lock on DIR/trtwatch.lock (the holder's PID written in it) before it touches the
// database, and holds it for the store's lifetime, so that a second `trtwatch serve`
// or `trtwatch mcp` on the same dir is refused before it recovers (kills) the first
// one's workers or runs its queued builds. The lock belongs to this embedded store: a
// store on a database server (PostgreSQL) would coordinate through the database
// (advisory locks, row claims) instead and take no file lock. The data dir (0700), the
// database and its -wal/-shm (0600) are this user's only: records hold model paths
// and errors.
//
// A record is stored as its JSON document plus the columns queries need (status,
// creation order). Event logs are (build_id, seq, json line) rows, appended in batches,
// one transaction each. Threading: not synchronised; the service uses one store from
// its event-loop thread only (tests from one thread).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

struct sqlite3;

namespace trtwatch {
class FileLock;
}

namespace trtwatch::service {

struct StoredEvent {
  uint64_t seq = 0;
  std::string json;
};

class RecordStore {
 public:
  // Opens (creating if needed) DIR/trtwatch.db and checks its integrity (a damaged
  // file is refused, never served truncated). Returns null with `*error` set; when
  // another process holds the data dir, the error names the dir and its PID. `vfs`
  // names an SQLite VFS (tests inject storage faults through one); null: the default.
  static std::unique_ptr<RecordStore> Open(const std::string& dir, std::string* error, const char* vfs = nullptr);
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

  // Every write reports failure (disk full, I/O error) with last_error() set; a failed
  // batch is rolled back whole.
  bool AppendEvents(const std::string& id, const std::vector<StoredEvent>& events);
  // Calls `fn` with each event of `id` with seq > `after`, in seq order. Returns false
  // if the log could not be read to its end (damage, I/O error): then what `fn` saw
  // is incomplete.
  bool ForEachEvent(const std::string& id, uint64_t after, const std::function<void(const StoredEvent&)>& fn);
  // One bounded page of the log: at most `limit` events of `id` with `after` < seq <=
  // `up_to`, in seq order, into `*page` (cleared first). Returns false on a read error.
  bool EventsPage(const std::string& id, uint64_t after, uint64_t up_to, int limit, std::vector<StoredEvent>* page);
  // The log of `id` with seq > `after`, in seq order (empty if it cannot be read).
  std::vector<StoredEvent> EventsAfter(const std::string& id, uint64_t after);
  uint64_t LastSeq(const std::string& id);
  // A small write that tells whether the store takes writes again after a failure.
  bool Probe();

  // Removes finished records (any of `final_statuses`) and their logs: those finished
  // before `finished_before` (an RFC 3339 time like the records'; empty: no age limit)
  // and all but the newest `keep_newest` (0: no count limit). One transaction. The ids
  // removed go to `*removed`. False on a storage error, with nothing removed.
  bool Prune(const std::vector<std::string>& final_statuses, const std::string& finished_before, int64_t keep_newest,
             std::vector<std::string>* removed);

  const std::string& last_error() const { return last_error_; }

 private:
  RecordStore(std::unique_ptr<FileLock> lock, sqlite3* db);
  bool Exec(const char* sql);
  const std::unique_ptr<FileLock> lock_;  // this process's claim on the data dir; outlives db_
  sqlite3* db_;
  std::string last_error_;
};

}  // namespace trtwatch::service
