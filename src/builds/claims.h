// Claims: one replica's claims and leases over the store's queue (builds/stores/build_queue.h).
// It knows who this replica is, how long a lease lasts and when a renewal is due; the
// manager decides what to do with what it claims (start it, conclude it, fence it).
//
// A replica claims queued builds as it has free slots, renews the leases of the builds
// it runs every third of the lease, and claims the builds of replicas that stopped
// renewing (orphans). A build whose lease this replica failed to renew in time was
// concluded by another: Renew names it, for the manager to fence.
//
// Threading: the build manager's event-loop thread only; the clock is read through
// the Clock given (core/clock.h), so tests move time by hand.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "builds/stores/build_queue.h"

namespace trtwatch {
class Clock;
}

namespace trtwatch::builds {

// What renewing the leases came to: `error` when the store could not be reached;
// otherwise `lost`, the builds among those asked for whose lease was not renewed.
struct RenewOutcome {
  std::string error;
  std::set<std::string> lost;
  bool ok() const { return error.empty(); }
};

class Claims {
 public:
  Claims(BuildQueue& queue, const Clock& clock, std::string replica, double lease_seconds);
  Claims(const Claims&) = delete;
  Claims& operator=(const Claims&) = delete;

  // Whether other replicas share the queue (leases, orphans and cancel requests matter).
  bool shared() const { return queue_.shared(); }
  const std::string& replica() const { return replica_; }

  // A new build stored claimed by this replica, which starts it at once.
  [[nodiscard]] QueueResult AddClaimed(const std::string& id, const std::string& doc);
  // Up to `free_slots` queued builds, oldest first.
  [[nodiscard]] ClaimResult Queued(int free_slots);
  // Build `id` if still queued and unclaimed (to cancel it).
  [[nodiscard]] ClaimResult QueuedBuild(const std::string& id);
  // The builds nobody renews (`at_start`: this replica's own from an earlier process too).
  [[nodiscard]] ClaimResult Orphans(bool at_start);
  // Whether an orphan's worker pid means something on this host: a build of an earlier
  // process of this replica (or of the one process a data dir has, or of one before replicas).
  bool WasOurs(const ClaimedBuild& orphan) const;

  // True once a third of the lease has passed since it was last true (or since the
  // start): time to renew and to look for orphans.
  bool LeaseWorkDue();
  // Renews this replica's leases; `running` are the builds it runs (nothing is asked
  // of the store when there are none).
  [[nodiscard]] RenewOutcome Renew(const std::vector<std::string>& running);

  [[nodiscard]] CancelRequestsResult TakeCancelRequests() { return queue_.TakeCancelRequests(replica_); }
  [[nodiscard]] ConditionalResult RequestCancel(const std::string& id, const std::string& request) {
    return queue_.RequestCancel(id, request);
  }
  [[nodiscard]] CountResult CountQueued() { return queue_.CountQueued(); }

 private:
  BuildQueue& queue_;
  const Clock& clock_;
  const std::string replica_;
  const double lease_seconds_;
  int64_t last_lease_work_ns_;
};

}  // namespace trtwatch::builds
