// SqliteStore's build queue (builds/stores/build_queue.h): one replica, one process.
#include <sqlite3.h>

#include <string>
#include <vector>

#include "builds/stores/sqlite_statement.h"
#include "builds/stores/sqlite_store.h"

namespace trtwatch::builds {

namespace {

constexpr const char* kSqliteLeaseFromNow = "julianday('now') + ?2 / 86400.0";

// The rows of a claim (ord, doc, lease generation[, previous owner]), oldest first; false
// on an error.
bool ClaimedRows(Stmt& s, std::vector<ClaimedBuild>* builds) {
  std::vector<std::pair<int64_t, ClaimedBuild>> rows;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    ClaimedBuild build{s.ColText(1), sqlite3_column_count(s.get()) > 3 ? s.ColText(3) : "", s.ColInt(2)};
    rows.push_back({s.ColInt(0), std::move(build)});
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& row : rows) builds->push_back(std::move(row.second));
  return rc == SQLITE_DONE;
}

}  // namespace

template <typename Result>
Result SqliteStore::QueueError() {
  const std::string why = sqlite3_errmsg(db_);
  if (!sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  return QueueFailed<Result>(why);
}

QueueResult SqliteStore::AddClaimed(const std::string& id, const std::string& doc, const std::string& replica,
                                    double lease_seconds) {
  const std::string sql = std::string("INSERT INTO builds(id, status, doc, owner, lease_until, lease_gen) "
                                      "VALUES(?3, 'queued', ?4, ?1, ") + kSqliteLeaseFromNow + ", " +
                          std::to_string(kFirstLeaseGeneration) + ")";
  Stmt s(db_, sql.c_str());
  if (!s.ok()) return QueueError<QueueResult>();
  s.Text(1, replica);
  sqlite3_bind_double(s.get(), 2, lease_seconds);
  s.Text(3, id);
  s.Text(4, doc);
  if (s.Step() != SQLITE_DONE) return QueueError<QueueResult>();
  return QueueDone<QueueResult>();
}

ClaimResult SqliteStore::ClaimQueued(const std::string& replica, int count, double lease_seconds) {
  if (count <= 0) return QueueDone<ClaimResult>();
  const std::string sql = std::string("UPDATE builds SET owner = ?1, lease_gen = lease_gen + 1, lease_until = ") +
                          kSqliteLeaseFromNow + " WHERE ord IN (SELECT ord FROM builds WHERE status = 'queued' AND "
                          "owner IS NULL ORDER BY ord LIMIT ?3) RETURNING ord, doc, lease_gen";
  Stmt s(db_, sql.c_str());
  if (!s.ok()) return QueueError<ClaimResult>();
  s.Text(1, replica);
  sqlite3_bind_double(s.get(), 2, lease_seconds);
  s.Int(3, count);
  auto claimed = QueueDone<ClaimResult>();
  if (!ClaimedRows(s, &claimed.builds)) return QueueError<ClaimResult>();
  return claimed;
}

ClaimResult SqliteStore::ClaimQueuedBuild(const std::string& id, const std::string& replica, double lease_seconds) {
  const std::string sql = std::string("UPDATE builds SET owner = ?1, lease_gen = lease_gen + 1, lease_until = ") +
                          kSqliteLeaseFromNow +
                          " WHERE id = ?3 AND status = 'queued' AND owner IS NULL RETURNING ord, doc, lease_gen";
  Stmt s(db_, sql.c_str());
  if (!s.ok()) return QueueError<ClaimResult>();
  s.Text(1, replica);
  sqlite3_bind_double(s.get(), 2, lease_seconds);
  s.Text(3, id);
  auto claimed = QueueDone<ClaimResult>();
  if (!ClaimedRows(s, &claimed.builds)) return QueueError<ClaimResult>();
  return claimed;
}

CountResult SqliteStore::CountQueued() {
  Stmt s(db_, "SELECT count(*) FROM builds WHERE status = 'queued' AND owner IS NULL");
  if (!s.ok() || s.Step() != SQLITE_ROW) return QueueError<CountResult>();
  auto counted = QueueDone<CountResult>();
  counted.count = s.ColInt(0);
  return counted;
}

RenewResult SqliteStore::RenewLeases(const std::string& replica, double lease_seconds) {
  const std::string sql = std::string("UPDATE builds SET lease_until = ") + kSqliteLeaseFromNow +
                          " WHERE owner = ?1 AND status IN ('queued', 'running', 'cancelling') RETURNING id";
  Stmt s(db_, sql.c_str());
  if (!s.ok()) return QueueError<RenewResult>();
  s.Text(1, replica);
  sqlite3_bind_double(s.get(), 2, lease_seconds);
  auto renewed = QueueDone<RenewResult>();
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) renewed.ids.push_back(s.ColText(0));
  if (rc != SQLITE_DONE) return QueueError<RenewResult>();
  return renewed;
}

// One process serves the data dir: at start every running build is an orphan.
ClaimResult SqliteStore::ClaimOrphans(const std::string& replica, double lease_seconds, bool at_start) {
  if (Status begun = Exec("BEGIN IMMEDIATE"); !begun.ok()) return QueueFailed<ClaimResult>(begun.error());
  const char* lapsed = "(?4 OR owner IS NULL OR lease_until < julianday('now'))";
  {
    Stmt requeue(db_, (std::string("UPDATE builds SET owner = NULL, lease_until = NULL WHERE status = 'queued' "
                                   "AND owner IS NOT NULL AND ") + lapsed).c_str());
    if (!requeue.ok()) return QueueError<ClaimResult>();
    requeue.Int(4, at_start ? 1 : 0);
    if (requeue.Step() != SQLITE_DONE) return QueueError<ClaimResult>();
  }
  auto claimed = QueueDone<ClaimResult>();
  {
    Stmt orphans(db_, (std::string("SELECT ord, doc, lease_gen + 1, COALESCE(owner, '') FROM builds WHERE status IN ('running', "
                                   "'cancelling') AND ") + lapsed).c_str());
    if (!orphans.ok()) return QueueError<ClaimResult>();
    orphans.Int(4, at_start ? 1 : 0);
    if (!ClaimedRows(orphans, &claimed.builds)) return QueueError<ClaimResult>();
  }
  {
    Stmt own(db_, (std::string("UPDATE builds SET owner = ?1, lease_gen = lease_gen + 1, lease_until = ") +
                   kSqliteLeaseFromNow +
                   " WHERE status IN ('running', 'cancelling') AND " + lapsed).c_str());
    if (!own.ok()) return QueueError<ClaimResult>();
    own.Text(1, replica);
    sqlite3_bind_double(own.get(), 2, lease_seconds);
    own.Int(4, at_start ? 1 : 0);
    if (own.Step() != SQLITE_DONE) return QueueError<ClaimResult>();
  }
  if (!Exec("COMMIT").ok()) return QueueError<ClaimResult>();
  return claimed;
}

ConditionalResult SqliteStore::RequestCancel(const std::string& id, const std::string& request) {
  Stmt s(db_, "UPDATE builds SET cancel_request = ?2 WHERE id = ?1 AND owner IS NOT NULL "
              "AND status IN ('queued', 'running', 'cancelling')");
  if (!s.ok()) return QueueError<ConditionalResult>();
  s.Text(1, id);
  s.Text(2, request);
  if (s.Step() != SQLITE_DONE) return QueueError<ConditionalResult>();
  auto written = QueueDone<ConditionalResult>();
  written.applied = sqlite3_changes(db_) > 0;
  return written;
}

CancelRequestsResult SqliteStore::TakeCancelRequests(const std::string& replica) {
  if (Status begun = Exec("BEGIN IMMEDIATE"); !begun.ok()) return QueueFailed<CancelRequestsResult>(begun.error());
  auto taken = QueueDone<CancelRequestsResult>();
  {
    Stmt select(db_, "SELECT id, cancel_request FROM builds WHERE owner = ?1 AND cancel_request IS NOT NULL");
    if (!select.ok()) return QueueError<CancelRequestsResult>();
    select.Text(1, replica);
    int rc;
    while ((rc = select.Step()) == SQLITE_ROW) taken.requests.push_back({select.ColText(0), select.ColText(1)});
    if (rc != SQLITE_DONE) return QueueError<CancelRequestsResult>();
    Stmt clear(db_, "UPDATE builds SET cancel_request = NULL WHERE owner = ?1 AND cancel_request IS NOT NULL");
    if (!clear.ok()) return QueueError<CancelRequestsResult>();
    clear.Text(1, replica);
    if (clear.Step() != SQLITE_DONE) return QueueError<CancelRequestsResult>();
  }
  if (!Exec("COMMIT").ok()) return QueueError<CancelRequestsResult>();
  return taken;
}

}  // namespace trtwatch::builds
