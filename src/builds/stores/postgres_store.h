// PostgresStore: the record store on a PostgreSQL (15+) database, named by a libpq
// connection URI (`--store postgresql://USER@HOST:PORT/DB`, or postgres://).
//
// Written on libpq, PostgreSQL's C client: a C API with no C++ ABI to match, and a
// socket (PQsocket) that can be made non-blocking and watched by the service's Asio
// loop, which LISTEN/NOTIFY will need; libpqxx would only wrap the same calls.
//
// One service per database, until replicas exist: Open takes a session-level advisory
// lock (pg_try_advisory_lock(kServiceLockKey)) and holds it for the connection's life,
// so that a second `trtwatch serve`/`mcp` on the same database is refused before it
// recovers the first one's builds. The lock goes with the connection: when the server
// ends it (restart, network), the next call reconnects and takes the lock again — or
// fails, if another service took the database meanwhile. The data dir still holds
// engines and worker files, but its SQLite lock is not taken.
//
// The schema is versioned in the table trtwatch_schema (builds/stores/schema_migrations.h);
// migrations run in one transaction under pg_advisory_xact_lock(kSchemaLockKey), so
// two processes starting at once do not both migrate.
//
// Values travel only as parameters (PQexecParams), never inside SQL text. A call that
// fails (connection lost, server down) returns false with last_error() set; the next
// call reconnects. Calls block for one round trip each (as SQLite's block on the disk).
//
// Threading: as RecordStore (builds/stores/record_store.h): one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "builds/stores/record_store.h"

struct pg_conn;

namespace trtwatch::builds {

struct PgReply;  // postgres_store.cc: a result or libpq's error

class PostgresStore final : public RecordStore {
 public:
  // 'trtwatch' in ASCII: the session lock one service holds on its database.
  static constexpr int64_t kServiceLockKey = 0x7472747761746368;
  // The transaction lock migrations take.
  static constexpr int64_t kSchemaLockKey = kServiceLockKey + 1;

  // Connects to `uri`, takes the service lock and brings the schema up to date.
  static StoreOpening Open(const std::string& uri);
  ~PostgresStore() override;
  PostgresStore(const PostgresStore&) = delete;
  PostgresStore& operator=(const PostgresStore&) = delete;

  bool Put(const std::string& id, const std::string& status, const std::string& doc) override;
  std::optional<std::string> Get(const std::string& id) override;
  Page List(const std::vector<std::string>& statuses, int limit, int64_t cursor) override;
  std::vector<std::string> WithStatus(const std::vector<std::string>& statuses) override;
  bool AppendEvents(const std::string& id, const std::vector<StoredEvent>& events) override;
  bool ForEachEvent(const std::string& id, uint64_t after, const std::function<void(const StoredEvent&)>& fn) override;
  bool EventsPage(const std::string& id, uint64_t after, uint64_t up_to, int limit,
                  std::vector<StoredEvent>* page) override;
  uint64_t LastSeq(const std::string& id) override;
  bool Probe() override;
  bool Prune(const std::vector<std::string>& final_statuses, const std::string& finished_before, int64_t keep_newest,
             std::vector<std::string>* removed) override;
  const std::string& last_error() const override { return last_error_; }

  // `the database "DB" on HOST:PORT`, for messages: never the password.
  const std::string& name() const { return name_; }

 private:
  using Params = std::vector<std::string>;

  PostgresStore(std::string uri, std::string name);
  // Connected, holding the service lock, outside any transaction; else false with last_error_.
  bool Ready();
  bool Connect();
  enum class Lock { kTaken, kHeldElsewhere, kError };
  Lock TakeServiceLock();
  StoreOpening MigrateSchema();
  // Runs `sql` with `params` as text; the reply, whose error is also last_error_.
  PgReply Run(const char* sql, const Params& params = {});
  bool Command(const char* sql, const Params& params = {});
  bool RollbackAfterFailure();
  bool AppendChunk(const std::string& id, const StoredEvent* first, size_t count);

  const std::string uri_;
  const std::string name_;
  pg_conn* conn_ = nullptr;
  std::string last_error_;
};

}  // namespace trtwatch::builds
