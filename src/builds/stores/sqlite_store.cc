#include "builds/stores/sqlite_store.h"

#include <sqlite3.h>

#include <algorithm>
#include <iterator>

#include "builds/stores/schema_migrations.h"
#include "builds/stores/sqlite_statement.h"
#include "builds/stores/store_support.h"
#include "platform/file_access.h"
#include "platform/file_lock.h"

namespace trtwatch::builds {

namespace {

std::string Placeholders(size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += i ? ",?" : "?";
  return s;
}

// The data dir for this process alone (see the header): the lock, or the refusal,
// which names the holder's PID when another process has it.
struct DataDirClaim {
  std::unique_ptr<FileLock> lock;
  StoreOpening refused;
};

DataDirClaim ClaimDataDir(const std::string& dir) {
  using Outcome = StoreOpening::Outcome;
  TryLockResult claim = FileLock::TryAcquire(dir + "/trtwatch.lock");
  switch (claim.outcome) {
    case TryLockResult::Outcome::kAcquired:
      return {std::move(claim.lock), {}};
    case TryLockResult::Outcome::kHeld:
      return {nullptr, StoreOpening::Failed(
                           Outcome::kInUse,
                           "the data dir \"" + dir + "\" is in use by another trtwatch service (" +
                               (claim.holder_pid > 0 ? "PID " + std::to_string(claim.holder_pid)
                                                     : std::string("PID not known yet")) +
                               "); one process serves a data dir: stop that one, or give this one another --data-dir")};
    case TryLockResult::Outcome::kError:
      break;
  }
  return {nullptr, StoreOpening::Failed(Outcome::kUnavailable, "cannot lock --data-dir \"" + dir + "\": " + claim.error)};
}

// Narrows `path` to this user; empty, or why it could not be done.
std::string MakePrivateOrSayWhy(const std::string& path) {
  const PrivacyResult r = KeepPrivate(path);
  return r.outcome == PrivacyResult::Outcome::kPrivate ? std::string() : r.error;
}

// As MakePrivateOrSayWhy, for a file that may be absent (the -wal and -shm files come and go).
std::string MakePrivateIfThere(const std::string& path) {
  return InspectPath(path).kind == PathKind::kMissing ? std::string() : MakePrivateOrSayWhy(path);
}

// The schema, one step per version (builds/stores/schema_migrations.h); a step is never edited
// once released. Step 1 is the schema of the release before versions were kept, which
// left user_version 0: its IF NOT EXISTS lets it run over such a database unchanged,
// records kept, and the database is then marked version 1.
constexpr const char* kSqliteSteps[] = {
    "CREATE TABLE IF NOT EXISTS builds ("
    "  ord INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  id TEXT NOT NULL UNIQUE,"
    "  status TEXT NOT NULL,"
    "  doc TEXT NOT NULL);"
    "CREATE INDEX IF NOT EXISTS builds_status ON builds(status, ord);"
    "CREATE TABLE IF NOT EXISTS events ("
    "  build_id TEXT NOT NULL,"
    "  seq INTEGER NOT NULL,"
    "  json TEXT NOT NULL,"
    "  PRIMARY KEY (build_id, seq)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS health (k INTEGER PRIMARY KEY, checked REAL NOT NULL);",
    // 2: the queue's columns (builds/stores/build_queue.h), as in PostgreSQL; the lease
    // is a julianday.
    "ALTER TABLE builds ADD COLUMN owner TEXT;"
    "ALTER TABLE builds ADD COLUMN lease_until REAL;"
    "ALTER TABLE builds ADD COLUMN cancel_request TEXT;"
    "CREATE INDEX builds_owner ON builds(owner) WHERE owner IS NOT NULL;",
    // 3: the build history (docs/history.md), one entry per finished build.
    "CREATE TABLE history ("
    "  ord INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  build_id TEXT NOT NULL UNIQUE,"
    "  key TEXT NOT NULL,"
    "  model TEXT NOT NULL,"
    "  backend TEXT NOT NULL,"
    "  status TEXT NOT NULL,"
    "  finished_at INTEGER NOT NULL,"
    "  entry TEXT NOT NULL);"
    "CREATE INDEX history_finished ON history(finished_at);"
    "CREATE INDEX history_key ON history(key, finished_at);",
    // 4: fencing, as in PostgreSQL (RecordStore's *Fenced writes).
    ("ALTER TABLE builds ADD COLUMN lease_gen INTEGER NOT NULL DEFAULT 0;"
     "ALTER TABLE builds ADD COLUMN finish_seq INTEGER;"),  // one step, two statements
    // 5: the audit trail (builds/audit_entry.h); AUTOINCREMENT: a pruned seq is never given again.
    ("CREATE TABLE audit ("
     "  seq INTEGER PRIMARY KEY AUTOINCREMENT,"
     "  at INTEGER NOT NULL,"
     "  user_name TEXT NOT NULL,"
     "  action TEXT NOT NULL,"
     "  target TEXT NOT NULL,"
     "  detail TEXT NOT NULL);"
     "CREATE INDEX audit_at ON audit(at);"),
};

// SQLite's side of a migration: the version is PRAGMA user_version, the lock is the
// data dir's (one process) and BEGIN IMMEDIATE's.
class SqliteSchema final : public SchemaAccess {
 public:
  explicit SqliteSchema(sqlite3* db) : db_(db) {}
  bool Begin() override { return Exec("BEGIN IMMEDIATE"); }
  std::optional<int> ReadVersion() override {
    const std::optional<int64_t> version = Int("PRAGMA user_version");
    return version ? std::optional<int>(static_cast<int>(*version)) : std::nullopt;
  }
  bool Apply(const char* step_sql) override { return Exec(step_sql); }
  // A PRAGMA takes no bound value; `version` is this binary's own number.
  bool WriteVersion(int version) override { return Exec(("PRAGMA user_version = " + std::to_string(version)).c_str()); }
  bool Commit() override { return Exec("COMMIT"); }
  void Rollback() override {
    if (!sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  std::string error() const override { return error_; }

 private:
  bool Exec(const char* sql) {
    char* message = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) == SQLITE_OK) return true;
    error_ = message ? message : "unknown SQLite error";
    sqlite3_free(message);
    return false;
  }
  std::optional<int64_t> Int(const char* sql) {
    Stmt s(db_, sql);
    if (s.ok() && s.Step() == SQLITE_ROW) return s.ColInt(0);
    error_ = sqlite3_errmsg(db_);
    return std::nullopt;
  }
  sqlite3* db_;
  std::string error_;
};

// quick_check reads every page once: a damaged file is refused at start rather than
// served as truncated replays with 200. Empty, or the problems found.
std::string QuickCheck(sqlite3* db) {
  std::string problems;
  Stmt check(db, "PRAGMA quick_check(5)");
  int rc = SQLITE_ROW;
  while (check.ok() && (rc = check.Step()) == SQLITE_ROW) {
    const std::string line = check.ColText(0);
    if (line != "ok") problems += (problems.empty() ? "" : "; ") + line;
  }
  if (!check.ok() || rc != SQLITE_DONE) problems += (problems.empty() ? "" : "; ") + std::string(sqlite3_errmsg(db));
  return problems;
}

}  // namespace

SqliteStore::SqliteStore(std::unique_ptr<FileLock> lock, sqlite3* db) : lock_(std::move(lock)), db_(db) {}

StoreOpening SqliteStore::Open(const std::string& dir, const char* vfs) {
  using Outcome = StoreOpening::Outcome;
  if (std::string why = PrepareDataDir(dir); !why.empty()) return StoreOpening::Failed(Outcome::kUnavailable, why);
  DataDirClaim claim = ClaimDataDir(dir);
  if (!claim.lock) return std::move(claim.refused);
  const std::string path = dir + "/trtwatch.db";
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, vfs) !=
      SQLITE_OK) {
    std::string error = "cannot open \"" + path + "\": " + (db ? sqlite3_errmsg(db) : "out of memory");
    sqlite3_close(db);
    return StoreOpening::Failed(Outcome::kUnavailable, std::move(error));
  }
  std::unique_ptr<SqliteStore> store(new SqliteStore(std::move(claim.lock), db));
  // Narrowed before the schema runs: SQLite creates -wal and -shm with the database's
  // mode; files left by an older version are narrowed after it.
  if (const std::string not_private = MakePrivateOrSayWhy(path); !not_private.empty()) {
    return StoreOpening::Failed(Outcome::kUnavailable,
                                "cannot make \"" + path + "\" private to this user: " + not_private);
  }
  sqlite3_busy_timeout(db, 5000);
  if (StoreOpening refused = store->SetUp(path); refused.outcome != Outcome::kOpened) return refused;
  for (const std::string& file : {path + "-wal", path + "-shm"}) {
    if (const std::string not_private = MakePrivateIfThere(file); !not_private.empty()) {
      return StoreOpening::Failed(Outcome::kUnavailable,
                                  "cannot make \"" + file + "\" private to this user: " + not_private);
    }
  }
  if (const std::string problems = QuickCheck(db); !problems.empty()) {
    return StoreOpening::Failed(Outcome::kDamaged, "the database \"" + path + "\" is damaged (" + problems +
                                                       "); move it (and its -wal file) away to start with an empty "
                                                       "store, or restore a backup");
  }
  return StoreOpening::Opened(std::move(store));
}

StoreOpening SqliteStore::SetUp(const std::string& path) {
  using Outcome = StoreOpening::Outcome;
  const std::string not_ours = " (is it a trtwatch database? move it away or pick another --data-dir)";
  if (Status set = Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"); !set.ok()) {
    return StoreOpening::Failed(Outcome::kDamaged, "cannot set up \"" + path + "\": " + set.error() + not_ours);
  }
  SqliteSchema schema(db_);
  const MigrationResult m = Migrate(schema, kSqliteSteps);
  switch (m.outcome) {
    case MigrationResult::Outcome::kNewer:
      return StoreOpening::Failed(Outcome::kNewerSchema,
                                  NewerSchemaError("the database \"" + path + "\"", m.found,
                                                   static_cast<int>(std::size(kSqliteSteps)), "--data-dir"));
    case MigrationResult::Outcome::kFailed:
      return StoreOpening::Failed(Outcome::kDamaged, "cannot set up \"" + path + "\": " + m.error + not_ours);
    default:
      return {Outcome::kOpened, nullptr, ""};
  }
}

SqliteStore::~SqliteStore() { sqlite3_close(db_); }

Status SqliteStore::Exec(const char* sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    Status failed = Status::Error(message ? message : "unknown SQLite error");
    sqlite3_free(message);
    return failed;
  }
  return OkStatus();
}

Status SqliteStore::LastError() const { return Status::Error(sqlite3_errmsg(db_)); }

Status SqliteStore::Put(const std::string& id, const std::string& status, const std::string& doc) {
  Stmt s(db_,
         "INSERT INTO builds(id, status, doc) VALUES(?, ?, ?) "
         "ON CONFLICT(id) DO UPDATE SET status = excluded.status, doc = excluded.doc");
  if (!s.ok()) return LastError();
  s.Text(1, id);
  s.Text(2, status);
  s.Text(3, doc);
  if (s.Step() != SQLITE_DONE) return LastError();
  return OkStatus();
}

Result<std::optional<std::string>> SqliteStore::Get(const std::string& id) {
  Stmt s(db_, "SELECT doc FROM builds WHERE id = ?");
  if (!s.ok()) return LastError();
  s.Text(1, id);
  const int rc = s.Step();
  if (rc == SQLITE_DONE) return std::optional<std::string>();
  if (rc != SQLITE_ROW) return LastError();
  return std::optional<std::string>(s.ColText(0));
}

Result<RecordStore::Page> SqliteStore::List(const std::vector<std::string>& statuses, int limit, int64_t cursor,
                                            const std::string& model) {
  std::string sql = "SELECT ord, doc FROM builds WHERE ord < ?";
  if (!statuses.empty()) sql += " AND status IN (" + Placeholders(statuses.size()) + ")";
  if (!model.empty()) {
    sql += " AND (instr(COALESCE(json_extract(doc, '$.model'), ''), ?) > 0"
           " OR instr(COALESCE(json_extract(doc, '$.request.simulate'), ''), ?) > 0)";
  }
  sql += " ORDER BY ord DESC LIMIT ?";
  Stmt s(db_, sql.c_str());
  if (!s.ok()) return LastError();
  int i = 1;
  s.Int(i++, cursor > 0 ? cursor : INT64_MAX);
  for (const std::string& status : statuses) s.Text(i++, status);
  if (!model.empty()) {
    s.Text(i++, model);
    s.Text(i++, model);
  }
  s.Int(i, limit + 1);
  std::vector<std::pair<int64_t, std::string>> rows;
  while (s.Step() == SQLITE_ROW) rows.emplace_back(s.ColInt(0), s.ColText(1));
  return PageOf(std::move(rows), limit);
}

Result<std::vector<std::string>> SqliteStore::WithStatus(const std::vector<std::string>& statuses) {
  std::vector<std::string> docs;
  if (statuses.empty()) return docs;
  const std::string sql = "SELECT doc FROM builds WHERE status IN (" + Placeholders(statuses.size()) + ") ORDER BY ord";
  Stmt s(db_, sql.c_str());
  if (!s.ok()) return LastError();
  int i = 1;
  for (const std::string& status : statuses) s.Text(i++, status);
  while (s.Step() == SQLITE_ROW) docs.push_back(s.ColText(0));
  return docs;
}

// The events' rows, inside the caller's transaction (a seq stored already is kept).
Status SqliteStore::InsertEvents(const std::string& id, const std::vector<StoredEvent>& events) {
  Stmt s(db_, "INSERT OR IGNORE INTO events(build_id, seq, json) VALUES(?, ?, ?)");
  if (!s.ok()) return LastError();
  for (const StoredEvent& e : events) {
    sqlite3_reset(s.get());
    s.Text(1, id);
    s.Int(2, static_cast<int64_t>(e.seq));
    s.Text(3, e.json);
    if (s.Step() != SQLITE_DONE) return LastError();
  }
  return OkStatus();
}

Status SqliteStore::AppendEvents(const std::string& id, const std::vector<StoredEvent>& events) {
  if (events.empty()) return OkStatus();
  if (Status begun = Exec("BEGIN"); !begun.ok()) return begun;
  if (Status inserted = InsertEvents(id, events); !inserted.ok()) {
    (void)Exec("ROLLBACK");
    return inserted;
  }
  Status committed = Exec("COMMIT");
  // A failed COMMIT (disk full) may leave the transaction open: end it, or every
  // later BEGIN fails too.
  if (!committed.ok() && !sqlite3_get_autocommit(db_)) (void)Exec("ROLLBACK");
  return committed;
}

// One transaction (BEGIN IMMEDIATE: the write lock first): the fence checked and the
// build_finish marked, then the events; refused or failed, nothing stays.
Result<bool> SqliteStore::AppendEventsFenced(const std::string& id, const std::vector<StoredEvent>& events,
                                             int64_t generation, bool finish) {
  if (events.empty()) return true;
  if (Status begun = Exec("BEGIN IMMEDIATE"); !begun.ok()) return begun;
  const auto fail = [&]() -> Result<bool> {
    Status failed = LastError();
    (void)Exec("ROLLBACK");
    return failed;
  };
  {
    Stmt fence(db_, "UPDATE builds SET finish_seq = ?3 WHERE id = ?1 AND lease_gen = ?2 AND finish_seq IS NULL");
    if (!fence.ok()) return fail();
    fence.Text(1, id);
    fence.Int(2, generation);
    if (finish) fence.Int(3, static_cast<int64_t>(events.back().seq));
    if (fence.Step() != SQLITE_DONE) return fail();
    if (sqlite3_changes(db_) == 0) return (void)Exec("ROLLBACK"), false;
  }
  if (Status inserted = InsertEvents(id, events); !inserted.ok()) {
    (void)Exec("ROLLBACK");
    return inserted;
  }
  if (Status committed = Exec("COMMIT"); !committed.ok()) {
    if (!sqlite3_get_autocommit(db_)) (void)Exec("ROLLBACK");
    return committed;
  }
  return true;
}

Result<bool> SqliteStore::PutFenced(const std::string& id, const std::string& status, const std::string& doc,
                                    int64_t generation) {
  Stmt s(db_,
         "UPDATE builds SET status = ?2, doc = ?3 WHERE id = ?1 AND lease_gen = ?4 "
         "AND (status IN ('queued', 'running', 'cancelling') OR doc = ?3)");
  if (!s.ok()) return LastError();
  s.Text(1, id);
  s.Text(2, status);
  s.Text(3, doc);
  s.Int(4, generation);
  if (s.Step() != SQLITE_DONE) return LastError();
  return sqlite3_changes(db_) > 0;
}

Status SqliteStore::ForEachEvent(const std::string& id, uint64_t after,
                                 const std::function<void(const StoredEvent&)>& fn) {
  Stmt s(db_, "SELECT seq, json FROM events WHERE build_id = ? AND seq > ? ORDER BY seq");
  if (!s.ok()) return LastError();
  s.Text(1, id);
  s.Int(2, static_cast<int64_t>(after));
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) fn({static_cast<uint64_t>(s.ColInt(0)), s.ColText(1)});
  if (rc != SQLITE_DONE) return LastError();
  return OkStatus();
}

Result<std::vector<StoredEvent>> SqliteStore::EventsPage(const std::string& id, uint64_t after, uint64_t up_to,
                                                         int limit) {
  Stmt s(db_, "SELECT seq, json FROM events WHERE build_id = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?");
  if (!s.ok()) return LastError();
  s.Text(1, id);
  s.Int(2, static_cast<int64_t>(after));
  s.Int(3, static_cast<int64_t>(std::min<uint64_t>(up_to, INT64_MAX)));
  s.Int(4, limit);
  std::vector<StoredEvent> page;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) page.push_back({static_cast<uint64_t>(s.ColInt(0)), s.ColText(1)});
  if (rc != SQLITE_DONE) return LastError();
  return page;
}

Status SqliteStore::Probe() {
  Stmt s(db_, "INSERT OR REPLACE INTO health(k, checked) VALUES(1, julianday('now'))");
  if (!s.ok() || s.Step() != SQLITE_DONE) return LastError();
  return OkStatus();
}

Result<uint64_t> SqliteStore::LastSeq(const std::string& id) {
  Stmt s(db_, "SELECT MAX(seq) FROM events WHERE build_id = ?");
  if (!s.ok()) return LastError();
  s.Text(1, id);
  if (s.Step() != SQLITE_ROW) return LastError();
  return static_cast<uint64_t>(s.ColInt(0));
}

Result<std::vector<std::string>> SqliteStore::Prune(const std::vector<std::string>& final_statuses,
                                                    const std::string& finished_before, int64_t keep_newest) {
  std::vector<std::string> removed;
  if (!PrunePolicyGiven(final_statuses, finished_before, keep_newest)) return removed;
  const std::string finished = "status IN (" + Placeholders(final_statuses.size()) + ")";
  std::string sql = "SELECT id FROM builds WHERE " + finished + " AND (0";
  // RFC 3339 times of one format: the text order is the time order.
  if (!finished_before.empty()) sql += " OR json_extract(doc, '$.finished_at') < ?";
  if (keep_newest > 0) {
    sql += " OR ord NOT IN (SELECT ord FROM builds WHERE " + finished + " ORDER BY ord DESC LIMIT ?)";
  }
  sql += ")";
  if (Status begun = Exec("BEGIN"); !begun.ok()) return begun;
  auto fail = [&] {
    Status failed = LastError();
    (void)Exec("ROLLBACK");
    return failed;
  };
  {
    Stmt select(db_, sql.c_str());
    if (!select.ok()) return fail();
    int i = 1;
    for (const std::string& status : final_statuses) select.Text(i++, status);
    if (!finished_before.empty()) select.Text(i++, finished_before);
    if (keep_newest > 0) {
      for (const std::string& status : final_statuses) select.Text(i++, status);
      select.Int(i++, keep_newest);
    }
    int rc;
    while ((rc = select.Step()) == SQLITE_ROW) removed.push_back(select.ColText(0));
    if (rc != SQLITE_DONE) return fail();
  }
  for (const char* table_sql : {"DELETE FROM events WHERE build_id = ?", "DELETE FROM builds WHERE id = ?"}) {
    for (const std::string& id : removed) {
      Stmt del(db_, table_sql);
      if (!del.ok()) return fail();
      del.Text(1, id);
      if (del.Step() != SQLITE_DONE) return fail();
    }
  }
  Status committed = Exec("COMMIT");
  if (committed.ok()) return removed;
  (void)Exec("ROLLBACK");
  return committed;
}

// ---- the history ----

Status SqliteStore::PutHistory(const HistoryRow& row) {
  Stmt s(db_,
         "INSERT INTO history(build_id, key, model, backend, status, finished_at, entry) "
         "SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7 WHERE ?8 = 0 OR EXISTS (SELECT 1 FROM builds WHERE id = ?1 AND "
         "lease_gen = ?8) ON CONFLICT(build_id) DO UPDATE SET key = excluded.key, model = excluded.model, "
         "backend = excluded.backend, status = excluded.status, finished_at = excluded.finished_at, "
         "entry = excluded.entry");
  if (!s.ok()) return LastError();
  s.Text(1, row.build);
  s.Text(2, row.key);
  s.Text(3, row.model);
  s.Text(4, row.backend);
  s.Text(5, row.status);
  s.Int(6, row.finished_at);
  s.Text(7, row.entry);
  s.Int(8, row.lease_generation);
  if (s.Step() != SQLITE_DONE) return LastError();
  if (sqlite3_changes(db_) == 0) return Status::Error(kHistoryFenced);
  return OkStatus();
}

Result<std::vector<std::string>> SqliteStore::History(const HistoryQuery& query) {
  std::string sql = "SELECT entry FROM history WHERE finished_at >= ?";
  if (!query.build.empty()) sql += " AND build_id = ?";
  if (!query.model.empty()) sql += " AND instr(model, ?) > 0";
  if (!query.key.empty()) sql += " AND key = ?";
  if (!query.backend.empty()) sql += " AND backend = ?";
  if (!query.status.empty()) sql += " AND status = ?";
  sql += " ORDER BY finished_at DESC, ord DESC LIMIT ?";
  Stmt s(db_, sql.c_str());
  if (!s.ok()) return LastError();
  int i = 1;
  s.Int(i++, query.finished_after);
  for (const std::string* text : {&query.build, &query.model, &query.key, &query.backend, &query.status}) {
    if (!text->empty()) s.Text(i++, *text);
  }
  s.Int(i, query.limit);
  std::vector<std::string> entries;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) entries.push_back(s.ColText(0));
  if (rc != SQLITE_DONE) return LastError();
  return entries;
}

Result<int64_t> SqliteStore::PruneHistory(int64_t finished_before, int64_t keep_newest) {
  if (finished_before <= 0 && keep_newest <= 0) return int64_t{0};
  std::string sql = "DELETE FROM history WHERE 0";
  if (finished_before > 0) sql += " OR finished_at < ?1";
  if (keep_newest > 0) sql += " OR ord NOT IN (SELECT ord FROM history ORDER BY finished_at DESC, ord DESC LIMIT ?2)";
  Stmt s(db_, sql.c_str());
  if (!s.ok()) return LastError();
  if (finished_before > 0) s.Int(1, finished_before);
  if (keep_newest > 0) s.Int(2, keep_newest);
  if (s.Step() != SQLITE_DONE) return LastError();
  return int64_t{sqlite3_changes(db_)};
}

}  // namespace trtwatch::builds
