#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "builds/build_manager.h"

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "core/build_id.h"
#include "core/phase_tree.h"
#include "history/history_file.h"
#include "platform/file_access.h"
#include "protocol/event_json.h"
#include "protocol/sse_frame.h"
#include "builds/build_groups.h"
#include "builds/build_history.h"
#include "builds/build_request.h"
#include "builds/change_watch.h"
#include "builds/executors/local_executor.h"
#include "builds/metrics.h"
#include "builds/record_cache.h"
#include "builds/replica_name.h"
#include "builds/stores/record_store.h"
#include "protocol/utf8.h"
#include "runner/duration.h"

namespace trtwatch::builds {

namespace asio = boost::asio;
using nlohmann::json;

namespace {

constexpr size_t kStderrTail = 4096;  // bytes of worker stderr kept for the error text
constexpr size_t kStderrDrain = 1 << 20;  // more than a pipe holds: all an exited worker left

// An operation that did not happen, and why: valid UTF-8, as it may quote the client's bytes.
template <typename Outcome>
ManagerResult<Outcome> Refusal(Outcome outcome, const std::string& error, const std::string& id = "") {
  return {outcome, "", ValidUtf8(error), id};
}

constexpr int kStorageRetrySeconds = 1;  // unsaved records are written again this often
// How often a replica on a shared store looks for cancels asked through other replicas,
// queued builds to claim, and new events of the remote builds it has readers for: a
// cancel reaches the worker within about this long.
constexpr std::chrono::milliseconds kReplicaTick{250};
// A build's record is written for a new estimate at most this often.
constexpr std::chrono::seconds kEstimateStoreInterval{2};

std::string StorageError(const std::string& what, const std::string& why) {
  return "the service could not store " + what + " (" + why + "); free space in --data-dir or fix the disk";
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

// Cuts the texts of a worker's event (an error or a log message may quote a model's
// or TensorRT's text at any length) to kMaxWorkerText; true if one was cut.
bool BoundWorkerTexts(Event* event) {
  bool cut = false;
  for (std::string* text : {&event->error, &event->message}) {
    if (text->size() <= kMaxWorkerText) continue;
    *text = BoundedText(*text, kMaxWorkerText);  // EventFromJson checked it is valid UTF-8
    cut = true;
  }
  return cut;
}

// Keeps the last kStderrTail bytes of a worker's stderr, cut on a character boundary.
void KeepTail(std::string* tail) {
  if (tail->size() > kStderrTail) tail->erase(0, tail->size() - Utf8Tail(*tail, kStderrTail).size());
}

json SnapshotJson(const PhaseTree& tree) {
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
  return {{"t", snap->last_event_t},
          {"active", active},
          {"phases_started", snap->phases_started},
          {"phases_finished", snap->phases_finished},
          {"stalled_for", snap->stalled_for ? json(*snap->stalled_for) : json(nullptr)},
          {"last_errors", snap->last_errors}};
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

// The engine cache's answer in a worker's build_start or build_finish, checked before
// the record keeps it; a finish that gives none leaves the start's.
void FoldCacheUse(const Event& event, BuildRecord* record) {
  const RecordCacheReading reading = RecordCacheFromWorker(event.cache);
  if (!reading.ok()) {
    std::fprintf(stderr, "trtwatch serve: build %s: the engine cache fields of its worker were refused: %s\n",
                 record->id.c_str(), reading.error.c_str());
    return;
  }
  if (reading.cache) record->cache = reading.cache;
}

// A worker's estimate, checked (finite, ordered, not negative) and kept in the record;
// false when refused.
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

}  // namespace

struct BuildManager::Active {
  BuildRecord record;
  BuildRequest request;
  PhaseTree tree;
  std::vector<EventSubscriber*> subscribers;
  std::unique_ptr<Execution> worker;          // while it runs; dropped once its end is known
  std::unique_ptr<asio::steady_timer> grace;  // Kill after Terminate
  std::unique_ptr<asio::steady_timer> reap;   // polls for the worker's end after stdout closed
  std::array<char, 65536> out_chunk{};
  std::array<char, 4096> err_chunk{};
  std::string partial;   // an incomplete stdout line
  std::string err_tail;  // the end of the worker's stderr
  std::vector<StoredEvent> pending;  // read, not yet stored
  bool saw_finish = false;
  Event finish;
  bool finish_held = false;  // `finish` waits for the executor's verdict (Finish relays it)
  bool forced_kill = false;     // killed after the cancel grace (or a second service signal)
  std::string storage_failure;  // set when its events could not be stored: the build is stopped
  bool fenced = false;          // another replica concluded it: this one writes nothing more of it
  bool err_closed = false;      // stderr read to its end
  std::optional<WorkerExit> exit;  // the worker's end, once polled
  int polls_after_exit = 0;
  uint64_t bad_lines = 0;
  std::chrono::steady_clock::time_point started;
  std::chrono::steady_clock::time_point estimate_stored;  // when an estimate was last written to the store
};

BuildManager::BuildManager(asio::io_context& io, RecordStore& store, Metrics& metrics, ManagerOptions options,
                           std::unique_ptr<Executor> executor)
    : io_(io),
      store_(store),
      metrics_(metrics),
      options_(std::move(options)),
      executor_(executor ? std::move(executor)
                         : std::make_unique<LocalExecutor>(io, NewWorkerLauncher(io), options_.worker_exe)),
      followers_(store),
      last_lease_work_(std::chrono::steady_clock::now()),
      groups_(std::make_unique<BuildGroups>(*this, options_.data_dir, options_.gpu_types)) {
  // A folder that cannot be made fails the builds that need it, with the reason.
  std::string ignored;
  MakePrivateFolder(engine_dir(), &ignored);
  MakePrivateFolder(options_.data_dir + "/caches", &ignored);  // relative timing-cache paths land here
  if (queue().shared()) ScheduleTick();
  if (ChangeFeed* feed = store_.changes()) {
    watch_ = std::make_unique<ChangeWatch>(
        io_, *feed, [this](const std::vector<StoreChange>& changes) { OnStoreChanges(changes); },
        [this] { followers_.PullAll(); });  // what was sent while the feed was down
    watch_->Start();
  }
}

// Workers never outlive the service's event loop unnoticed: a WorkerProcess dropped
// with active_ kills and reaps what still runs.
BuildManager::~BuildManager() = default;

BuildQueue& BuildManager::queue() { return store_.queue(); }

void BuildManager::Recover() {
  ConcludeOrphans(/*at_start=*/true);
  MaybeStart();
}

void BuildManager::ConcludeOrphans(bool at_start) {
  const ClaimResult orphans = queue().ClaimOrphans(options_.replica, options_.lease_seconds, at_start);
  if (!orphans.ok()) return QueueTrouble("claim the builds of replicas that stopped", orphans.error);
  for (const ClaimedBuild& orphan : orphans.builds) ConcludeOrphan(orphan);
}

void BuildManager::ConcludeOrphan(const ClaimedBuild& orphan) {
  Active* adopted = Adopt(orphan.doc);
  if (!adopted) return;
  Active& b = *adopted;
  // A worker pid means something on this host only: the build of an earlier process of
  // this replica (or of the one process a data dir has, or of a service before replicas).
  const bool ours =
      !queue().shared() || orphan.previous_owner.empty() || orphan.previous_owner == options_.replica;
  b.record.last_seq = std::max(b.record.last_seq, store_.LastSeq(b.record.id));
  // The tree as the log left it: open phases are closed and `t` continues from there.
  store_.ForEachEvent(b.record.id, 0, [&](const StoredEvent& stored) {
    Event event;
    std::string ignored;
    if (EventFromJson(stored.json, &event, &ignored)) b.tree.Apply(event);
  });
  // A cluster's job runs on without the service that submitted it: followed again, from
  // the record, to its end (its stream is read anew; what the log has is skipped).
  std::string request_error;
  std::unique_ptr<Execution> again;
  if (ParseBuildRequest(b.record.request_json, Paths(), &b.request, &request_error)) {
    again = executor_->Reattach({b.record.worker_pid, b.record.job});
  }
  if (again) {
    b.started = std::chrono::steady_clock::now() -
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(std::max(0.0, NowUnix() - b.record.started_at)));
    const bool cancelling = b.record.state == BuildState::kCancelling;
    Follow(b, std::move(again));
    if (cancelling) {
      b.worker->RequestStop();
      StartGraceTimer(b, b.record.cancel_grace);
    }
    return;
  }
  if (ours) executor_->StopLeftover({b.record.worker_pid, b.record.job});
  b.record.worker_pid = 0;
  const std::string owner = ReplicaNameError(orphan.previous_owner).empty() ? orphan.previous_owner : "?";
  EndWithoutWorker(b, BuildState::kInterrupted,
                   ours ? "interrupted: the service stopped while this build ran; submit it again"
                        : "interrupted: replica \"" + owner +
                              "\" stopped renewing its lease while this build ran (it was killed, or lost the "
                              "database); submit it again");
}

BuildManager::Active* BuildManager::Adopt(const std::string& doc) {
  auto build = std::make_unique<Active>();
  if (!RecordFromJson(doc, &build->record) || active_.count(build->record.id)) return nullptr;
  Active& b = *build;
  const std::string id = b.record.id;
  active_[id] = std::move(build);
  b.subscribers = followers_.Take(id);  // they have had the log up to its end
  return &b;
}

void BuildManager::StartClaimed(const std::string& doc) {
  Active* adopted = Adopt(doc);
  if (!adopted) return;
  Active& b = *adopted;
  std::string error;
  if (!ParseBuildRequest(b.record.request_json, Paths(), &b.request, &error)) {
    EndWithoutWorker(b, BuildState::kFailed, "cannot run on replica \"" + options_.replica + "\": " + error);
    return;
  }
  Start(b);
}

std::string BuildManager::CheckRequest(std::string_view body) {
  BuildRequest request;
  std::string error;
  if (!ParseBuildRequest(body, Paths(), &request, &error)) return error;
  if (!request.gpu.empty()) {
    if (const GpuCheck gpu = executor_->CheckGpu(request.gpu); !gpu.accepted()) return gpu.error;
  }
  return "";
}

SubmitResult BuildManager::Submit(std::string_view body, const std::optional<GroupTag>& group,
                                  const std::string& member_id) {
  BuildRequest request;
  std::string error;
  if (!ParseBuildRequest(body, Paths(), &request, &error)) {
    return Refusal(SubmitOutcome::kInvalid, error);
  }
  if (!request.gpu.empty()) {
    if (const GpuCheck gpu = executor_->CheckGpu(request.gpu); !gpu.accepted()) {
      return Refusal(SubmitOutcome::kInvalid, gpu.error);
    }
  }
  if (shutting_down_) {
    return Refusal(SubmitOutcome::kShuttingDown, "the service is shutting down; submit again after it restarts");
  }
  if (!RetryUnsaved()) {
    return Refusal(SubmitOutcome::kStorageFailed, "the service cannot store builds now: " + storage_error_);
  }
  const CountResult waiting = queue().CountQueued();  // across every replica
  if (!waiting.ok()) {
    storage_error_ = StorageError("a new record", waiting.error);
    return Refusal(SubmitOutcome::kStorageFailed, storage_error_);
  }
  // A build that can start at once never waits, so --queue-limit 0 means "no waiting".
  const bool slot_free = running_ < options_.max_concurrent && waiting.count == 0;
  if (!slot_free && waiting.count >= options_.queue_limit) {
    return Refusal(SubmitOutcome::kQueueFull, "the queue is full (" + std::to_string(options_.queue_limit) +
                                                  " builds waiting); retry later or raise --queue-limit");
  }
  // Queued with no owner, for whichever replica has a free slot first; or, with a slot
  // free here and nothing waiting, claimed by this one as it is stored.
  BuildRecord r;
  r.id = member_id.empty() ? NewBuildId() : member_id;
  r.state = BuildState::kQueued;
  r.backend = request.simulate.empty() ? "tensorrt" : "simulated";
  r.request_json = request.json;
  r.model = request.resolved_model;
  r.created_at = NowUnix();
  r.group = group;
  const std::string doc = RecordToJson(r);
  const bool stored = slot_free ? queue().AddClaimed(r.id, doc, options_.replica, options_.lease_seconds).ok()
                                : store_.Put(r.id, "queued", doc);
  if (!stored) {
    storage_error_ = StorageError("a new record", store_.last_error());
    return Refusal(SubmitOutcome::kStorageFailed, storage_error_);
  }
  Announce(doc);
  const std::string id = r.id;
  if (slot_free) {
    StartClaimed(doc);
  } else {
    MaybeStart();
  }
  return {SubmitOutcome::kCreated, Get(id).record, "", id};  // it may have ended already (no worker)
}

GetResult BuildManager::Get(const std::string& id) {
  auto it = active_.find(id);
  if (it != active_.end()) return {GetOutcome::kFound, ActiveRecordJson(*it->second), "", id};
  if (auto unsaved = unsaved_.find(id); unsaved != unsaved_.end()) {
    return {GetOutcome::kFound, unsaved->second.second, "", id};
  }
  if (std::optional<std::string> doc = store_.Get(id)) return {GetOutcome::kFound, *doc, "", id};
  return Refusal(GetOutcome::kNotFound, "no build \"" + id + "\"; list builds with GET /builds", id);
}

CancelResult BuildManager::Cancel(const std::string& id, std::string_view body) {
  CancelAsk ask;
  std::string body_error;
  if (!ParseCancelBody(body, &ask.grace, &body_error)) return Refusal(CancelOutcome::kInvalid, body_error, id);
  return CancelBuild(id, ask);
}

CancelResult BuildManager::CancelBuild(const std::string& id, const CancelAsk& ask) {
  // The build may move between two reads (claimed, finished): decide again, a few times.
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (auto it = active_.find(id); it != active_.end()) return CancelActive(*it->second, ask);
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
      const ClaimResult won = queue().ClaimQueuedBuild(id, options_.replica, options_.lease_seconds);
      if (!won.ok()) break;
      if (!won.builds.empty()) return CancelQueued(won.builds.front().doc, ask);
    }
    CancelResult elsewhere = CancelElsewhere(r, ask);
    if (elsewhere.outcome != CancelOutcome::kNotFound) return elsewhere;
  }
  return Refusal(CancelOutcome::kUnavailable,
                 "the service cannot reach its store to cancel build " + id + " now (" + store_.last_error() +
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

CancelResult BuildManager::CancelQueued(const std::string& doc, const CancelAsk& ask) {
  Active* adopted = Adopt(doc);
  if (!adopted) return Refusal(CancelOutcome::kUnavailable, "the stored record is not one; retry later");
  Active& b = *adopted;
  const std::string id = b.record.id;
  if (b.record.cancel_reason.empty()) {
    const CancelAsk full = WithDefaults(ask, id);
    b.record.cancel_reason = full.reason;
    b.record.cancel_message = full.message;
    b.record.cancel_requested_at = NowUnix();
  }
  EndWithoutWorker(b, BuildState::kCancelled, b.record.cancel_message + " while it was queued");
  return {CancelOutcome::kCancelled, Get(id).record, "", id};
}

// A build another replica runs (or has just claimed): the request is left in its row
// for its owner, which applies it within a replica tick. kNotFound: it was not left
// (the build moved); kUnavailable: the store could not be reached.
CancelResult BuildManager::CancelElsewhere(const BuildRecord& r, const CancelAsk& ask) {
  const CancelAsk full = WithDefaults(ask, r.id);
  const ConditionalResult asked = queue().RequestCancel(r.id, CancelAskToJson(full));
  if (!asked.ok()) return Refusal(CancelOutcome::kUnavailable, asked.error, r.id);
  if (!asked.applied) return Refusal(CancelOutcome::kNotFound, "", r.id);
  BuildRecord shown = r;  // what the owner is about to write
  shown.state = BuildState::kCancelling;
  if (shown.cancel_reason.empty()) {
    shown.cancel_reason = full.reason;
    shown.cancel_message = full.message;
    shown.cancel_requested_at = NowUnix();
  }
  if (full.grace) shown.cancel_grace = *full.grace;
  return {CancelOutcome::kCancelling, RecordToJson(shown), "", r.id};
}

CancelResult BuildManager::CancelActive(Active& b, const CancelAsk& ask) {
  const std::string id = b.record.id;
  if (b.record.cancel_reason.empty() && !ask.reason.empty()) {
    b.record.cancel_reason = ask.reason;
    b.record.cancel_message = ask.message;
    b.record.cancel_requested_at = NowUnix();
  }
  if (b.record.state == BuildState::kRunning && b.worker) {
    b.record.state = BuildState::kCancelling;
    if (b.record.cancel_reason.empty()) {
      // The same reason goes into the record and, rewritten, into the stream's
      // cancel_requested event: "signal" when the service itself was signalled.
      b.record.cancel_reason = shutting_down_ ? "signal" : "api";
      b.record.cancel_message = shutting_down_ ? "the service is shutting down"
                                               : "cancelled by POST /builds/" + id + "/cancel";
      b.record.cancel_requested_at = NowUnix();
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

bool BuildManager::storage_healthy() const { return storage_error_.empty() && unsaved_.empty(); }

bool BuildManager::RetryUnsaved() {
  for (auto it = unsaved_.begin(); it != unsaved_.end();) {
    if (!store_.Put(it->first, it->second.first, it->second.second)) {
      storage_error_ = StorageError("record " + it->first, store_.last_error());
      return false;
    }
    it = unsaved_.erase(it);
  }
  if (!storage_error_.empty()) {
    // A failed event write leaves nothing to retry; a probe write says whether the
    // store takes writes again.
    if (!store_.Probe()) {
      storage_error_ = StorageError("a test write", store_.last_error());
      return false;
    }
    storage_error_.clear();
  }
  return true;
}

CancelResult BuildManager::CancelFor(const std::string& id, const std::string& reason, const std::string& message) {
  // The message quotes the client's reason.
  return CancelBuild(id, CancelAsk{std::nullopt, reason, ValidBoundedText(message, kMaxClientText)});
}

BuildManager::Subscription BuildManager::Subscribe(const std::string& id, EventSubscriber* subscriber) {
  Subscription s;
  auto it = active_.find(id);
  if (it != active_.end()) {
    s.found = true;
    s.live = true;
    s.last_seq = it->second->record.last_seq;
    it->second->subscribers.push_back(subscriber);
    return s;
  }
  const GetResult stored = Get(id);
  if (stored.outcome == GetOutcome::kNotFound) return s;
  s.found = true;
  BuildRecord r;
  if (!shutting_down_ && RecordFromJson(stored.record, &r) && !IsFinal(r.state)) {
    // Queued, or running on another replica: followed from its stored log.
    s.live = true;
    s.last_seq = followers_.Add(id, subscriber);
    return s;
  }
  s.last_seq = store_.LastSeq(id);
  return s;
}

bool BuildManager::ReplayPage(const std::string& id, uint64_t after, uint64_t up_to, std::vector<FramedEvent>* items,
                              uint64_t* last_read, std::string* error) {
  constexpr int kReplayPage = 256;  // events read per page (~40 KB of a typical log)
  items->clear();
  std::vector<StoredEvent> page;
  if (!store_.EventsPage(id, after, up_to, kReplayPage, &page)) {
    *error = "the stored events of " + id + " cannot be read (" + store_.last_error() + ")";
    return false;
  }
  *last_read = page.empty() ? up_to : page.back().seq;
  for (const StoredEvent& e : page) {
    FramedEvent item;
    if (FrameStoredEvent(e.seq, e.json, &item)) items->push_back(std::move(item));
  }
  return true;
}

void BuildManager::Unsubscribe(const std::string& id, EventSubscriber* subscriber) {
  auto it = active_.find(id);
  if (it == active_.end()) {
    followers_.Remove(id, subscriber);
    return;
  }
  auto& subs = it->second->subscribers;
  subs.erase(std::remove(subs.begin(), subs.end(), subscriber), subs.end());
}

void BuildManager::Shutdown(bool cancel_running, std::function<void()> done) {
  shutting_down_ = true;
  on_idle_ = std::move(done);
  std::vector<std::string> ids;
  for (auto& [id, build] : active_) ids.push_back(id);
  // Queued builds stay queued in the store, and builds of other replicas run on: their
  // live readers here are told the stream is over for now.
  followers_.EndAll();
  if (executor_->WorkersOutliveService()) {
    // Cluster jobs run on; the next start follows them again from their records.
    if (on_idle_) std::exchange(on_idle_, nullptr)();
    return;
  }
  for (const std::string& id : ids) {
    auto it = active_.find(id);
    if (cancel_running && it != active_.end() && it->second->record.state == BuildState::kRunning) Cancel(id);
  }
  if (running_ == 0 && on_idle_) std::exchange(on_idle_, nullptr)();
}

void BuildManager::KillAll() {
  if (executor_->WorkersOutliveService()) return;  // jobs are not the service's to kill on its way out
  for (auto& [id, build] : active_) {
    if (build->worker) {
      build->forced_kill = true;
      build->worker->ForceStop();
    }
  }
}

void BuildManager::MaybeStart() {
  // A claimed build that cannot start ends at once and frees its slot: claim again.
  while (!shutting_down_ && running_ < options_.max_concurrent) {
    const ClaimResult claimed =
        queue().ClaimQueued(options_.replica, options_.max_concurrent - static_cast<int>(running_),
                            options_.lease_seconds);
    if (!claimed.ok()) return QueueTrouble("claim queued builds", claimed.error);
    if (claimed.builds.empty()) return;
    for (const ClaimedBuild& c : claimed.builds) StartClaimed(c.doc);
  }
}

int64_t BuildManager::queued() {
  const CountResult waiting = queue().CountQueued();
  return waiting.ok() ? waiting.count : 0;
}

void BuildManager::ScheduleTick() {
  if (!tick_) tick_ = std::make_unique<asio::steady_timer>(io_);
  tick_->expires_after(kReplicaTick);
  tick_->async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    ReplicaTick();
    ScheduleTick();
  });
}

void BuildManager::ReplicaTick() {
  const auto now = std::chrono::steady_clock::now();
  const bool lease_work = now - last_lease_work_ >= std::chrono::duration<double>(options_.lease_seconds / 3);
  if (lease_work) {
    last_lease_work_ = now;
    RenewLeases();
    ConcludeOrphans(/*at_start=*/false);
  }
  ApplyCancelRequests();
  MaybeStart();
  // The change feed wakes the readers of remote builds; without one, or as a safety
  // net for a notification lost, they read the logs here.
  if (!watch_ || lease_work) followers_.PullAll();
}

void BuildManager::OnStoreChanges(const std::vector<StoreChange>& changes) {
  std::set<std::string> announced;  // one record per build and drain: the store has its latest
  bool records = false;
  for (const StoreChange& change : changes) {
    if (change.kind == StoreChange::Kind::kEvents) {
      followers_.Pull(change.id);
      continue;
    }
    records = true;
    if (record_watchers_.empty() || active_.count(change.id) || !announced.insert(change.id).second) continue;
    if (const std::optional<std::string> doc = store_.Get(change.id)) Announce(*doc);
  }
  if (records) MaybeStart();  // a build may have been queued
}

void BuildManager::RenewLeases() {
  if (active_.empty()) return;
  const RenewResult renewed = queue().RenewLeases(options_.replica, options_.lease_seconds);
  if (!renewed.ok()) return QueueTrouble("renew the leases of its builds", renewed.error);
  const std::set<std::string> kept(renewed.ids.begin(), renewed.ids.end());
  for (auto& [id, b] : active_) {
    if (b->worker && !b->fenced && !IsFinal(b->record.state) && !kept.contains(id)) Fence(*b);
  }
}

void BuildManager::Fence(Active& b) {
  std::fprintf(stderr,
               "trtwatch serve: build %s was concluded by another replica: this one (\"%s\") did not renew its "
               "lease in time (paused, or cut off from the database); its worker is stopped and the record is "
               "left as the other replica wrote it\n",
               b.record.id.c_str(), options_.replica.c_str());
  b.fenced = true;
  b.pending.clear();
  // A cluster's job is the other replica's now (it re-attached to it): this one only
  // stops reading it, at its end, and writes nothing of it meanwhile.
  if (!executor_->WorkersOutliveService()) b.worker->ForceStop();
}

void BuildManager::ApplyCancelRequests() {
  if (active_.empty()) return;
  const CancelRequestsResult taken = queue().TakeCancelRequests(options_.replica);
  if (!taken.ok()) return QueueTrouble("read the cancels asked through other replicas", taken.error);
  for (const CancelRequest& request : taken.requests) {
    auto it = active_.find(request.id);
    const std::optional<CancelAsk> ask = CancelAskFromJson(request.request);
    if (it != active_.end() && ask) CancelActive(*it->second, *ask);  // else it ended meanwhile, or no ask
  }
}

void BuildManager::QueueTrouble(const std::string& what, const std::string& error) {
  const bool first = storage_error_.empty();
  storage_error_ = "the service could not " + what + " (" + error + "); check the store";
  if (first) std::fprintf(stderr, "trtwatch serve: %s\n", storage_error_.c_str());
  ScheduleStorageRetry();
}

void BuildManager::Start(Active& b) {
  const std::string id = b.record.id;
  const std::string engine = b.request.simulate.empty() ? PartialEngine(id) : "";
  WorkerTask task{id, std::nullopt, options_.cancel_grace_seconds, b.request.gpu, b.request.simulate.empty()};
  double timeout = 0;
  std::string ignored;
  if (!b.request.timeout.empty() && ParseDuration(b.request.timeout, &timeout, &ignored)) task.timeout_seconds = timeout;
  ExecutionStart start =
      executor_->Start(task, WorkerArguments(b.request, engine, engine_cache_dir(), SeedHistory(b)));
  if (!start.execution) {
    EndWithoutWorker(b, BuildState::kFailed, start.error);
    return;
  }
  b.started = std::chrono::steady_clock::now();
  b.record.state = BuildState::kRunning;
  b.record.started_at = NowUnix();
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
      std::string_view data(build.out_chunk.data(), n);
      while (!data.empty()) {
        const size_t nl = data.find('\n');
        if (nl == std::string_view::npos) {
          build.partial.append(data);
          if (build.partial.size() > (1u << 20)) {  // no protocol line is this long
            build.partial.clear();
            ++build.bad_lines;
          }
          break;
        }
        if (build.partial.empty()) {
          HandleLine(build, data.substr(0, nl));
        } else {
          build.partial.append(data.substr(0, nl));
          std::string line = std::move(build.partial);
          build.partial.clear();
          HandleLine(build, line);
        }
        data.remove_prefix(nl + 1);
      }
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
    KeepTail(&build.err_tail);
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
  if (!EventFromJson(line, &event, &error) || event.seq <= b.record.last_seq || b.saw_finish) {
    ++b.bad_lines;  // not the protocol, out of order, or after the end: not relayed
    return;
  }
  std::string json_line(line);
  // The worker only sees the SIGTERM that carries the service's cancel: the stream
  // tells the reason and message the record keeps, as the record does.
  const bool service_cancel = !b.record.cancel_reason.empty();
  if (BoundWorkerTexts(&event)) {
    json_line = EventToJson(event);
  }
  if (event.type == EventType::kBuildStart) {
    event.build = b.record.id;  // the worker made up its own id; the service's names the build
    json_line = EventToJson(event);
  } else if (event.type == EventType::kCancelRequested && service_cancel && event.reason == CancelReason::kSignal) {
    event.reason = b.record.cancel_reason == "api" ? CancelReason::kApi : CancelReason::kSignal;
    event.message = b.record.cancel_message;
    json_line = EventToJson(event);
  } else if (event.type == EventType::kBuildFinish && service_cancel && event.status == BuildStatus::kCancelled) {
    event.error = b.record.cancel_message;
    json_line = EventToJson(event);
  }
  if (event.type == EventType::kBuildStart || event.type == EventType::kBuildFinish) {
    FoldCacheUse(event, &b.record);
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
  Relay(b, event, json_line);
  // Record watchers (and other replicas) see a new range, at most every few seconds:
  // the feed may send several a second at phase changes; the end stores the last one.
  const auto now = std::chrono::steady_clock::now();
  if (new_estimate && now - b.estimate_stored >= kEstimateStoreInterval) {
    b.estimate_stored = now;
    Persist(b);
  }
}

void BuildManager::Relay(Active& b, const Event& event, const std::string& json_line) {
  b.tree.Apply(event);
  b.record.last_seq = event.seq;
  b.pending.push_back({event.seq, json_line});
  Broadcast(b, event.seq, std::string(EventTypeName(event.type)), event.id, json_line);
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

void BuildManager::Broadcast(Active& b, uint64_t seq, const std::string& type, int64_t phase_id,
                             const std::string& json_line) {
  if (b.subscribers.empty()) return;
  FramedEvent item;
  item.seq = seq;
  item.step = type == "step";
  item.phase_id = phase_id;
  item.frame = std::make_shared<const std::string>(SseFrame(seq, type, json_line));
  const std::vector<EventSubscriber*> subs = b.subscribers;  // a subscriber may leave meanwhile
  for (EventSubscriber* s : subs) s->OnEvent(item);
}

void BuildManager::Flush(Active& b) {
  if (b.pending.empty() || b.fenced) return;
  if (b.storage_failure.empty() && !store_.AppendEvents(b.record.id, b.pending)) {
    StorageFailed(b, StorageError("the events of " + b.record.id, store_.last_error()));
  }
  b.pending.clear();
}

void BuildManager::StorageFailed(Active& b, const std::string& error) {
  std::fprintf(stderr, "trtwatch serve: %s\n", error.c_str());
  storage_error_ = error;
  ScheduleStorageRetry();
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
  if (b.fenced) {
    std::remove(PartialEngine(b.record.id).c_str());  // never leave a partial engine
    DropHistoryFolder(b);  // the replica that concluded it keeps what history there is
    b.worker.reset();
    --running_;
    Close(b);
    return SlotFreed();
  }
  // Whatever stderr still holds, read without waiting (the worker is gone).
  b.err_tail += b.worker->DiagnosticsNow(kStderrDrain);
  KeepTail(&b.err_tail);
  Flush(b);
  const std::optional<EndVerdict> verdict = b.worker->Judge(
      {b.saw_finish, StateFromStatus(b.finish.status), b.record.state == BuildState::kCancelling});
  b.record.job = b.worker->place().job;
  b.worker.reset();
  b.record.worker_pid = 0;
  if (b.grace) b.grace->cancel();
  --running_;

  BuildRecord& r = b.record;
  r.exit_code = exit.code;
  r.exit_signal = exit.signal;
  const std::string stderr_text = ValidUtf8(Trim(b.err_tail));
  const bool service_cancel = r.state == BuildState::kCancelling;
  if (service_cancel) r.cancel_stop = b.forced_kill ? "forced" : "cooperative";
  if (verdict && b.storage_failure.empty()) {
    // The scheduler ended it (a node that failed, its time limit, a cancel from outside):
    // what the executor says it was, whatever the stream said or left unsaid.
    if (b.saw_finish) {
      ReleaseHeldFinish(b, verdict);
    } else {
      AppendSynthesisedFinish(b, verdict->state, verdict->error);
    }
    r.state = verdict->state;
    r.error = verdict->error;
    r.end_reason = verdict->reason;
  } else if (!b.storage_failure.empty()) {
    const std::string error = "failed: " + b.storage_failure + "; the build was stopped";
    AppendSynthesisedFinish(b, BuildState::kFailed, error);
    r.state = BuildState::kFailed;
    r.error = error;
  } else if (b.saw_finish) {
    ReleaseHeldFinish(b, std::nullopt);  // the stream's own account stands
    r.state = StateFromStatus(b.finish.status);
    r.error = b.finish.error;
    // The worker only saw the SIGTERM that carried the service's cancel; the record
    // keeps the reason the client gave.
    if (r.state == BuildState::kCancelled && !r.cancel_message.empty()) r.error = r.cancel_message;
    if (b.finish.cancel_latency) {
      json latency = {{"to_first_false", b.finish.cancel_latency->to_first_false
                                             ? json(*b.finish.cancel_latency->to_first_false)
                                             : json(nullptr)},
                      {"to_return", b.finish.cancel_latency->to_return}};
      r.cancel_latency_json = latency.dump();
    }
    if (r.state == BuildState::kSucceeded && b.request.simulate.empty()) {  // simulations write no engine
      StoreEngine(r);
      if (r.state == BuildState::kSucceeded) StoreTimingCache(b);
    }
  } else {
    BuildState state = BuildState::kFailed;
    std::string error;
    if (service_cancel && b.forced_kill) {
      state = BuildState::kCancelled;
      char grace[32];
      std::snprintf(grace, sizeof grace, "%g", r.cancel_grace);
      error = r.cancel_message + "; forced stop: the worker did not stop within the " + grace +
              " s grace after SIGTERM and was killed (SIGKILL)";
    } else if (service_cancel && exit.terminated) {
      // The SIGTERM arrived before the worker installed its handler (a cancel right
      // after the start): it stopped at once, as asked.
      state = BuildState::kCancelled;
      error = r.cancel_message;
    } else if (r.exit_signal) {
      error = "the worker was killed by signal " + exit.signal_text + " before the build finished";
    } else if (r.exit_code) {
      error = "the worker exited with code " + std::to_string(*r.exit_code) + " before the build finished";
    } else {
      error = "the worker's exit status is unknown";
    }
    if (!stderr_text.empty() && state != BuildState::kCancelled) error += ": " + stderr_text;
    AppendSynthesisedFinish(b, state, error);
    r.state = state;
    r.error = error;
  }
  std::remove(PartialEngine(r.id).c_str());  // never leave a partial engine
  r.finished_at = NowUnix();
  r.phase_json = SnapshotJson(b.tree).dump();
  KeepHistory(b);
  Persist(b);
  metrics_.BuildFinished(BuildStateName(r.state),
                         std::chrono::duration<double>(std::chrono::steady_clock::now() - b.started).count());
  if (b.saw_finish && r.cache) metrics_.EngineCacheUsed(r.cache->state == "hit", r.engine_bytes.value_or(0));
  Close(b);
  SlotFreed();
}

std::string BuildManager::SeedHistory(const Active& b) {
  const std::string folder = HistoryWorkFolder(options_.data_dir, b.record.id);
  const SeedResult seeded =
      SeedHistoryFolder(store_, folder, b.record.backend, HistoryModelOf(b.request.simulate, b.request.resolved_model),
                        history::UnixNow());
  if (seeded.outcome == SeedResult::Outcome::kSeeded) return folder;
  std::fprintf(stderr, "trtwatch serve: warning: build %s runs without history: %s\n", b.record.id.c_str(),
               seeded.warning.c_str());
  RemoveHistoryFolder(folder);
  return "";
}

void BuildManager::KeepHistory(Active& b) {
  const std::string folder = HistoryWorkFolder(options_.data_dir, b.record.id);
  if (InspectPath(folder).kind != PathKind::kFolder) return;  // the build ran without history
  HarvestResult harvest = HarvestHistoryFolder(folder, b.record.id);
  if (harvest.entry && !b.record.history_key.empty() && harvest.entry->key != b.record.history_key) {
    harvest = {HarvestResult::Outcome::kNone, std::nullopt, "its entry names another build key than its stream"};
  }
  if (harvest.entry) {
    if (b.record.history_key.empty() && IsKeyDigest(harvest.entry->key)) b.record.history_key = harvest.entry->key;
    // The history says how the build ended as its record does: a scheduler's verdict
    // (Slurm's time limit reaches the worker as a SIGTERM, which it calls a cancel).
    if (harvest.entry->status != StatusFromState(b.record.state)) {
      harvest.entry->status = StatusFromState(b.record.state);
      harvest.entry->error = b.record.error;
    }
    const HistoryStoreResult stored = StoreHistoryEntry(store_, std::move(*harvest.entry), history::UnixNow());
    if (!stored.warning.empty()) {
      std::fprintf(stderr, "trtwatch serve: warning: build %s: history: %s\n", b.record.id.c_str(),
                   stored.warning.c_str());
    }
  } else if (b.saw_finish && !b.record.history_key.empty()) {
    // A worker that ended with a key appends its entry; one killed, or a build without
    // a key, leaves none: no news.
    std::fprintf(stderr, "trtwatch serve: warning: build %s is not in the history: %s\n", b.record.id.c_str(),
                 harvest.warning.c_str());
  }
  DropHistoryFolder(b);
}

void BuildManager::DropHistoryFolder(const Active& b) {
  const std::string folder = HistoryWorkFolder(options_.data_dir, b.record.id);
  if (InspectPath(folder).kind == PathKind::kMissing) return;
  if (const std::string why = RemoveHistoryFolder(folder); !why.empty()) {
    std::fprintf(stderr, "trtwatch serve: warning: build %s: %s\n", b.record.id.c_str(), why.c_str());
  }
}

void BuildManager::SlotFreed() {
  MaybeStart();
  if (shutting_down_ && running_ == 0 && on_idle_) std::exchange(on_idle_, nullptr)();
}

void BuildManager::StoreEngine(BuildRecord& r) {
  const std::string part = PartialEngine(r.id);
  const std::string final_path = engine_dir() + "/" + r.id + ".engine";
  if (std::rename(part.c_str(), final_path.c_str()) != 0) {
    r.state = BuildState::kFailed;
    r.error = "the worker reported success but left no engine at " + part;
    return;
  }
  r.engine = final_path;
  // Hashed once, here (its sidecar keeps the digest for every download's ETag).
  StoredFile file;
  std::string error;
  if (FileDigest(final_path, &file, &error)) {
    r.engine_bytes = file.size;
    r.engine_sha256 = file.sha256;
  }
}

namespace {

// The timing-cache file a request names, or empty.
std::string TimingCacheOf(const BuildRequest& request) {
  for (const auto& [flag, value] : request.options) {
    if (flag == "timing-cache" || flag == "timingCacheFile") return value;
  }
  return {};
}

}  // namespace

void BuildManager::StoreTimingCache(Active& b) {
  const std::string source = TimingCacheOf(b.request);
  if (source.empty() || InspectPath(source).kind != PathKind::kFile) return;
  // A copy: later builds may update the cache the request named.
  const std::string copy = engine_dir() + "/" + b.record.id + ".timing-cache";
  const std::string part = copy + ".part";
  std::error_code ec;
  std::filesystem::copy_file(source, part, std::filesystem::copy_options::overwrite_existing, ec);
  if (ec || std::rename(part.c_str(), copy.c_str()) != 0) {
    std::remove(part.c_str());
    return;  // the build stands; only its cache is not downloadable
  }
  StoredFile file;
  std::string error;
  if (!FileDigest(copy, &file, &error)) return;
  b.record.timing_cache = copy;
  b.record.timing_cache_bytes = file.size;
  b.record.timing_cache_sha256 = file.sha256;
}

ArtifactResult BuildManager::Artifact(const std::string& id, ArtifactKind kind) {
  const char* what = kind == ArtifactKind::kEngine ? "engine" : "timing cache";
  ArtifactResult result;
  GetResult got = Get(id);
  if (got.outcome == GetOutcome::kNotFound) return {ArtifactOutcome::kNotFound, "", {}, got.error};
  BuildRecord r;
  RecordFromJson(got.record, &r);
  if (!IsFinal(r.state)) {
    return {ArtifactOutcome::kNotYet, "", {}, "build " + id + " is still " + std::string(BuildStateName(r.state)) +
                                                 "; its " + what + " can be downloaded once it has succeeded "
                                                 "(follow GET /builds/" + id + "/events)"};
  }
  const std::string path = kind == ArtifactKind::kEngine ? r.engine : r.timing_cache;
  if (path.empty()) {
    std::string why = r.backend == "simulated"            ? "it was a simulated build, which makes no files"
                      : r.state != BuildState::kSucceeded ? "it ended " + std::string(BuildStateName(r.state))
                      : kind == ArtifactKind::kEngine     ? "it stored none"
                                                          : "its request named no \"timing-cache\" option";
    return {ArtifactOutcome::kNone, "", {}, "build " + id + " has no " + what + ": " + why};
  }
  if (InspectPath(path).kind != PathKind::kFile) {
    return {ArtifactOutcome::kNone, "", {}, "build " + id + "'s " + what + " is no longer stored (removed from " +
                                                engine_dir() + ")"};
  }
  result.path = path;
  if (!FileDigest(path, &result.file, &result.error)) return {ArtifactOutcome::kNone, "", {}, result.error};
  result.outcome = ArtifactOutcome::kFound;
  return result;
}

void BuildManager::EndWithoutWorker(Active& b, BuildState state, const std::string& error) {
  b.started = std::chrono::steady_clock::now();
  AppendSynthesisedFinish(b, state, error);
  b.record.state = state;
  b.record.error = error;
  b.record.finished_at = NowUnix();
  b.record.phase_json = SnapshotJson(b.tree).dump();
  DropHistoryFolder(b);  // a worker that is gone or never ran added nothing worth keeping
  Persist(b);
  metrics_.BuildFinished(BuildStateName(state), 0);
  Close(b);
}

void BuildManager::AppendSynthesisedFinish(Active& b, BuildState state, const std::string& error) {
  const std::shared_ptr<const TreeSnapshot> snap = b.tree.Snapshot();
  // Never before the last event the worker sent (after a restart `started` is now).
  const double since_start =
      b.record.started_at > 0 ? std::chrono::duration<double>(std::chrono::steady_clock::now() - b.started).count()
                              : 0;
  const double t = std::max(snap->last_event_t, since_start);
  auto append = [&](const Event& e) {
    const std::string line = EventToJson(e);
    b.tree.Apply(e);
    b.record.last_seq = e.seq;
    b.pending.push_back({e.seq, line});
    Broadcast(b, e.seq, std::string(EventTypeName(e.type)), e.id, line);
  };
  // The worker died with phases open: close them (children first), early, so every
  // phase_start of the log has its phase_finish.
  for (auto p = snap->active.rbegin(); p != snap->active.rend(); ++p) {
    Event f;
    f.type = EventType::kPhaseFinish;
    f.seq = b.record.last_seq + 1;
    f.t = t;
    f.id = p->id;
    f.phase = p->name;
    f.completed = p->done;
    f.total = p->total;
    f.elapsed = std::max(0.0, t - p->started_at);
    f.early = true;
    append(f);
  }
  Event e;
  e.type = EventType::kBuildFinish;
  e.seq = b.record.last_seq + 1;
  e.t = t;
  e.status = StatusFromState(state);
  e.error = ValidUtf8(error);
  e.elapsed = t;
  e.anomalies.unfinished_phases = static_cast<int64_t>(snap->active.size());
  append(e);
  Flush(b);
}

void BuildManager::Persist(Active& b) {
  if (!IsFinal(b.record.state)) b.record.phase_json = SnapshotJson(b.tree).dump();
  const std::string status(BuildStateName(b.record.state));
  std::string doc = RecordToJson(b.record);
  Announce(doc);
  unsaved_.erase(b.record.id);
  if (store_.Put(b.record.id, status, doc)) return;
  storage_error_ = StorageError("record " + b.record.id, store_.last_error());
  std::fprintf(stderr, "trtwatch serve: %s\n", storage_error_.c_str());
  unsaved_[b.record.id] = {status, std::move(doc)};
  if (b.worker && b.storage_failure.empty()) StorageFailed(b, storage_error_);
  ScheduleStorageRetry();
}

void BuildManager::Announce(const std::string& record_json) {
  if (record_watchers_.empty()) return;
  FramedEvent item;
  item.seq = ++record_writes_;
  item.frame = std::make_shared<const std::string>(SseFrame(item.seq, "record", record_json));
  for (RecordWatcher* w : std::vector<RecordWatcher*>(record_watchers_)) w->OnRecord(item);
}

void BuildManager::ScheduleStorageRetry() {
  if (!retry_timer_) retry_timer_ = std::make_unique<asio::steady_timer>(io_);
  retry_timer_->expires_after(std::chrono::seconds(kStorageRetrySeconds));
  retry_timer_->async_wait([this](const boost::system::error_code& ec) {
    if (!ec && !RetryUnsaved()) ScheduleStorageRetry();
  });
}

void BuildManager::Close(Active& b) {
  const std::string id = b.record.id;
  const std::optional<GroupTag> group = b.record.group;
  auto subs = std::move(b.subscribers);
  for (EventSubscriber* s : subs) s->OnEnd();
  active_.erase(id);  // closes the pipes; pending reads complete with operation_aborted
  // The group's last member to end here concludes it (its engines and manifest on disk).
  if (group) groups_->MemberEnded(group->id);
}

std::string BuildManager::ActiveRecordJson(Active& b) const {
  b.record.phase_json = SnapshotJson(b.tree).dump();
  return RecordToJson(b.record);
}

}  // namespace trtwatch::builds
