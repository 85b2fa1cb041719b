// PostgresStore's build queue (builds/stores/build_queue.h): claims with FOR UPDATE
// SKIP LOCKED, leases on the database's clock, cancel requests left in the row.
#include <libpq-fe.h>

#include <string>
#include <vector>

#include "builds/stores/postgres_reply.h"
#include "builds/stores/postgres_store.h"

namespace trtwatch::builds {

namespace {

std::string LeaseParam(double seconds) { return std::to_string(seconds); }

constexpr const char* kLeaseFromNow = "now() + $2::float8 * interval '1 second'";

}  // namespace

template <typename Result>
Result PostgresStore::Failed() {
  return QueueFailed<Result>(last_error_);
}

ClaimResult PostgresStore::Claim(const char* sql, const Params& params) {
  if (!Ready()) return Failed<ClaimResult>();
  PgReply r = Run(sql, params);
  if (!r.ok()) return Failed<ClaimResult>();
  std::vector<std::pair<int64_t, ClaimedBuild>> rows;  // RETURNING has no order: by creation
  for (int i = 0; i < r.rows(); ++i) {
    ClaimedBuild build{r.Text(i, 1), PQnfields(r.result.get()) > 3 ? r.Text(i, 3) : "", r.Int(i, 2)};
    rows.push_back({r.Int(i, 0), std::move(build)});
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  auto claimed = QueueDone<ClaimResult>();
  for (auto& row : rows) claimed.builds.push_back(std::move(row.second));
  return claimed;
}

QueueResult PostgresStore::AddClaimed(const std::string& id, const std::string& doc, const std::string& replica,
                                      double lease_seconds) {
  if (!Ready()) return Failed<QueueResult>();
  const std::string sql = std::string("WITH stored AS (INSERT INTO builds(id, status, doc, owner, lease_until, "
                                      "lease_gen) VALUES($3, 'queued', $4, $1, ") +
                          kLeaseFromNow + ", " + std::to_string(kFirstLeaseGeneration) +
                          ") RETURNING 1) SELECT pg_notify('trtwatch_records', $3)";
  if (!Command(sql.c_str(), {replica, LeaseParam(lease_seconds), id, doc})) return Failed<QueueResult>();
  return QueueDone<QueueResult>();
}

ClaimResult PostgresStore::ClaimQueued(const std::string& replica, int count, double lease_seconds) {
  if (count <= 0) return QueueDone<ClaimResult>();
  const std::string sql = std::string("UPDATE builds SET owner = $1, lease_gen = lease_gen + 1, lease_until = ") +
                          kLeaseFromNow + " WHERE ord IN (SELECT ord FROM builds WHERE status = 'queued' AND owner IS NULL "
                          "ORDER BY ord LIMIT $3 FOR UPDATE SKIP LOCKED) RETURNING ord, doc, lease_gen";
  return Claim(sql.c_str(), {replica, LeaseParam(lease_seconds), std::to_string(count)});
}

ClaimResult PostgresStore::ClaimQueuedBuild(const std::string& id, const std::string& replica,
                                            double lease_seconds) {
  const std::string sql = std::string("UPDATE builds SET owner = $1, lease_gen = lease_gen + 1, lease_until = ") +
                          kLeaseFromNow +
                          " WHERE id = $3 AND status = 'queued' AND owner IS NULL RETURNING ord, doc, lease_gen";
  return Claim(sql.c_str(), {replica, LeaseParam(lease_seconds), id});
}

CountResult PostgresStore::CountQueued() {
  if (!Ready()) return Failed<CountResult>();
  PgReply r = Run("SELECT count(*) FROM builds WHERE status = 'queued' AND owner IS NULL");
  if (!r.ok()) return Failed<CountResult>();
  auto counted = QueueDone<CountResult>();
  counted.count = r.Int(0, 0);
  return counted;
}

RenewResult PostgresStore::RenewLeases(const std::string& replica, double lease_seconds) {
  if (!Ready()) return Failed<RenewResult>();
  const std::string sql = std::string("UPDATE builds SET lease_until = ") + kLeaseFromNow +
                          " WHERE owner = $1 AND status IN ('queued', 'running', 'cancelling') RETURNING id";
  PgReply r = Run(sql.c_str(), {replica, LeaseParam(lease_seconds)});
  if (!r.ok()) return Failed<RenewResult>();
  auto renewed = QueueDone<RenewResult>();
  for (int i = 0; i < r.rows(); ++i) renewed.ids.push_back(r.Text(i, 0));
  return renewed;
}

ClaimResult PostgresStore::ClaimOrphans(const std::string& replica, double lease_seconds, bool at_start) {
  if (!Ready()) return Failed<ClaimResult>();
  const std::string mine = at_start ? "true" : "false";
  // Claimed but never started (the owner died between its claim and its start): queued again.
  if (!Command("UPDATE builds SET owner = NULL, lease_until = NULL WHERE status = 'queued' AND owner IS NOT NULL "
               "AND (lease_until < now() OR ($2::boolean AND owner = $1))",
               {replica, mine})) {
    return Failed<ClaimResult>();
  }
  const std::string sql =
      std::string("WITH o AS (SELECT ord, owner FROM builds WHERE status IN ('running', 'cancelling') "
                  "AND (owner IS NULL OR lease_until < now() OR ($3::boolean AND owner = $1)) "
                  "ORDER BY ord FOR UPDATE SKIP LOCKED) "
                  "UPDATE builds b SET owner = $1, lease_gen = b.lease_gen + 1, lease_until = ") +
      kLeaseFromNow + " FROM o WHERE b.ord = o.ord RETURNING b.ord, b.doc, b.lease_gen, COALESCE(o.owner, '')";
  return Claim(sql.c_str(), {replica, LeaseParam(lease_seconds), mine});
}

ConditionalResult PostgresStore::RequestCancel(const std::string& id, const std::string& request) {
  if (!Ready()) return Failed<ConditionalResult>();
  PgReply r = Run("UPDATE builds SET cancel_request = $2 WHERE id = $1 AND owner IS NOT NULL "
                  "AND status IN ('queued', 'running', 'cancelling') RETURNING id",
                  {id, request});
  if (!r.ok()) return Failed<ConditionalResult>();
  auto written = QueueDone<ConditionalResult>();
  written.applied = r.rows() > 0;
  return written;
}

CancelRequestsResult PostgresStore::TakeCancelRequests(const std::string& replica) {
  if (!Ready()) return Failed<CancelRequestsResult>();
  PgReply r = Run("WITH t AS (SELECT ord, cancel_request FROM builds WHERE owner = $1 AND cancel_request IS NOT NULL "
                  "FOR UPDATE) UPDATE builds b SET cancel_request = NULL FROM t WHERE b.ord = t.ord "
                  "RETURNING b.id, t.cancel_request",
                  {replica});
  if (!r.ok()) return Failed<CancelRequestsResult>();
  auto taken = QueueDone<CancelRequestsResult>();
  for (int i = 0; i < r.rows(); ++i) taken.requests.push_back({r.Text(i, 0), r.Text(i, 1)});
  return taken;
}

}  // namespace trtwatch::builds
