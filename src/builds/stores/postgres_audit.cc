// PostgresStore's audit trail (builds/audit_entry.h): the table `audit` of schema step
// 5, which the replicas of one database append to at once (an identity numbers them).
#include <libpq-fe.h>

#include <cstdint>
#include <string>
#include <vector>

#include "builds/stores/postgres_reply.h"
#include "builds/stores/postgres_store.h"

namespace trtwatch::builds {

Result<int64_t> PostgresStore::AppendAudit(const AuditEntry& entry) {
  if (Status checked = CheckAuditEntry(entry); !checked.ok()) return checked;
  if (!Ready()) return LastError();
  PgReply r = Run("INSERT INTO audit(at, user_name, action, target, detail) VALUES($1::bigint, $2, $3, $4, $5) "
                  "RETURNING seq",
                  {std::to_string(entry.at), entry.user, entry.action, entry.target, entry.detail});
  if (!r.ok()) return LastError();
  return int64_t{r.Int(0, 0)};
}

Result<AuditEntries> PostgresStore::AuditPage(const AuditQuery& query) {
  if (Status checked = CheckAuditQuery(query); !checked.ok()) return checked;
  if (!Ready()) return LastError();
  // Empty filters match all: one statement text, every value a parameter.
  PgReply r = Run("SELECT seq, at, user_name, action, target, detail FROM audit WHERE seq < $1::bigint "
                  "AND ($2::text = '' OR user_name = $2::text) AND ($3::text = '' OR action = $3::text) "
                  "AND starts_with(target, $4::text) "
                  "ORDER BY seq DESC LIMIT $5::bigint",
                  {std::to_string(query.before > 0 ? query.before : INT64_MAX), query.user, query.action,
                   query.target_prefix, std::to_string(query.limit + 1)});
  if (!r.ok()) return LastError();
  std::vector<AuditEntry> rows;
  for (int i = 0; i < r.rows(); ++i) {
    rows.push_back({r.Int(i, 0), r.Int(i, 1), r.Text(i, 2), r.Text(i, 3), r.Text(i, 4), r.Text(i, 5)});
  }
  return AuditPageOf(std::move(rows), query.limit);
}

Result<int64_t> PostgresStore::PruneAudit(int64_t before_unix) {
  if (before_unix <= 0) return int64_t{0};
  if (!Ready()) return LastError();
  PgReply r = Run("WITH gone AS (DELETE FROM audit WHERE at < $1::bigint RETURNING 1) SELECT count(*) FROM gone",
                  {std::to_string(before_unix)});
  if (!r.ok()) return LastError();
  return int64_t{r.Int(0, 0)};
}

}  // namespace trtwatch::builds
