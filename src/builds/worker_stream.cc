#include "builds/worker_stream.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "builds/record_cache.h"
#include "core/phase_tree.h"
#include "platform/worker_process.h"
#include "protocol/utf8.h"
#include "runner/timing_cache_folder.h"

namespace trtwatch::builds {

using nlohmann::json;

void KeepStderrTail(std::string* tail) {
  if (tail->size() > kStderrTail) tail->erase(0, tail->size() - Utf8Tail(*tail, kStderrTail).size());
}

BuildState StateFromStatus(BuildStatus status) {
  switch (status) {
    case BuildStatus::kSucceeded:
      return BuildState::kSucceeded;
    case BuildStatus::kCancelled:
      return BuildState::kCancelled;
    case BuildStatus::kTimedOut:
      return BuildState::kTimedOut;
    case BuildStatus::kFailed:
      break;
  }
  return BuildState::kFailed;
}

BuildStatus StatusFromState(BuildState state) {
  switch (state) {
    case BuildState::kSucceeded:
      return BuildStatus::kSucceeded;
    case BuildState::kCancelled:
      return BuildStatus::kCancelled;
    case BuildState::kTimedOut:
      return BuildStatus::kTimedOut;
    default:
      return BuildStatus::kFailed;  // failed, interrupted: the protocol has no other word
  }
}

std::string SnapshotJson(const PhaseTree& tree) {
  const std::shared_ptr<const TreeSnapshot> snap = tree.Snapshot();
  json active = json::array();
  for (const PhaseNode& p : snap->active) {
    active.push_back({{"id", p.id},
                      {"parent", p.parent == kNoPhase ? json(nullptr) : json(p.parent)},
                      {"phase", p.name},
                      {"depth", p.depth},
                      {"done", p.done},
                      {"total", p.total}});
  }
  return json{{"t", snap->last_event_t},
              {"active", active},
              {"phases_started", snap->phases_started},
              {"phases_finished", snap->phases_finished},
              {"stalled_for", snap->stalled_for ? json(*snap->stalled_for) : json(nullptr)},
              {"last_errors", snap->last_errors}}
      .dump();
}

bool AdjustWorkerEvent(const BuildRecord& record, Event* event) {
  bool changed = false;
  // An error or a log message may quote a model's or TensorRT's text at any length
  // (EventFromJson checked it is valid UTF-8).
  for (std::string* text : {&event->error, &event->message}) {
    if (text->size() <= kMaxWorkerText) continue;
    *text = BoundedText(*text, kMaxWorkerText);
    changed = true;
  }
  // The worker only sees the SIGTERM that carries the service's cancel: the stream
  // tells the reason and message the record keeps, as the record does.
  const bool service_cancel = !record.cancel_reason.empty();
  if (event->type == EventType::kBuildStart) {
    event->build = record.id;  // the worker made up its own id; the service's names the build
    return true;
  }
  if (event->type == EventType::kCancelRequested && service_cancel && event->reason == CancelReason::kSignal) {
    // "api", "budget", "group", "signal", "slurm_cancelled": each told as itself.
    if (!ParseCancelReason(record.cancel_reason, &event->reason)) event->reason = CancelReason::kSignal;
    event->message = record.cancel_message;
    return true;
  }
  if (event->type == EventType::kBuildFinish && service_cancel && event->status == BuildStatus::kCancelled) {
    event->error = record.cancel_message;
    return true;
  }
  return changed;
}

void FoldCacheUse(const Event& event, BuildRecord* record) {
  const RecordCacheReading reading = RecordCacheFromWorker(event.cache);
  if (!reading.ok()) {
    std::fprintf(stderr, "trtwatch serve: build %s: the engine cache fields of its worker were refused: %s\n",
                 record->id.c_str(), reading.error.c_str());
    return;
  }
  if (reading.cache) record->cache = reading.cache;
}

void FoldFleetTimingCache(const Event& event, const std::string& fleet_dir, BuildRecord* record) {
  if (fleet_dir.empty() || event.type != EventType::kBuildStart) return;
  for (const auto& [key, value] : event.facts) {
    if (key != "timing_cache" || !value.starts_with(fleet_dir + "/")) continue;
    const std::string name = value.substr(fleet_dir.size() + 1);
    if (IsTimingCacheName(name)) record->fleet_timing_cache = name;
  }
}

bool FoldEstimate(const Event& event, BuildRecord* record) {
  const Estimate& e = event.estimate;
  const auto seconds = [](double v) { return std::isfinite(v) && v >= 0; };
  if (e.builds < 0 || !seconds(event.t) ||
      (e.remaining && !(seconds(e.remaining->p10) && seconds(e.remaining->p50) && seconds(e.remaining->p90) &&
                        e.remaining->p10 <= e.remaining->p50 && e.remaining->p50 <= e.remaining->p90))) {
    std::fprintf(stderr, "trtwatch serve: build %s: an estimate of its worker was refused (not finite, negative or "
                 "out of order)\n", record->id.c_str());
    return false;
  }
  record->estimate_json = EstimateRecordJson(e, event.t);
  return true;
}

std::vector<Event> ClosingEvents(const TreeSnapshot& snap, uint64_t last_seq, double t, BuildState state,
                                 const std::string& error) {
  std::vector<Event> events;
  // Every phase_start of the log gets its phase_finish: children first, early.
  for (auto p = snap.active.rbegin(); p != snap.active.rend(); ++p) {
    Event f;
    f.type = EventType::kPhaseFinish;
    f.seq = ++last_seq;
    f.t = t;
    f.id = p->id;
    f.phase = p->name;
    f.completed = p->done;
    f.total = p->total;
    f.elapsed = std::max(0.0, t - p->started_at);
    f.early = true;
    events.push_back(std::move(f));
  }
  Event e;
  e.type = EventType::kBuildFinish;
  e.seq = ++last_seq;
  e.t = t;
  e.status = StatusFromState(state);
  e.error = ValidUtf8(error);
  e.elapsed = t;
  e.anomalies.unfinished_phases = static_cast<int64_t>(snap.active.size());
  events.push_back(std::move(e));
  return events;
}

WorkerDeath JudgeWorkerDeath(const BuildRecord& r, const WorkerExit& exit, bool forced_kill,
                             const std::string& stderr_text) {
  const bool service_cancel = r.state == BuildState::kCancelling;
  WorkerDeath death;
  if (service_cancel && forced_kill) {
    death.state = BuildState::kCancelled;
    char grace[32];
    std::snprintf(grace, sizeof grace, "%g", r.cancel_grace);
    death.error = r.cancel_message + "; forced stop: the worker did not stop within the " + grace +
                  " s grace after SIGTERM and was killed (SIGKILL)";
  } else if (service_cancel && exit.terminated) {
    // The SIGTERM arrived before the worker installed its handler (a cancel right
    // after the start): it stopped at once, as asked.
    death.state = BuildState::kCancelled;
    death.error = r.cancel_message;
  } else if (exit.signal) {
    death.error = "the worker was killed by signal " + exit.signal_text + " before the build finished";
  } else if (exit.code) {
    death.error = "the worker exited with code " + std::to_string(*exit.code) + " before the build finished";
  } else {
    death.error = "the worker's exit status is unknown";
  }
  if (!stderr_text.empty() && death.state != BuildState::kCancelled) death.error += ": " + stderr_text;
  return death;
}

}  // namespace trtwatch::builds
