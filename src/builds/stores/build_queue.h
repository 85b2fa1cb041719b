// BuildQueue: the builds waiting to run and the ownership of those running, kept in the
// record store so that any number of replicas (`trtwatch serve` processes on one
// PostgreSQL database) act as one service. Every record store implements it
// (RecordStore::queue()); the manager has one code path for both stores.
//
// A queued build has no owner. A replica starts builds only by claiming them (oldest
// first, each by one replica: PostgreSQL's FOR UPDATE SKIP LOCKED, SQLite's write
// lock), which makes it the owner until `lease_seconds` from now and increments the
// build's lease generation (the fence of every write about it: RecordStore's *Fenced);
// it renews the leases of the builds it runs, and a build whose lease lapsed (its owner
// was killed, paused, or lost the database) is claimed by another replica, which concludes it. A cancel for a
// build that runs elsewhere is left in the row (cancel_request) for its owner.
//
// On SQLite one process serves the data dir (its file lock), so shared() is false:
// there is no other replica to watch, and at start every running build is an orphan.
//
// Values travel as bound parameters only; documents and cancel requests are opaque
// text here (the manager writes and checks them).
//
// Threading: as RecordStore (builds/stores/record_store.h): one thread.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace trtwatch::builds {

// A build a replica now owns: its record document, and who owned it before (empty when
// nobody did: a queued build, or a record written before replicas).
struct ClaimedBuild {
  std::string doc;
  std::string previous_owner;
  int64_t generation = 0;  // the lease's generation this claim made: the fence of its writes
};

// The lease generation AddClaimed gives a build it stores (claims increment it from there).
inline constexpr int64_t kFirstLeaseGeneration = 1;

// What a queue operation came to. kFailed: the store could not be reached or written,
// with `error` (libpq's or SQLite's words); kDone otherwise, even when nothing matched.
struct QueueResult {
  enum class Outcome { kDone, kFailed };
  Outcome outcome = Outcome::kFailed;
  std::string error;
  bool ok() const { return outcome == Outcome::kDone; }
};

struct ClaimResult : QueueResult {
  std::vector<ClaimedBuild> builds;  // oldest first
};

struct CountResult : QueueResult {
  int64_t count = 0;
};

// A conditional write: `applied` is false when its condition no longer held (the build
// was claimed, cancelled or finished meanwhile).
struct ConditionalResult : QueueResult {
  bool applied = false;
};

struct CancelRequest {
  std::string id;
  std::string request;  // as RequestCancel stored it: untrusted until the manager checks it
};
struct CancelRequestsResult : QueueResult {
  std::vector<CancelRequest> requests;
};

struct RenewResult : QueueResult {
  std::vector<std::string> ids;  // the builds whose lease was renewed
};

// A result of type `Result` done, or failed with `error`.
template <typename Result>
Result QueueDone() {
  Result r;
  r.outcome = QueueResult::Outcome::kDone;
  return r;
}
template <typename Result>
Result QueueFailed(std::string error) {
  Result r;
  r.outcome = QueueResult::Outcome::kFailed;
  r.error = std::move(error);
  return r;
}

class BuildQueue {
 public:
  virtual ~BuildQueue() = default;

  // Whether other replicas may share this queue (PostgreSQL): then leases are renewed,
  // lapsed ones watched, and cancel requests polled.
  virtual bool shared() const = 0;

  // Stores a new build already claimed by `replica`, which starts it at once (it had a
  // free slot and nothing waited): no other replica can claim it first. Its lease
  // generation is kFirstLeaseGeneration.
  virtual QueueResult AddClaimed(const std::string& id, const std::string& doc, const std::string& replica,
                                 double lease_seconds) = 0;
  // Claims up to `count` queued, unowned builds, oldest first, for `replica`.
  virtual ClaimResult ClaimQueued(const std::string& replica, int count, double lease_seconds) = 0;
  // Claims build `id` if it is still queued and unowned (to cancel it).
  virtual ClaimResult ClaimQueuedBuild(const std::string& id, const std::string& replica, double lease_seconds) = 0;
  // Queued, unowned builds in the whole store.
  virtual CountResult CountQueued() = 0;

  // Extends the leases of the unfinished builds `replica` owns.
  virtual RenewResult RenewLeases(const std::string& replica, double lease_seconds) = 0;
  // Claims the running builds nobody renews: owned by none, or whose lease lapsed, and
  // `at_start` those of `replica` itself (a previous process of that name; on SQLite
  // every one). Claimed-but-not-started builds whose lease lapsed go back to the queue.
  virtual ClaimResult ClaimOrphans(const std::string& replica, double lease_seconds, bool at_start) = 0;

  // Leaves `request` for the owner of build `id`, if it is unfinished and owned.
  virtual ConditionalResult RequestCancel(const std::string& id, const std::string& request) = 0;
  // Takes (and clears) the cancel requests left for the builds `replica` owns.
  virtual CancelRequestsResult TakeCancelRequests(const std::string& replica) = 0;
};

}  // namespace trtwatch::builds
