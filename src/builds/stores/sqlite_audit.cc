// SqliteStore's audit trail (builds/audit_entry.h): the table `audit` of schema step 5.
#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <vector>

#include "builds/stores/sqlite_statement.h"
#include "builds/stores/sqlite_store.h"

namespace trtwatch::builds {

Result<int64_t> SqliteStore::AppendAudit(const AuditEntry& entry) {
  if (Status checked = CheckAuditEntry(entry); !checked.ok()) return checked;
  Stmt s(db_, "INSERT INTO audit(at, user_name, action, target, detail) VALUES(?, ?, ?, ?, ?)");
  if (!s.ok()) return LastError();
  s.Int(1, entry.at);
  s.Text(2, entry.user);
  s.Text(3, entry.action);
  s.Text(4, entry.target);
  s.Text(5, entry.detail);
  if (s.Step() != SQLITE_DONE) return LastError();
  return int64_t{sqlite3_last_insert_rowid(db_)};
}

Result<AuditEntries> SqliteStore::AuditPage(const AuditQuery& query) {
  if (Status checked = CheckAuditQuery(query); !checked.ok()) return checked;
  std::string sql = "SELECT seq, at, user_name, action, target, detail FROM audit WHERE seq < ?1";
  if (!query.user.empty()) sql += " AND user_name = ?2";
  if (!query.action.empty()) sql += " AND action = ?3";
  // substr and length count characters alike: a prefix test without LIKE's wildcards.
  if (!query.target_prefix.empty()) sql += " AND substr(target, 1, length(?4)) = ?4";
  sql += " ORDER BY seq DESC LIMIT ?5";
  Stmt s(db_, sql.c_str());
  if (!s.ok()) return LastError();
  s.Int(1, query.before > 0 ? query.before : INT64_MAX);
  if (!query.user.empty()) s.Text(2, query.user);
  if (!query.action.empty()) s.Text(3, query.action);
  if (!query.target_prefix.empty()) s.Text(4, query.target_prefix);
  s.Int(5, query.limit + 1);
  std::vector<AuditEntry> rows;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    rows.push_back({s.ColInt(0), s.ColInt(1), s.ColText(2), s.ColText(3), s.ColText(4), s.ColText(5)});
  }
  if (rc != SQLITE_DONE) return LastError();
  return AuditPageOf(std::move(rows), query.limit);
}

Result<int64_t> SqliteStore::PruneAudit(int64_t before_unix) {
  if (before_unix <= 0) return int64_t{0};
  Stmt s(db_, "DELETE FROM audit WHERE at < ?");
  if (!s.ok()) return LastError();
  s.Int(1, before_unix);
  if (s.Step() != SQLITE_DONE) return LastError();
  return int64_t{sqlite3_changes(db_)};
}

}  // namespace trtwatch::builds
