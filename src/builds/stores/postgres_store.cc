#include "builds/stores/postgres_store.h"

#include <libpq-fe.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <map>

#include "builds/stores/postgres_reply.h"
#include "builds/stores/schema_migrations.h"
#include "builds/stores/store_support.h"
#include "protocol/utf8.h"

namespace trtwatch::builds {

namespace {

using Params = std::vector<std::string>;

// A message from libpq (the server's words, from outside): one line, valid UTF-8, bounded.
std::string LibpqText(const char* message) {
  std::string line;
  for (const char* p = message ? message : ""; *p; ++p) {
    const bool space = *p == '\n' || *p == '\t' || *p == '\r' || *p == ' ';
    if (!space) line += *p;
    else if (!line.empty() && line.back() != ' ') line += ' ';
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return ValidBoundedText(line.empty() ? "unknown libpq error" : line, 400);
}

// `sql` with `params` as text values ($1, $2, …), on `conn`.
PgReply PgExec(PGconn* conn, const char* sql, const Params& params = {}) {
  std::vector<const char*> values;
  for (const std::string& p : params) values.push_back(p.c_str());
  PgReply reply;
  reply.result.reset(PQexecParams(conn, sql, static_cast<int>(values.size()), nullptr, values.data(), nullptr,
                                  nullptr, 0));
  const ExecStatusType status = PQresultStatus(reply.result.get());
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return reply;
  const char* why = reply.result ? PQresultErrorMessage(reply.result.get()) : "";
  reply.error = LibpqText(*why ? why : PQerrorMessage(conn));
  reply.result.reset();
  return reply;
}

// "$first,$first+1,…" for `n` values.
std::string PgPlaceholders(size_t first, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += (i ? ",$" : "$") + std::to_string(first + i);
  return s;
}

std::string SeqParam(uint64_t seq) { return std::to_string(std::min<uint64_t>(seq, INT64_MAX)); }

// The schema, one step per version (builds/stores/schema_migrations.h); a step is never
// edited once released. Plain CREATE: a database with tables of another program is
// refused, not mixed into.
constexpr const char* kPgSteps[] = {
    "CREATE TABLE builds ("
    "  ord BIGSERIAL PRIMARY KEY,"
    "  id TEXT NOT NULL UNIQUE,"
    "  status TEXT NOT NULL,"
    "  doc TEXT NOT NULL);"
    "CREATE INDEX builds_status ON builds(status, ord);"
    "CREATE TABLE events ("
    "  build_id TEXT NOT NULL,"
    "  seq BIGINT NOT NULL,"
    "  json TEXT NOT NULL,"
    "  PRIMARY KEY (build_id, seq));"
    "CREATE TABLE health (k INTEGER PRIMARY KEY, checked TIMESTAMPTZ NOT NULL);",
    // 2: replicas (builds/stores/build_queue.h): who runs a build, until when, and a
    // cancel left for that owner. NULL owner: queued, or written before replicas.
    "ALTER TABLE builds ADD COLUMN owner TEXT;"
    "ALTER TABLE builds ADD COLUMN lease_until TIMESTAMPTZ;"
    "ALTER TABLE builds ADD COLUMN cancel_request TEXT;"
    "CREATE INDEX builds_owner ON builds(owner) WHERE owner IS NOT NULL;",
    // 3: the build history (docs/history.md), one entry per finished build.
    "CREATE TABLE history ("
    "  ord BIGSERIAL PRIMARY KEY,"
    "  build_id TEXT NOT NULL UNIQUE,"
    "  key TEXT NOT NULL,"
    "  model TEXT NOT NULL,"
    "  backend TEXT NOT NULL,"
    "  status TEXT NOT NULL,"
    "  finished_at BIGINT NOT NULL,"
    "  entry TEXT NOT NULL);"
    "CREATE INDEX history_finished ON history(finished_at);"
    "CREATE INDEX history_key ON history(key, finished_at);",
    // 4: fencing (RecordStore's *Fenced writes): each claim increments a build's lease
    // generation; finish_seq is the seq of its log's build_finish, once stored.
    ("ALTER TABLE builds ADD COLUMN lease_gen BIGINT NOT NULL DEFAULT 0;"
     "ALTER TABLE builds ADD COLUMN finish_seq BIGINT;"),  // one step, two statements
    // 5: the audit trail (builds/audit_entry.h), which every replica appends to: an
    // identity numbers the entries without a lock (unique; a pruned seq never comes back).
    ("CREATE TABLE audit ("
     "  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
     "  at BIGINT NOT NULL,"
     "  user_name TEXT NOT NULL,"
     "  action TEXT NOT NULL,"
     "  target TEXT NOT NULL,"
     "  detail TEXT NOT NULL);"
     "CREATE INDEX audit_at ON audit(at);"),
};

// PostgreSQL's side of a migration: the version is the one row of trtwatch_schema; the
// transaction lock keeps two starting processes from migrating at once.
class PgSchema final : public SchemaAccess {
 public:
  explicit PgSchema(PGconn* conn) : conn_(conn) {}
  bool Begin() override {
    return Do("BEGIN") && Do("SELECT pg_advisory_xact_lock($1)", {std::to_string(PostgresStore::kSchemaLockKey)});
  }
  std::optional<int> ReadVersion() override {
    if (!Do("CREATE TABLE IF NOT EXISTS trtwatch_schema (version INTEGER NOT NULL)")) return std::nullopt;
    PgReply r = PgExec(conn_, "SELECT COALESCE(MAX(version), 0) FROM trtwatch_schema");
    if (!r.ok()) return error_ = r.error, std::nullopt;
    return static_cast<int>(r.Int(0, 0));
  }
  bool Apply(const char* step_sql) override {  // several statements, no values: PQexec
    std::unique_ptr<PGresult, decltype(&PQclear)> r(PQexec(conn_, step_sql), &PQclear);
    if (PQresultStatus(r.get()) == PGRES_COMMAND_OK) return true;
    error_ = LibpqText(r ? PQresultErrorMessage(r.get()) : PQerrorMessage(conn_));
    return false;
  }
  bool WriteVersion(int version) override {
    return Do("DELETE FROM trtwatch_schema") &&
           Do("INSERT INTO trtwatch_schema(version) VALUES($1)", {std::to_string(version)});
  }
  bool Commit() override { return Do("COMMIT"); }
  void Rollback() override {
    if (PQtransactionStatus(conn_) != PQTRANS_IDLE) PQclear(PQexec(conn_, "ROLLBACK"));
  }
  std::string error() const override { return error_; }

 private:
  bool Do(const char* sql, const Params& params = {}) {
    PgReply r = PgExec(conn_, sql, params);
    if (!r.ok()) error_ = r.error;
    return r.ok();
  }
  PGconn* conn_;
  std::string error_;
};

struct UriParts {
  std::string name;   // `the database "DB" on HOST:PORT`
  std::string error;  // or why `uri` is no connection URI
};

// The URI's parts that name the database in messages (never its password).
UriParts ParseUri(const std::string& uri) {
  char* why = nullptr;
  PQconninfoOption* options = PQconninfoParse(uri.c_str(), &why);
  if (!options) {
    UriParts bad{"", why ? LibpqText(why) : "out of memory"};
    PQfreemem(why);
    return bad;
  }
  std::map<std::string, std::string> v;
  for (PQconninfoOption* o = options; o->keyword; ++o) {
    if (o->val) v[o->keyword] = ValidBoundedText(o->val, 200);
  }
  PQconninfoFree(options);
  if (v["port"].find_first_not_of("0123456789,") != std::string::npos) {
    return {"", "the port \"" + v["port"] + "\" is not a number"};
  }
  const std::string host = !v["host"].empty() ? v["host"] : !v["hostaddr"].empty() ? v["hostaddr"] : "the local socket";
  const std::string db = !v["dbname"].empty() ? v["dbname"] : !v["user"].empty() ? v["user"] : "(default)";
  return {"the database \"" + db + "\" on " + host + (v["port"].empty() ? "" : ":" + v["port"]), ""};
}

void IgnoreNotice(void*, const char*) {}  // "relation … already exists, skipping" and the like

}  // namespace

PostgresStore::PostgresStore(std::string uri, std::string name) : uri_(std::move(uri)), name_(std::move(name)) {}

PostgresStore::~PostgresStore() {
  PQfinish(listen_);
  PQfinish(conn_);
}

StoreOpening PostgresStore::Open(const std::string& uri) {
  using Outcome = StoreOpening::Outcome;
  const UriParts parts = ParseUri(uri);
  if (!parts.error.empty()) {
    return StoreOpening::Failed(Outcome::kInvalid, "--store is not a PostgreSQL connection URI (" + parts.error +
                                                       "): give postgresql://USER@HOST:PORT/DB");
  }
  std::unique_ptr<PostgresStore> store(new PostgresStore(uri, parts.name));
  if (!store->Connect()) {
    return StoreOpening::Failed(Outcome::kUnavailable, store->last_error_ +
                                                           ": start PostgreSQL there, or correct --store "
                                                           "(postgresql://USER@HOST:PORT/DB)");
  }
  if (StoreOpening refused = store->MigrateSchema(); refused.outcome != Outcome::kOpened) return refused;
  return StoreOpening::Opened(std::move(store));
}

bool PostgresStore::Connect() {
  using std::chrono::seconds;
  const auto now = std::chrono::steady_clock::now();
  if (now < next_attempt_) {
    const auto wait = std::chrono::ceil<seconds>(next_attempt_ - now).count();
    last_error_ = connect_error_ + "; next attempt in " + std::to_string(wait) + " s";
    return false;
  }
  PQfinish(conn_);
  conn_ = NewSession();
  if (!conn_) connect_error_ = last_error_;
  backoff_ = conn_ ? seconds(0) : std::clamp(backoff_ * 2, seconds(1), seconds(30));
  next_attempt_ = now + backoff_;
  return conn_ != nullptr;
}

PGconn* PostgresStore::NewSession() {
  // Before dbname: the URI may set its own; after: ours always.
  const char* keys[] = {"connect_timeout", "application_name", "dbname", "client_encoding", nullptr};
  const char* values[] = {"10", "trtwatch", uri_.c_str(), "UTF8", nullptr};
  PGconn* conn = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (conn && PQstatus(conn) == CONNECTION_OK) {
    PQsetNoticeProcessor(conn, &IgnoreNotice, nullptr);
    return conn;
  }
  last_error_ = "cannot connect to " + name_ + ": " + LibpqText(conn ? PQerrorMessage(conn) : "out of memory");
  PQfinish(conn);
  return nullptr;
}

StoreOpening PostgresStore::MigrateSchema() {
  using Outcome = StoreOpening::Outcome;
  PgSchema schema(conn_);
  const MigrationResult m = Migrate(schema, kPgSteps);
  switch (m.outcome) {
    case MigrationResult::Outcome::kNewer:
      return StoreOpening::Failed(
          Outcome::kNewerSchema,
          NewerSchemaError(name_, m.found, static_cast<int>(std::size(kPgSteps)), "--store"));
    case MigrationResult::Outcome::kFailed:
      return StoreOpening::Failed(Outcome::kDamaged, "cannot set up " + name_ + ": " + m.error +
                                                         " (is it a trtwatch database? give --store another one)");
    default:
      return {Outcome::kOpened, nullptr, ""};
  }
}

bool PostgresStore::Ready() {
  if (conn_ && PQstatus(conn_) == CONNECTION_OK) {
    // A transaction left open by a failed call is ended first.
    const PGTransactionStatusType t = PQtransactionStatus(conn_);
    if (t != PQTRANS_UNKNOWN) return t == PQTRANS_IDLE || Command("ROLLBACK");
  }
  return Connect();  // lost (a server restart, the network): a new session
}

PgReply PostgresStore::Run(const char* sql, const Params& params) {
  PgReply reply = PgExec(conn_, sql, params);
  if (!reply.ok()) last_error_ = reply.error;
  return reply;
}

bool PostgresStore::Command(const char* sql, const Params& params) { return Run(sql, params).ok(); }

bool PostgresStore::RollbackAfterFailure() {
  if (conn_ && PQstatus(conn_) == CONNECTION_OK && PQtransactionStatus(conn_) != PQTRANS_IDLE) {
    PQclear(PQexec(conn_, "ROLLBACK"));  // keeps last_error_: the failure is what matters
  }
  return false;
}

Status PostgresStore::Put(const std::string& id, const std::string& status, const std::string& doc) {
  return Done(Ready() && Command("WITH stored AS (INSERT INTO builds(id, status, doc) VALUES($1, $2, $3) "
                                 "ON CONFLICT(id) DO UPDATE SET status = EXCLUDED.status, doc = EXCLUDED.doc "
                                 "RETURNING 1) SELECT pg_notify('trtwatch_records', $1)",
                                 {id, status, doc}));
}

Result<std::optional<std::string>> PostgresStore::Get(const std::string& id) {
  if (!Ready()) return LastError();
  PgReply r = Run("SELECT doc FROM builds WHERE id = $1", {id});
  if (!r.ok()) return LastError();
  if (r.rows() == 0) return std::optional<std::string>();
  return std::optional<std::string>(r.Text(0, 0));
}

Result<RecordStore::Page> PostgresStore::List(const std::vector<std::string>& statuses, int limit, int64_t cursor,
                                              const std::string& model) {
  if (!Ready()) return LastError();
  Params params{std::to_string(cursor > 0 ? cursor : INT64_MAX)};
  std::string sql = "SELECT ord, doc FROM builds WHERE ord < $1";
  if (!statuses.empty()) sql += " AND status IN (" + PgPlaceholders(2, statuses.size()) + ")";
  params.insert(params.end(), statuses.begin(), statuses.end());
  if (!model.empty()) {
    params.push_back(model);
    const std::string m = "$" + std::to_string(params.size());
    sql += " AND (strpos(COALESCE(doc::json ->> 'model', ''), " + m + ") > 0 OR strpos(COALESCE(doc::json -> "
           "'request' ->> 'simulate', ''), " + m + ") > 0)";
  }
  params.push_back(std::to_string(limit + 1));
  sql += " ORDER BY ord DESC LIMIT $" + std::to_string(params.size());
  PgReply r = Run(sql.c_str(), params);
  if (!r.ok()) return LastError();
  std::vector<std::pair<int64_t, std::string>> rows;
  for (int i = 0; i < r.rows(); ++i) rows.emplace_back(r.Int(i, 0), r.Text(i, 1));
  return PageOf(std::move(rows), limit);
}

Result<std::vector<std::string>> PostgresStore::WithStatus(const std::vector<std::string>& statuses) {
  std::vector<std::string> docs;
  if (statuses.empty()) return docs;
  if (!Ready()) return LastError();
  const std::string sql =
      "SELECT doc FROM builds WHERE status IN (" + PgPlaceholders(1, statuses.size()) + ") ORDER BY ord";
  PgReply r = Run(sql.c_str(), statuses);
  if (!r.ok()) return LastError();
  for (int i = 0; i < r.rows(); ++i) docs.push_back(r.Text(i, 0));
  return docs;
}

namespace {
constexpr size_t kEventsPerInsert = 500;  // 1001 parameters a statement, well under 65535
constexpr size_t kEventsPerRead = 1000;   // ForEachEvent's page: bounded memory for long logs
}  // namespace

Status PostgresStore::AppendEvents(const std::string& id, const std::vector<StoredEvent>& events) {
  if (events.empty()) return OkStatus();
  if (!Ready()) return LastError();
  const bool one_statement = events.size() <= kEventsPerInsert;  // atomic without BEGIN
  if (!one_statement && !Command("BEGIN")) return LastError();
  for (size_t i = 0; i < events.size(); i += kEventsPerInsert) {
    const size_t count = std::min(kEventsPerInsert, events.size() - i);
    const uint64_t notify_seq = i + count == events.size() ? events.back().seq : 0;  // once, with the last chunk
    if (!AppendChunk(id, &events[i], count, notify_seq)) return Done(RollbackAfterFailure());
  }
  return Done(one_statement || Command("COMMIT") || RollbackAfterFailure());
}

bool PostgresStore::AppendChunk(const std::string& id, const StoredEvent* first, size_t count,
                                uint64_t notify_seq) {
  std::string sql = "INSERT INTO events(build_id, seq, json) VALUES ";
  Params params{id};
  for (size_t i = 0; i < count; ++i) {
    sql += (i ? ",($1," : "($1,") + PgPlaceholders(params.size() + 1, 2) + ")";
    params.push_back(SeqParam(first[i].seq));
    params.push_back(first[i].json);
  }
  sql += " ON CONFLICT DO NOTHING";  // a seq stored already keeps its event, as in SQLite
  if (notify_seq > 0) {
    params.push_back(SeqParam(notify_seq));
    sql = "WITH stored AS (" + sql + ") SELECT pg_notify('trtwatch_events', $1 || ' ' || $" +
          std::to_string(params.size()) + "::text)";
  }
  return Command(sql.c_str(), params);
}

Result<bool> PostgresStore::AppendEventsFenced(const std::string& id, const std::vector<StoredEvent>& events,
                                               int64_t generation, bool finish) {
  if (events.empty()) return true;
  if (!Ready()) return LastError();
  const bool one_statement = events.size() <= kEventsPerInsert;  // atomic without BEGIN
  if (!one_statement && !Command("BEGIN")) return LastError();
  for (size_t i = 0; i < events.size(); i += kEventsPerInsert) {
    const size_t count = std::min(kEventsPerInsert, events.size() - i);
    const bool last = i + count == events.size();
    const FenceCheck chunk = FencedChunk(id, &events[i], count, generation, last && finish, last);
    if (chunk != FenceCheck::kWritten) {
      RollbackAfterFailure();
      if (chunk == FenceCheck::kRefused) return false;
      return LastError();
    }
  }
  if (!one_statement && !Command("COMMIT")) return RollbackAfterFailure(), LastError();
  return true;
}

// One statement: the fence (the build's row locked, its generation compared, no
// build_finish stored yet), the events inserted only if it held, the batch announced.
// The row lock orders it with a claim of the build: a claim that committed first makes
// the generation differ; one that comes after waits for this write and sees it.
PostgresStore::FenceCheck PostgresStore::FencedChunk(const std::string& id, const StoredEvent* first, size_t count,
                                                     int64_t generation, bool finish, bool notify) {
  Params params{id, std::to_string(generation), finish ? SeqParam(first[count - 1].seq) : ""};
  std::string values;
  for (size_t i = 0; i < count; ++i) {
    values += (i ? ",(" : "(") + PgPlaceholders(params.size() + 1, 2) + ")";
    params.push_back(SeqParam(first[i].seq));
    params.push_back(first[i].json);
  }
  std::string result = "1";
  if (notify) {
    params.push_back(SeqParam(first[count - 1].seq));
    result = "pg_notify('trtwatch_events', $1 || ' ' || $" + std::to_string(params.size()) + "::text)";
  }
  const std::string sql =
      "WITH fence AS (UPDATE builds SET finish_seq = NULLIF($3, '')::bigint WHERE id = $1 AND lease_gen = "
      "$2::bigint AND finish_seq IS NULL RETURNING 1), stored AS (INSERT INTO events(build_id, seq, json) "
      "SELECT $1, v.seq::bigint, v.json FROM (VALUES " + values + ") AS v(seq, json), fence "
      "ON CONFLICT DO NOTHING RETURNING 1) SELECT " + result + " FROM fence";
  PgReply r = Run(sql.c_str(), params);
  if (!r.ok()) return FenceCheck::kFailed;
  return r.rows() > 0 ? FenceCheck::kWritten : FenceCheck::kRefused;
}

Result<bool> PostgresStore::PutFenced(const std::string& id, const std::string& status, const std::string& doc,
                                      int64_t generation) {
  if (!Ready()) return LastError();
  PgReply r = Run("WITH stored AS (UPDATE builds SET status = $2, doc = $3 WHERE id = $1 AND lease_gen = $4::bigint "
                  "AND (status IN ('queued', 'running', 'cancelling') OR doc = $3) RETURNING 1) "
                  "SELECT pg_notify('trtwatch_records', $1) FROM stored",
                  {id, status, doc, std::to_string(generation)});
  if (!r.ok()) return LastError();
  return r.rows() > 0;
}

Status PostgresStore::ForEachEvent(const std::string& id, uint64_t after,
                                   const std::function<void(const StoredEvent&)>& fn) {
  for (uint64_t from = after;;) {
    Result<std::vector<StoredEvent>> page = EventsPage(id, from, UINT64_MAX, static_cast<int>(kEventsPerRead));
    if (!page.ok()) return page.status();
    for (const StoredEvent& e : *page) fn(e);
    if (page->size() < kEventsPerRead) return OkStatus();
    from = page->back().seq;
  }
}

Result<std::vector<StoredEvent>> PostgresStore::EventsPage(const std::string& id, uint64_t after, uint64_t up_to,
                                                           int limit) {
  if (!Ready()) return LastError();
  PgReply r = Run("SELECT seq, json FROM events WHERE build_id = $1 AND seq > $2 AND seq <= $3 ORDER BY seq LIMIT $4",
                  {id, SeqParam(after), SeqParam(up_to), std::to_string(limit)});
  if (!r.ok()) return LastError();
  std::vector<StoredEvent> page;
  for (int i = 0; i < r.rows(); ++i) page.push_back({static_cast<uint64_t>(r.Int(i, 0)), r.Text(i, 1)});
  return page;
}

Result<uint64_t> PostgresStore::LastSeq(const std::string& id) {
  if (!Ready()) return LastError();
  PgReply r = Run("SELECT COALESCE(MAX(seq), 0) FROM events WHERE build_id = $1", {id});
  if (!r.ok()) return LastError();
  return static_cast<uint64_t>(r.Int(0, 0));
}

Status PostgresStore::Probe() {
  return Done(Ready() && Command("INSERT INTO health(k, checked) VALUES(1, now()) "
                                 "ON CONFLICT(k) DO UPDATE SET checked = EXCLUDED.checked"));
}

Result<std::vector<std::string>> PostgresStore::Prune(const std::vector<std::string>& final_statuses,
                                                      const std::string& finished_before, int64_t keep_newest) {
  std::vector<std::string> removed;
  if (!PrunePolicyGiven(final_statuses, finished_before, keep_newest)) return removed;
  if (!Ready()) return LastError();
  Params params(final_statuses);
  const std::string finished = "status IN (" + PgPlaceholders(1, final_statuses.size()) + ")";
  std::string sql = "SELECT id FROM builds WHERE " + finished + " AND (false";
  if (!finished_before.empty()) {  // RFC 3339 times of one format: byte order ("C") is time order
    params.push_back(finished_before);
    sql += " OR (doc::json ->> 'finished_at') COLLATE \"C\" < $" + std::to_string(params.size());
  }
  if (keep_newest > 0) {
    params.push_back(std::to_string(keep_newest));
    sql += " OR ord NOT IN (SELECT ord FROM builds WHERE " + finished + " ORDER BY ord DESC LIMIT $" +
           std::to_string(params.size()) + ")";
  }
  sql += ") ORDER BY ord FOR UPDATE";
  if (!Command("BEGIN")) return LastError();
  PgReply r = Run(sql.c_str(), params);
  for (int i = 0; r.ok() && i < r.rows(); ++i) removed.push_back(r.Text(i, 0));
  bool ok = r.ok();
  for (size_t i = 0; ok && i < removed.size(); ++i) {
    ok = Command("DELETE FROM events WHERE build_id = $1", {removed[i]}) &&
         Command("DELETE FROM builds WHERE id = $1", {removed[i]});
  }
  if (ok && Command("COMMIT")) return removed;
  return Done(RollbackAfterFailure());
}

// ---- the history ----

Status PostgresStore::PutHistory(const HistoryRow& row) {
  if (!Ready()) return LastError();
  // Fenced (lease_generation > 0): the build's row is locked and its generation compared
  // in the same statement.
  PgReply r = Run("WITH fence AS (SELECT 1 FROM builds WHERE $8::bigint > 0 AND id = $1 AND lease_gen = $8::bigint "
                  "FOR SHARE) INSERT INTO history(build_id, key, model, backend, status, finished_at, entry) "
                  "SELECT $1, $2, $3, $4, $5, $6::bigint, $7 WHERE $8::bigint = 0 OR EXISTS (SELECT 1 FROM fence) "
                  "ON CONFLICT(build_id) DO UPDATE SET key = EXCLUDED.key, model = EXCLUDED.model, "
                  "backend = EXCLUDED.backend, status = EXCLUDED.status, finished_at = EXCLUDED.finished_at, "
                  "entry = EXCLUDED.entry RETURNING 1",
                  {row.build, row.key, row.model, row.backend, row.status, std::to_string(row.finished_at),
                   row.entry, std::to_string(row.lease_generation)});
  if (!r.ok()) return LastError();
  return r.rows() > 0 ? OkStatus() : Status::Error(kHistoryFenced);
}

Result<std::vector<std::string>> PostgresStore::History(const HistoryQuery& query) {
  if (!Ready()) return LastError();
  Params params{std::to_string(query.finished_after)};
  std::string sql = "SELECT entry FROM history WHERE finished_at >= $1";
  const auto add = [&](const std::string& value, const char* condition_before, const char* condition_after) {
    if (value.empty()) return;
    params.push_back(value);
    sql += std::string(condition_before) + std::to_string(params.size()) + condition_after;
  };
  add(query.build, " AND build_id = $", "");
  add(query.model, " AND strpos(model, $", ") > 0");
  add(query.key, " AND key = $", "");
  add(query.backend, " AND backend = $", "");
  add(query.status, " AND status = $", "");
  params.push_back(std::to_string(query.limit));
  sql += " ORDER BY finished_at DESC, ord DESC LIMIT $" + std::to_string(params.size());
  PgReply r = Run(sql.c_str(), params);
  if (!r.ok()) return Status::Error(r.error);
  std::vector<std::string> entries;
  for (int i = 0; i < r.rows(); ++i) entries.push_back(r.Text(i, 0));
  return entries;
}

Result<int64_t> PostgresStore::PruneHistory(int64_t finished_before, int64_t keep_newest) {
  if (finished_before <= 0 && keep_newest <= 0) return int64_t{0};
  if (!Ready()) return LastError();
  PgReply r = Run("WITH gone AS (DELETE FROM history WHERE ($1::bigint > 0 AND finished_at < $1::bigint) OR "
                  "($2::bigint > 0 AND ord NOT IN (SELECT ord FROM history ORDER BY finished_at DESC, ord DESC "
                  "LIMIT $2::bigint)) RETURNING 1) SELECT count(*) FROM gone",
                  {std::to_string(finished_before), std::to_string(keep_newest)});
  if (!r.ok()) return LastError();
  return int64_t{r.Int(0, 0)};
}

// ---- the change feed (builds/stores/change_feed.h) ----

int PostgresStore::Listen(std::string* error) {
  Close();
  listen_ = NewSession();
  if (!listen_) return *error = last_error_, -1;
  std::unique_ptr<PGresult, decltype(&PQclear)> r(PQexec(listen_, "LISTEN trtwatch_events; LISTEN trtwatch_records"),
                                                  &PQclear);
  if (PQresultStatus(r.get()) != PGRES_COMMAND_OK || PQsetnonblocking(listen_, 1) != 0) {
    *error = "cannot listen on " + name_ + ": " + LibpqText(PQerrorMessage(listen_));
    Close();
    return -1;
  }
  return PQsocket(listen_);
}

bool PostgresStore::Drain(std::vector<StoreChange>* changes) {
  changes->clear();
  if (!listen_ || PQconsumeInput(listen_) == 0 || PQstatus(listen_) != CONNECTION_OK) return false;
  const int own = conn_ ? PQbackendPID(conn_) : 0;  // this store's writes: the manager knows them
  while (PGnotify* note = PQnotifies(listen_)) {
    const std::unique_ptr<PGnotify, decltype(&PQfreemem)> owned(note, &PQfreemem);
    const std::string channel = note->relname ? note->relname : "";
    StoreChange change;
    const bool events = channel == "trtwatch_events";
    if (note->be_pid == own || (!events && channel != "trtwatch_records")) continue;
    if (ParseStoreChange(events ? StoreChange::Kind::kEvents : StoreChange::Kind::kRecord,
                         note->extra ? note->extra : "", &change)) {
      changes->push_back(std::move(change));
    }
  }
  return true;
}

void PostgresStore::Close() {
  PQfinish(listen_);
  listen_ = nullptr;
}

}  // namespace trtwatch::builds
