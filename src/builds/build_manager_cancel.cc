// BuildManager's cancels: of a build queued (it ends at once), running here (its worker
// is asked to stop, then killed after the grace), or running on another replica (the
// request is left in its row for its owner).
#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "core/clock.h"
#include "builds/build_manager.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>

#include "builds/active_build.h"
#include "builds/build_request.h"
#include "builds/stores/record_store.h"
#include "protocol/utf8.h"

namespace trtwatch::builds {

namespace asio = boost::asio;

CancelResult BuildManager::Cancel(const std::string& id, std::string_view body, const std::string& by) {
  CancelAsk ask;
  ask.by = by;
  std::string body_error;
  if (!ParseCancelBody(body, &ask.grace, &body_error)) return Refusal(CancelOutcome::kInvalid, body_error, id);
  return CancelBuild(id, ask);
}

CancelResult BuildManager::CancelBuild(const std::string& id, const CancelAsk& ask) {
  // The build may move between two reads (claimed, finished): decide again, a few times.
  std::string store_error;  // why the store could not be read, for the refusal
  for (int attempt = 0; attempt < 3; ++attempt) {
    // Active and not yet concluded (a build whose end waits for the store has its final state).
    if (auto it = active_.find(id); it != active_.end() && !IsFinal(it->second->record.state)) {
      return CancelActive(*it->second, ask);
    }
    GetResult stored = Get(id);
    if (stored.outcome == GetOutcome::kNotFound) return Refusal(CancelOutcome::kNotFound, stored.error, id);
    BuildRecord r;
    RecordFromJson(stored.record, &r);
    if (IsFinal(r.state)) {
      CancelResult finished = Refusal(CancelOutcome::kAlreadyFinished,
                                      "build " + id + " already finished (" + std::string(BuildStateName(r.state)) +
                                          "); there is nothing to cancel",
                                      id);
      finished.record = std::move(stored.record);
      return finished;
    }
    if (r.state == BuildState::kQueued) {
      // Only if it is still queued and nobody claimed it: then it is this replica's to end.
      const ClaimResult won = claims_.QueuedBuild(id);
      if (!won.ok()) {
        store_error = won.error;
        break;
      }
      if (!won.builds.empty()) return CancelQueued(won.builds.front(), ask);
    }
    CancelResult elsewhere = CancelElsewhere(r, ask);
    if (elsewhere.outcome != CancelOutcome::kNotFound) return elsewhere;
  }
  return Refusal(CancelOutcome::kUnavailable,
                 "the service cannot reach its store to cancel build " + id + " now (" + store_error +
                     "); retry later",
                 id);
}

CancelAsk BuildManager::WithDefaults(const CancelAsk& ask, const std::string& id) const {
  CancelAsk full = ask;
  if (full.reason.empty()) {
    full.reason = "api";
    full.message = "cancelled by POST /builds/" + id + "/cancel";
  }
  return full;
}

CancelResult BuildManager::CancelQueued(const ClaimedBuild& claimed, const CancelAsk& ask) {
  Active* adopted = Adopt(claimed.doc, claimed.generation);
  if (!adopted) return Refusal(CancelOutcome::kUnavailable, "the stored record is not one; retry later");
  Active& b = *adopted;
  const std::string id = b.record.id;
  if (b.record.cancel_reason.empty()) {
    const CancelAsk full = WithDefaults(ask, id);
    b.record.cancel_reason = full.reason;
    b.record.cancel_message = full.message;
    b.record.cancelled_by = full.by;
    b.record.cancel_requested_at = clock_.UnixSeconds();
  }
  EndWithoutWorker(b, BuildState::kCancelled, b.record.cancel_message + " while it was queued");
  return {CancelOutcome::kCancelled, Get(id).record, "", id};
}

// A build another replica runs (or has just claimed): the request is left in its row
// for its owner, which applies it within a replica tick. kNotFound: it was not left
// (the build moved); kUnavailable: the store could not be reached.
CancelResult BuildManager::CancelElsewhere(const BuildRecord& r, const CancelAsk& ask) {
  const CancelAsk full = WithDefaults(ask, r.id);
  const ConditionalResult asked = claims_.RequestCancel(r.id, CancelAskToJson(full));
  if (!asked.ok()) return Refusal(CancelOutcome::kUnavailable, asked.error, r.id);
  if (!asked.applied) return Refusal(CancelOutcome::kNotFound, "", r.id);
  BuildRecord shown = r;  // what the owner is about to write
  shown.state = BuildState::kCancelling;
  if (shown.cancel_reason.empty()) {
    shown.cancel_reason = full.reason;
    shown.cancel_message = full.message;
    shown.cancelled_by = full.by;
    shown.cancel_requested_at = clock_.UnixSeconds();
  }
  if (full.grace) shown.cancel_grace = *full.grace;
  return {CancelOutcome::kCancelling, RecordToJson(shown), "", r.id};
}

CancelResult BuildManager::CancelActive(Active& b, const CancelAsk& ask) {
  const std::string id = b.record.id;
  if (b.record.cancel_reason.empty() && !ask.reason.empty()) {
    b.record.cancel_reason = ask.reason;
    b.record.cancel_message = ask.message;
    b.record.cancelled_by = ask.by;
    b.record.cancel_requested_at = clock_.UnixSeconds();
  }
  if (b.record.state == BuildState::kRunning && b.worker) {
    b.record.state = BuildState::kCancelling;
    if (b.record.cancel_reason.empty()) {
      // The same reason goes into the record and, rewritten, into the stream's
      // cancel_requested event: "signal" when the service itself was signalled.
      b.record.cancel_reason = shutting_down_ ? "signal" : "api";
      b.record.cancel_message = shutting_down_ ? "the service is shutting down"
                                               : "cancelled by POST /builds/" + id + "/cancel";
      b.record.cancelled_by = shutting_down_ ? std::string() : ask.by;
      b.record.cancel_requested_at = clock_.UnixSeconds();
    }
    b.record.cancel_grace = ask.grace.value_or(options_.cancel_grace_seconds);
    b.worker->RequestStop();
    StartGraceTimer(b, b.record.cancel_grace);
    Persist(b);
    return {CancelOutcome::kCancelling, ActiveRecordJson(b), "", id};
  }
  // Cancelling: asked already; cancel is idempotent (a new grace shortens or extends it).
  if (ask.grace && b.worker) {
    b.record.cancel_grace = *ask.grace;
    StartGraceTimer(b, *ask.grace);
  }
  return {CancelOutcome::kCancelling, ActiveRecordJson(b), "", id};
}

void BuildManager::StartGraceTimer(Active& b, double seconds) {
  const std::string id = b.record.id;
  if (!b.grace) b.grace = std::make_unique<asio::steady_timer>(io_);
  b.grace->expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(seconds)));
  b.grace->async_wait([this, id](const boost::system::error_code& ec) {
    if (ec) return;
    auto found = active_.find(id);
    if (found == active_.end() || !found->second->worker) return;
    found->second->forced_kill = true;
    found->second->worker->ForceStop();
  });
}


CancelResult BuildManager::CancelFor(const std::string& id, const std::string& reason, const std::string& message,
                                     std::optional<double> grace, const std::string& by) {
  // The message quotes the client's reason.
  return CancelBuild(id, CancelAsk{grace, reason, ValidBoundedText(message, kMaxClientText), by});
}


}  // namespace trtwatch::builds
