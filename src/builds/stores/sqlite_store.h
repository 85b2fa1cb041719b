// SqliteStore: the embedded record store — SQLite (WAL) in DIR/trtwatch.db under
// --data-dir, the default for a service on one host.
//
// One process per data dir: the embedded store is not shared. Open takes an exclusive
// OS lock on DIR/trtwatch.lock (the holder's PID written in it) before it touches the
// database, and holds it for the store's lifetime, so that a second `trtwatch serve`
// or `trtwatch mcp` on the same dir is refused before it recovers (kills) the first
// one's workers or runs its queued builds. So its queue (builds/stores/build_queue.h) has
// one replica: shared() is false, and at start every running build is an orphan. The
// lock belongs to this embedded store: a store on a database server coordinates
// through the database instead. The data dir
// (0700), the database and its -wal/-shm (0600) are this user's only: records hold
// model paths and errors.
//
// Threading: as RecordStore (builds/stores/record_store.h): one thread.
#pragma once

#include <memory>
#include <string>

#include "builds/stores/record_store.h"

struct sqlite3;

namespace trtwatch {
class FileLock;
}

namespace trtwatch::builds {

class SqliteStore final : public RecordStore, public BuildQueue {
 public:
  // Opens (creating if needed) DIR/trtwatch.db, brings its schema up to date (the
  // version is PRAGMA user_version; a database of the release before versions is
  // version 1) and checks its integrity (a damaged file is refused, never served
  // truncated). When another process holds the data dir, the error names the dir and
  // its PID. `vfs` names an SQLite VFS (tests inject storage faults through one); null:
  // the default.
  static StoreOpening Open(const std::string& dir, const char* vfs = nullptr);
  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  Status Put(const std::string& id, const std::string& status, const std::string& doc) override;
  Result<std::optional<std::string>> Get(const std::string& id) override;
  Result<Page> List(const std::vector<std::string>& statuses, int limit, int64_t cursor,
                    const std::string& model) override;
  Result<std::vector<std::string>> WithStatus(const std::vector<std::string>& statuses) override;
  Status AppendEvents(const std::string& id, const std::vector<StoredEvent>& events) override;
  Result<bool> AppendEventsFenced(const std::string& id, const std::vector<StoredEvent>& events, int64_t generation,
                                  bool finish) override;
  Result<bool> PutFenced(const std::string& id, const std::string& status, const std::string& doc,
                         int64_t generation) override;
  Status ForEachEvent(const std::string& id, uint64_t after, const std::function<void(const StoredEvent&)>& fn) override;
  Result<std::vector<StoredEvent>> EventsPage(const std::string& id, uint64_t after, uint64_t up_to,
                                              int limit) override;
  Result<uint64_t> LastSeq(const std::string& id) override;
  Status Probe() override;
  Status PutHistory(const HistoryRow& row) override;
  Result<std::vector<std::string>> History(const HistoryQuery& query) override;
  Result<int64_t> PruneHistory(int64_t finished_before, int64_t keep_newest) override;
  Result<int64_t> AppendAudit(const AuditEntry& entry) override;
  Result<AuditEntries> AuditPage(const AuditQuery& query) override;
  Result<int64_t> PruneAudit(int64_t before_unix) override;
  Result<std::vector<std::string>> Prune(const std::vector<std::string>& final_statuses,
                                         const std::string& finished_before, int64_t keep_newest) override;
  BuildQueue& queue() override { return *this; }

  bool shared() const override { return false; }
  QueueResult AddClaimed(const std::string& id, const std::string& doc, const std::string& replica,
                         double lease_seconds) override;
  ClaimResult ClaimQueued(const std::string& replica, int count, double lease_seconds) override;
  ClaimResult ClaimQueuedBuild(const std::string& id, const std::string& replica, double lease_seconds) override;
  CountResult CountQueued() override;
  RenewResult RenewLeases(const std::string& replica, double lease_seconds) override;
  ClaimResult ClaimOrphans(const std::string& replica, double lease_seconds, bool at_start) override;
  ConditionalResult RequestCancel(const std::string& id, const std::string& request) override;
  CancelRequestsResult TakeCancelRequests(const std::string& replica) override;

 private:
  SqliteStore(std::unique_ptr<FileLock> lock, sqlite3* db);
  Status Exec(const char* sql);
  // The error of the last statement.
  Status LastError() const;
  [[nodiscard]] Status InsertEvents(const std::string& id, const std::vector<StoredEvent>& events);
  // The error of the last statement, as a failed queue result (a transaction open is rolled back).
  template <typename Result>
  Result QueueError();
  // Connection settings and the schema's migrations; kOpened (without a store) or the refusal.
  StoreOpening SetUp(const std::string& path);
  const std::unique_ptr<FileLock> lock_;  // this process's claim on the data dir; outlives db_
  sqlite3* db_;
};

}  // namespace trtwatch::builds
