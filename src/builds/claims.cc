#include "builds/claims.h"

#include <utility>

#include "core/clock.h"

namespace trtwatch::builds {

Claims::Claims(BuildQueue& queue, const Clock& clock, std::string replica, double lease_seconds)
    : queue_(queue),
      clock_(clock),
      replica_(std::move(replica)),
      lease_seconds_(lease_seconds),
      last_lease_work_ns_(clock.NowNs()) {}

QueueResult Claims::AddClaimed(const std::string& id, const std::string& doc) {
  return queue_.AddClaimed(id, doc, replica_, lease_seconds_);
}

ClaimResult Claims::Queued(int free_slots) { return queue_.ClaimQueued(replica_, free_slots, lease_seconds_); }

ClaimResult Claims::QueuedBuild(const std::string& id) { return queue_.ClaimQueuedBuild(id, replica_, lease_seconds_); }

ClaimResult Claims::Orphans(bool at_start) { return queue_.ClaimOrphans(replica_, lease_seconds_, at_start); }

bool Claims::WasOurs(const ClaimedBuild& orphan) const {
  return !queue_.shared() || orphan.previous_owner.empty() || orphan.previous_owner == replica_;
}

bool Claims::LeaseWorkDue() {
  const int64_t now = clock_.NowNs();
  if (static_cast<double>(now - last_lease_work_ns_) < lease_seconds_ / 3 * 1e9) return false;
  last_lease_work_ns_ = now;
  return true;
}

RenewOutcome Claims::Renew(const std::vector<std::string>& running) {
  RenewOutcome outcome;
  if (running.empty()) return outcome;
  const RenewResult renewed = queue_.RenewLeases(replica_, lease_seconds_);
  if (!renewed.ok()) {
    outcome.error = renewed.error;
    return outcome;
  }
  const std::set<std::string> kept(renewed.ids.begin(), renewed.ids.end());
  for (const std::string& id : running) {
    if (!kept.contains(id)) outcome.lost.insert(id);
  }
  return outcome;
}

}  // namespace trtwatch::builds
