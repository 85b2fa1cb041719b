// BuildManager's following of its workers: a build started (or re-attached), its
// streams read (builds/worker_stream.h), its events relayed to the log and the live
// readers, and its end recorded as the executor, the stream or the exit tells.
#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "builds/build_manager.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "builds/active_build.h"
#include "builds/build_request.h"
#include "builds/metrics.h"
#include "builds/stores/record_store.h"
#include "builds/worker_stream.h"
#include "core/clock.h"
#include "protocol/event_json.h"
#include "protocol/sse_frame.h"
#include "protocol/utf8.h"
#include "runner/duration.h"

namespace trtwatch::builds {

namespace asio = boost::asio;
using nlohmann::json;

namespace {

constexpr size_t kStderrDrain = 1 << 20;  // more than a pipe holds: all an exited worker left
// How often events kept during an outage are offered to the store again.
constexpr std::chrono::milliseconds kStoreRetry{500};
// A build's record is written for a new estimate at most this often.
constexpr double kEstimateStoreSeconds = 2;

// The record's cancel "latency", from build_finish's cancel_latency.
std::string RecordCancelLatencyJson(const CancelLatency& latency) {
  return json{{"to_first_false", latency.to_first_false ? json(*latency.to_first_false) : json(nullptr)},
              {"to_return", latency.to_return}}
      .dump();
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

}  // namespace

void BuildManager::Start(Active& b) {
  const std::string id = b.record.id;
  const std::string engine = b.request.simulate.empty() ? after_.PartialEngine(id) : "";
  WorkerTask task{id, std::nullopt, options_.cancel_grace_seconds, b.request.gpu, b.request.simulate.empty()};
  double timeout = 0;
  std::string ignored;
  if (!b.request.timeout.empty() && ParseDuration(b.request.timeout, &timeout, &ignored)) task.timeout_seconds = timeout;
  const WorkerFolders folders{engine_cache_dir(), after_.SeedHistory(b.record, b.request), options_.timing_caches_dir,
                              options_.timing_cache_max_bytes};
  ExecutionStart start = executor_->Start(task, WorkerArguments(b.request, engine, folders));
  if (!start.execution) {
    EndWithoutWorker(b, BuildState::kFailed, start.error);
    return;
  }
  b.started_ns = clock_.NowNs();
  b.record.state = BuildState::kRunning;
  b.record.started_at = clock_.UnixSeconds();
  Follow(b, std::move(start.execution));
}

void BuildManager::Follow(Active& b, std::unique_ptr<Execution> worker) {
  const std::string id = b.record.id;
  b.worker = std::move(worker);
  b.record.worker_pid = b.worker->place().pid;
  b.record.job = b.worker->place().job;
  // A scheduler's job moves (submitted, on a node, its pending reason): the record shows it.
  b.worker->WatchPlace([this, id] {
    auto it = active_.find(id);
    if (it == active_.end() || !it->second->worker) return;
    it->second->record.worker_pid = it->second->worker->place().pid;  // a worker that waited for its GPU
    it->second->record.job = it->second->worker->place().job;
    Persist(*it->second);
  });
  ++running_;
  Persist(b);
  ReadOutput(id);
  ReadErrors(id);
}

void BuildManager::ReadOutput(const std::string& id) {
  auto it = active_.find(id);
  if (it == active_.end() || !it->second->worker) return;
  Active& b = *it->second;
  b.worker->ReadEvents(b.out_chunk, [this, id](size_t n, bool closed) {
    auto found = active_.find(id);
    if (found == active_.end()) return;
    Active& build = *found->second;
    if (n > 0) {
      build.lines.Feed(std::string_view(build.out_chunk.data(), n),
                       [&](std::string_view line) { HandleLine(build, line); });
      Flush(build);
    }
    if (closed) {
      Reap(id);
      return;
    }
    ReadOutput(id);
  });
}

void BuildManager::ReadErrors(const std::string& id) {
  auto it = active_.find(id);
  if (it == active_.end() || !it->second->worker) return;
  Active& b = *it->second;
  b.worker->ReadDiagnostics(b.err_chunk, [this, id](size_t n, bool closed) {
    auto found = active_.find(id);
    if (found == active_.end()) return;
    Active& build = *found->second;
    build.err_tail.append(build.err_chunk.data(), n);
    KeepStderrTail(&build.err_tail);
    if (closed) {
      build.err_closed = true;
    } else {
      ReadErrors(id);
    }
  });
}

void BuildManager::HandleLine(Active& b, std::string_view line) {
  if (line.empty() || b.fenced) return;
  Event event;
  std::string error;
  const uint64_t last_seq = b.outside_held.empty() ? b.record.last_seq : b.outside_held.back().first.seq;
  if (!EventFromJson(line, &event, &error) || event.seq <= last_seq || b.saw_finish) {
    ++b.bad_lines;  // not the protocol, out of order, or after the end: not relayed
    return;
  }
  const std::string json_line = AdjustWorkerEvent(b.record, &event) ? EventToJson(event) : std::string(line);
  if (event.type == EventType::kBuildStart || event.type == EventType::kBuildFinish) {
    FoldCacheUse(event, &b.record);
    FoldFleetTimingCache(event, options_.timing_caches_dir, &b.record);
    if (IsKeyDigest(event.cache.key)) b.record.history_key = event.cache.key;
  }
  const bool new_estimate = event.type == EventType::kEstimate && FoldEstimate(event, &b.record);
  if (event.type == EventType::kPhaseFinish) metrics_.PhaseFinished(event.phase, event.elapsed);
  if (event.type == EventType::kBuildFinish) {
    b.saw_finish = true;
    b.finish = event;
    // A scheduler may know this end better (its time limit reaches the worker as a
    // SIGTERM, which it reports as a cancel): held until Finish has the verdict, so
    // the log and its followers say what the record says.
    if (event.status != BuildStatus::kSucceeded && b.worker && b.worker->JudgesUnsuccessfulEnds()) {
      b.finish_held = true;
      return;
    }
  }
  if (HoldsOutsideStop(b, event, json_line)) return;
  Relay(b, event, json_line);
  // Record watchers (and other replicas) see a new range, at most every few seconds:
  // the feed may send several a second at phase changes; the end stores the last one.
  if (new_estimate && (!b.estimate_stored_ns || SecondsSince(*b.estimate_stored_ns) >= kEstimateStoreSeconds)) {
    b.estimate_stored_ns = clock_.NowNs();
    Persist(b);
  }
}

void BuildManager::Relay(Active& b, const Event& event, const std::string& json_line) {
  b.tree.Apply(event);
  b.record.last_seq = event.seq;
  b.pending_bytes += json_line.size();
  b.pending.push_back({{event.seq, json_line}, std::string(EventTypeName(event.type)), event.id});
}

void BuildManager::ReleaseHeldFinish(Active& b, const std::optional<EndVerdict>& verdict) {
  if (!b.finish_held) return;
  b.finish_held = false;
  Event finish = b.finish;
  if (verdict) {
    finish.status = StatusFromState(verdict->state);
    finish.error = ValidUtf8(verdict->error);
  }
  Relay(b, finish, EventToJson(finish));
  Flush(b);
}

bool BuildManager::HoldsOutsideStop(Active& b, const Event& event, const std::string& json_line) {
  // The worker reports a signal as a cancel; one the service did not send (no cancel of
  // its own in the record) came from the scheduler or someone using it.
  if (!b.outside_stop) {
    if (event.type != EventType::kCancelRequested || event.reason != CancelReason::kSignal ||
        !b.record.cancel_reason.empty() || !b.worker || !b.worker->JudgesUnsuccessfulEnds()) {
      return false;
    }
    b.outside_stop = true;
    b.outside_stop_at = clock_.UnixSeconds();
  }
  if (b.outside_released) return false;
  b.outside_held.emplace_back(event, json_line);
  // A worker that goes on talking after the signal: bounded; what it said so far goes out.
  constexpr size_t kMaxHeldEvents = 10000;
  if (b.outside_held.size() >= kMaxHeldEvents) ReleaseOutsideStop(b, std::nullopt);
  return true;
}

void BuildManager::ReleaseOutsideStop(Active& b, const std::optional<EndVerdict>& verdict) {
  if (!b.outside_stop || b.outside_released) return;
  b.outside_released = true;
  // Slurm's time limit is the job's time budget; anything else stopped it from outside.
  const bool time_limit = verdict && verdict->reason == "slurm_time_limit";
  const std::string message =
      verdict ? verdict->error : "stopped by a signal trtwatch did not send (scancel, or an administrator)";
  std::vector<std::pair<Event, std::string>> held = std::move(b.outside_held);
  b.outside_held.clear();
  for (auto& [event, json_line] : held) {
    if (event.type == EventType::kCancelRequested) {
      event.reason = time_limit ? CancelReason::kTimeout : CancelReason::kSlurmCancelled;
      event.message = ValidUtf8(message);
      json_line = EventToJson(event);
    }
    Relay(b, event, json_line);
  }
  Flush(b);
}

std::optional<EndVerdict> BuildManager::JudgeEnd(Active& b) {
  std::optional<EndVerdict> verdict = b.worker->Judge(
      {b.saw_finish, StateFromStatus(b.finish.status), b.record.state == BuildState::kCancelling});
  // The service asked a cancel too (after the outside signal): its own cancel's account stands.
  if (verdict || !b.outside_stop || b.record.state == BuildState::kCancelling) return verdict;
  if (b.saw_finish && b.finish.status != BuildStatus::kCancelled) return std::nullopt;  // it ended as it says
  // Signalled from outside without the job being cancelled (scancel --signal=TERM):
  // stopped all the same, by someone other than the service.
  const std::string& job = b.worker->place().job.id;
  return EndVerdict{BuildState::kCancelled, "slurm_cancelled",
                    (job.empty() ? std::string("its job") : "Slurm job " + job) +
                        " was stopped by a signal trtwatch did not send (scancel --signal, or an administrator)"};
}

void BuildManager::NoteOutsideCancel(Active& b, const EndVerdict& verdict) {
  BuildRecord& r = b.record;
  if (verdict.reason != "slurm_cancelled" || !r.cancel_reason.empty()) return;
  r.cancel_reason = "slurm_cancelled";
  r.cancel_message = ValidBoundedText(verdict.error, kMaxClientText);
  r.cancel_requested_at = b.outside_stop_at > 0 ? b.outside_stop_at : clock_.UnixSeconds();
  r.cancel_grace = 0;  // Slurm's own (its KillWait), not the service's
  // Cooperative when the worker itself reported its end; else Slurm killed it.
  r.cancel_stop = b.saw_finish ? "cooperative" : "forced";
  if (b.saw_finish && b.finish.cancel_latency) {
    r.cancel_latency_json = RecordCancelLatencyJson(*b.finish.cancel_latency);
  }
}

void BuildManager::Flush(Active& b) {
  if (b.pending.empty() || b.fenced) return;
  std::vector<StoredEvent> batch;
  batch.reserve(b.pending.size());
  for (const PendingEvent& e : b.pending) batch.push_back(e.stored);
  const bool finish = b.pending.back().type == "build_finish";
  const Result<bool> appended = store_.AppendEventsFenced(b.record.id, batch, b.generation, finish);
  if (!appended.ok()) return StoreOutage(b, appended.error());
  if (!*appended) return Fence(b);
  if (!b.outage.empty()) {
    std::fprintf(stderr, "trtwatch serve: build %s: the store took its %zu kept events again\n", b.record.id.c_str(),
                 batch.size());
    b.outage.clear();
  }
  b.stored_seq = batch.back().seq;
  const std::vector<PendingEvent> stored = std::move(b.pending);
  b.pending.clear();
  b.pending_bytes = 0;
  // Stored, then sent, as one batch: a live reader gets exactly the stored log.
  if (b.subscribers.empty()) return;
  std::vector<FramedEvent> items;
  items.reserve(stored.size());
  for (const PendingEvent& e : stored) {
    FramedEvent item;
    item.seq = e.stored.seq;
    item.step = e.type == "step";
    item.phase_id = e.phase_id;
    item.frame = std::make_shared<const std::string>(SseFrame(e.stored.seq, e.type, e.stored.json));
    items.push_back(std::move(item));
  }
  const std::vector<EventSubscriber*> subs = b.subscribers;  // a subscriber may leave meanwhile
  for (EventSubscriber* s : subs) s->OnEvents(items);
}

void BuildManager::StoreOutage(Active& b, const std::string& why) {
  const std::string error = writer_.StoreError("the events of " + b.record.id, why);
  if (b.outage.empty()) {
    std::fprintf(stderr, "trtwatch serve: %s; they are kept here and written again every %lld ms\n", error.c_str(),
                 static_cast<long long>(kStoreRetry.count()));
  }
  b.outage = error;
  writer_.Failed(error);
  if (b.pending.size() > options_.max_unstored_events || b.pending_bytes > options_.max_unstored_bytes) {
    StorageFailed(b, error);
  }
  if (!b.store_retry) b.store_retry = std::make_unique<asio::steady_timer>(io_);
  b.store_retry->expires_after(kStoreRetry);
  b.store_retry->async_wait([this, id = b.record.id](const boost::system::error_code& ec) {
    if (!ec) RetryStore(id);
  });
}

void BuildManager::RetryStore(const std::string& id) {
  auto it = active_.find(id);
  if (it == active_.end()) return;
  Active& b = *it->second;
  Flush(b);
  if (b.concluding && (b.fenced || b.pending.empty())) ConcludeWhenStored(b);
}

void BuildManager::StorageFailed(Active& b, const std::string& error) {
  if (!b.storage_failure.empty()) return;
  std::fprintf(stderr, "trtwatch serve: %s; more than its store holds waits (%zu events): the build is stopped\n",
               error.c_str(), b.pending.size());
  // A build whose log cannot be kept is not worth its GPU time: stop it now; Finish
  // records it failed with this error, never succeeded.
  b.storage_failure = error;
  if (b.worker) b.worker->ForceStop();
}

void BuildManager::Reap(const std::string& id) {
  auto it = active_.find(id);
  if (it == active_.end()) return;
  Active& b = *it->second;
  if (!b.exit) b.exit = b.worker->Poll();
  // Stdout closed; finish once the worker has exited and its stderr is read to the end
  // (a read already under way holds its last words), or a second after it exited
  // (something it started may hold stderr open).
  constexpr int kStderrWaitPolls = 100;
  if (!b.exit || (!b.err_closed && b.polls_after_exit++ < kStderrWaitPolls)) {
    if (!b.reap) b.reap = std::make_unique<asio::steady_timer>(io_);
    b.reap->expires_after(std::chrono::milliseconds(10));
    b.reap->async_wait([this, id](const boost::system::error_code& ec) {
      if (!ec) Reap(id);
    });
    return;
  }
  Finish(b, *b.exit);
}

void BuildManager::Finish(Active& b, const WorkerExit& exit) {
  if (b.fenced) return FinishFenced(b);
  // Whatever stderr still holds, read without waiting (the worker is gone).
  b.err_tail += b.worker->DiagnosticsNow(kStderrDrain);
  KeepStderrTail(&b.err_tail);
  Flush(b);
  if (b.fenced) return FinishFenced(b);
  const std::optional<EndVerdict> verdict = JudgeEnd(b);
  ReleaseOutsideStop(b, verdict);  // what came after an outside stop's signal, before any ending
  b.record.job = b.worker->place().job;
  b.worker.reset();
  b.record.worker_pid = 0;
  if (b.grace) b.grace->cancel();
  --running_;

  BuildRecord& r = b.record;
  r.exit_code = exit.code;
  r.exit_signal = exit.signal;
  if (r.state == BuildState::kCancelling) r.cancel_stop = b.forced_kill ? "forced" : "cooperative";
  if (verdict && b.storage_failure.empty()) {
    // The scheduler ended it (a node that failed, its time limit, a cancel from outside):
    // what the executor says it was, whatever the stream said or left unsaid.
    NoteOutsideCancel(b, *verdict);
    if (b.saw_finish) {
      ReleaseHeldFinish(b, verdict);
    } else {
      AppendSynthesisedFinish(b, verdict->state, verdict->error);
    }
    r.state = verdict->state;
    r.error = verdict->error;
    r.end_reason = verdict->reason;
  } else if (!b.storage_failure.empty()) {
    // Its stream's own end (if any) stays unstored: the log ends with this one.
    const std::string error = "failed: " + b.storage_failure + "; the build was stopped";
    if (!b.pending.empty() && b.pending.back().type == "build_finish") {
      b.record.last_seq = b.pending.back().stored.seq - 1;
      b.pending_bytes -= b.pending.back().stored.json.size();
      b.pending.pop_back();
    }
    AppendSynthesisedFinish(b, BuildState::kFailed, error);
    r.state = BuildState::kFailed;
    r.error = error;
    r.end_reason = "store_unavailable";
  } else if (b.saw_finish) {
    EndAsReported(b);
  } else {
    const WorkerDeath death = JudgeWorkerDeath(r, exit, b.forced_kill, ValidUtf8(Trim(b.err_tail)));
    AppendSynthesisedFinish(b, death.state, death.error);
    r.state = death.state;
    r.error = death.error;
  }
  ConcludeWhenStored(b);
}

// Another replica concluded it: nothing of it is written here.
void BuildManager::FinishFenced(Active& b) {
  b.worker.reset();
  --running_;
  ConcludeWhenStored(b);
}

void BuildManager::ConcludeWhenStored(Active& b) {
  b.concluding = true;
  if (b.fenced) {
    after_.DropPartialEngine(b.record.id);  // never leave a partial engine
    after_.DropHistory(b.record.id);        // the replica that concluded it keeps what history there is
    const bool had_slot = !b.without_worker;
    Close(b);
    if (had_slot) SlotFreed();
    return;
  }
  if (!b.pending.empty()) return;  // RetryStore comes back once the store took the log's end
  if (b.without_worker) return RecordEndWithoutWorker(b);
  Conclude(b);
}

// The stream's own account stands.
void BuildManager::EndAsReported(Active& b) {
  BuildRecord& r = b.record;
  ReleaseHeldFinish(b, std::nullopt);
  r.state = StateFromStatus(b.finish.status);
  r.error = b.finish.error;
  // The worker only saw the SIGTERM that carried the service's cancel; the record
  // keeps the reason the client gave.
  if (r.state == BuildState::kCancelled && !r.cancel_message.empty()) r.error = r.cancel_message;
  if (b.finish.cancel_latency) r.cancel_latency_json = RecordCancelLatencyJson(*b.finish.cancel_latency);
  if (r.state == BuildState::kSucceeded && b.request.simulate.empty()) {  // simulations write no engine
    after_.StoreEngine(r, engine_cache_dir());
    if (r.state == BuildState::kSucceeded) after_.StoreTimingCache(r, b.request);
  }
}

// The record's end written, the history taken in, the slot freed.
void BuildManager::Conclude(Active& b) {
  BuildRecord& r = b.record;
  after_.DropPartialEngine(r.id);  // never leave a partial engine
  r.finished_at = clock_.UnixSeconds();
  r.phase_json = SnapshotJson(b.tree);
  after_.KeepHistory(r, b.saw_finish, b.generation);  // fenced: under this replica's lease only
  Persist(b);
  metrics_.BuildFinished(BuildStateName(r.state), SecondsSince(b.started_ns));
  if (b.saw_finish && r.cache) metrics_.EngineCacheUsed(r.cache->state == "hit", r.engine_bytes.value_or(0));
  Close(b);
  SlotFreed();
}




void BuildManager::EndWithoutWorker(Active& b, BuildState state, const std::string& error) {
  b.started_ns = clock_.NowNs();
  b.without_worker = true;
  AppendSynthesisedFinish(b, state, error);
  b.record.state = state;
  b.record.error = error;
  ConcludeWhenStored(b);
}

void BuildManager::EndAsLogged(Active& b, const Event& finish) {
  b.started_ns = clock_.NowNs();
  b.without_worker = true;
  const bool interrupted = finish.status == BuildStatus::kFailed && finish.error.rfind("interrupted:", 0) == 0;
  b.record.state = interrupted ? BuildState::kInterrupted : StateFromStatus(finish.status);
  b.record.error = finish.error;
  ConcludeWhenStored(b);
}

void BuildManager::RecordEndWithoutWorker(Active& b) {
  b.record.finished_at = clock_.UnixSeconds();
  b.record.phase_json = SnapshotJson(b.tree);
  after_.DropHistory(b.record.id);  // a worker that is gone or never ran added nothing worth keeping
  Persist(b);
  metrics_.BuildFinished(BuildStateName(b.record.state), 0);
  Close(b);
}

void BuildManager::AppendSynthesisedFinish(Active& b, BuildState state, const std::string& error) {
  const std::shared_ptr<const TreeSnapshot> snap = b.tree.Snapshot();
  // Never before the last event the worker sent (after a restart `started` is now).
  const double since_start = b.record.started_at > 0 ? SecondsSince(b.started_ns) : 0;
  const double t = std::max(snap->last_event_t, since_start);
  for (const Event& e : ClosingEvents(*snap, b.record.last_seq, t, state, error)) Relay(b, e, EventToJson(e));
  Flush(b);
}

void BuildManager::Persist(Active& b) {
  if (!IsFinal(b.record.state)) b.record.phase_json = SnapshotJson(b.tree);
  // A record the store could not take is written again (RecordWriter); one it refused is
  // another replica's now.
  const PutOutcome put =
      writer_.Put(b.record.id, std::string(BuildStateName(b.record.state)), RecordToJson(b.record), b.generation);
  if (put == PutOutcome::kRefused) Fence(b);
}



void BuildManager::Close(Active& b) {
  const std::string id = b.record.id;
  const std::optional<GroupTag> group = b.record.group;
  const bool fenced = b.fenced;
  auto subs = std::move(b.subscribers);
  for (EventSubscriber* s : subs) s->OnEnd();
  active_.erase(id);  // closes the pipes; pending reads complete with operation_aborted
  // The group's last member to end here concludes it (its engines and manifest on disk);
  // a fenced member ended on the replica that concluded it, which tells its group.
  if (group && member_ended_ && !fenced) member_ended_(group->id);
}

std::string BuildManager::ActiveRecordJson(Active& b) const {
  b.record.phase_json = SnapshotJson(b.tree);
  return RecordToJson(b.record);
}


}  // namespace trtwatch::builds
