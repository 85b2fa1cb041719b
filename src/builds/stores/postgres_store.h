// PostgresStore: the record store on a PostgreSQL (15+) database, named by a libpq
// connection URI (`--store postgresql://USER@HOST:PORT/DB`, or postgres://).
//
// Written on libpq, PostgreSQL's C client: a C API with no C++ ABI to match, and a
// socket (PQsocket) that can be made non-blocking and watched by the service's Asio
// loop, which LISTEN/NOTIFY will need; libpqxx would only wrap the same calls.
//
// Any number of services share one database as replicas (builds/stores/build_queue.h):
// the queue is claimed with FOR UPDATE SKIP LOCKED and running builds are held by
// leases, so no lock is taken on the database as a whole. The data dir still holds
// engines and worker files, but its SQLite lock is not taken.
//
// The schema is versioned in the table trtwatch_schema (builds/stores/schema_migrations.h);
// migrations run in one transaction under pg_advisory_xact_lock(kSchemaLockKey), so
// two processes starting at once do not both migrate.
//
// Writes notify the other replicas (builds/stores/change_feed.h): an event batch's
// insert and pg_notify('trtwatch_events', 'ID LAST_SEQ') are one statement, as a record
// write and pg_notify('trtwatch_records', 'ID'); a second session LISTENs to both.
//
// Values travel only as parameters (PQexecParams), never inside SQL text. A call that
// fails (connection lost, server down) returns the error in its Status or Result; the next
// call reconnects. Calls block for one round trip each (as SQLite's block on the disk).
//
// Threading: as RecordStore (builds/stores/record_store.h): one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "builds/stores/record_store.h"

struct pg_conn;

namespace trtwatch::builds {

struct PgReply;  // postgres_store.cc: a result or libpq's error

class PostgresStore final : public RecordStore, public BuildQueue, public ChangeFeed {
 public:
  // The transaction lock migrations take ('trtwatch' in ASCII, plus one: the key the
  // service-wide lock of the releases before replicas had, plus one).
  static constexpr int64_t kSchemaLockKey = 0x7472747761746369;

  // Connects to `uri` and brings the schema up to date.
  static StoreOpening Open(const std::string& uri);
  ~PostgresStore() override;
  PostgresStore(const PostgresStore&) = delete;
  PostgresStore& operator=(const PostgresStore&) = delete;

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
  ChangeFeed* changes() override { return this; }

  bool shared() const override { return true; }
  QueueResult AddClaimed(const std::string& id, const std::string& doc, const std::string& replica,
                         double lease_seconds) override;
  ClaimResult ClaimQueued(const std::string& replica, int count, double lease_seconds) override;
  ClaimResult ClaimQueuedBuild(const std::string& id, const std::string& replica, double lease_seconds) override;
  CountResult CountQueued() override;
  RenewResult RenewLeases(const std::string& replica, double lease_seconds) override;
  ClaimResult ClaimOrphans(const std::string& replica, double lease_seconds, bool at_start) override;
  ConditionalResult RequestCancel(const std::string& id, const std::string& request) override;
  CancelRequestsResult TakeCancelRequests(const std::string& replica) override;

  int Listen(std::string* error) override;
  bool Drain(std::vector<StoreChange>* changes) override;
  void Close() override;

  // `the database "DB" on HOST:PORT`, for messages: never the password.
  const std::string& name() const { return name_; }

 private:
  using Params = std::vector<std::string>;

  PostgresStore(std::string uri, std::string name);
  // Connected, outside any transaction; else false with last_error_.
  bool Ready();
  // A new session, unless a lost database's back-off still runs: after a failed
  // attempt, calls fail at once for 1 s, then 2, 4 … up to 30 s, so a database that is
  // gone costs the manager's thread no connect timeout per call.
  bool Connect();
  // A new session on uri_, or null with last_error_.
  pg_conn* NewSession();
  StoreOpening MigrateSchema();
  // `sql` (an UPDATE … RETURNING doc[, previous owner]) as a claim.
  ClaimResult Claim(const char* sql, const Params& params);
  template <typename Result>
  Result Failed();
  // Runs `sql` with `params` as text; the reply, whose error is also last_error_.
  PgReply Run(const char* sql, const Params& params = {});
  bool Command(const char* sql, const Params& params = {});
  bool RollbackAfterFailure();
  // The last failure (last_error_) as a Status.
  Status LastError() const { return Status::Error(last_error_); }
  // Ok when `done`, else the last failure.
  Status Done(bool done) const { return done ? OkStatus() : LastError(); }
  // Inserts `count` events; `notify_seq` > 0: and notifies the batch's end, in the same statement.
  bool AppendChunk(const std::string& id, const StoredEvent* first, size_t count, uint64_t notify_seq);
  enum class FenceCheck { kWritten, kRefused, kFailed };
  // Inserts `count` events if the fence holds (AppendEventsFenced); `notify`: and
  // announces the batch's end.
  FenceCheck FencedChunk(const std::string& id, const StoredEvent* first, size_t count, int64_t generation,
                         bool finish, bool notify);

  const std::string uri_;
  const std::string name_;
  pg_conn* conn_ = nullptr;
  pg_conn* listen_ = nullptr;  // the change feed's session (LISTEN), non-blocking
  std::string last_error_;  // the session's last failure, which the failing call returns as its Status
  std::chrono::steady_clock::time_point next_attempt_{};  // Connect's back-off
  std::chrono::seconds backoff_{0};
  std::string connect_error_;  // why the last attempt failed
};

}  // namespace trtwatch::builds
