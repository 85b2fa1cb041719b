#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "builds/build_manager.h"

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "builds/build_request.h"
#include "builds/change_watch.h"
#include "builds/metrics.h"
#include "builds/replica_name.h"
#include "builds/stores/record_store.h"
#include "builds/worker_stream.h"
#include "core/build_id.h"
#include "core/clock.h"
#include "core/phase_tree.h"
#include "protocol/event_json.h"
#include "protocol/sse_frame.h"
#include "protocol/utf8.h"
#include "runner/duration.h"

namespace trtwatch::builds {

namespace asio = boost::asio;
using nlohmann::json;

namespace {

constexpr size_t kStderrDrain = 1 << 20;  // more than a pipe holds: all an exited worker left

// An operation that did not happen, and why: valid UTF-8, as it may quote the client's bytes.
template <typename Outcome>
ManagerResult<Outcome> Refusal(Outcome outcome, const std::string& error, const std::string& id = "") {
  return {outcome, "", ValidUtf8(error), id};
}

// How often a replica on a shared store looks for cancels asked through other replicas,
// queued builds to claim, and new events of the remote builds it has readers for: a
// cancel reaches the worker within about this long.
constexpr std::chrono::milliseconds kReplicaTick{250};
// A build's record is written for a new estimate at most this often.
constexpr double kEstimateStoreSeconds = 2;

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
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
  LineSplitter lines;    // its stdout, cut into protocol lines
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
  int64_t started_ns = 0;          // on the manager's clock
  std::optional<int64_t> estimate_stored_ns;  // when an estimate was last written to the store
};

BuildManager::BuildManager(asio::io_context& io, RecordStore& store, Metrics& metrics, ManagerOptions options,
                           std::unique_ptr<Executor> executor, const Clock& clock)
    : io_(io),
      store_(store),
      metrics_(metrics),
      options_(std::move(options)),
      executor_(std::move(executor)),
      clock_(clock),
      claims_(store.queue(), clock, options_.replica, options_.lease_seconds),
      after_(store, options_.data_dir),
      writer_(io, store),
      followers_(store) {
  if (claims_.shared()) ScheduleTick();
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

void BuildManager::AttachGroups(BuildGroups& groups, std::function<void(const std::string&)> member_ended) {
  groups_ = &groups;
  member_ended_ = std::move(member_ended);
}

RequestPaths BuildManager::Paths() const { return {options_.model_roots, options_.data_dir, options_.models_dir}; }

double BuildManager::SecondsSince(int64_t since_ns) const { return NsToSeconds(clock_.NowNs() - since_ns); }

void BuildManager::Recover() {
  ConcludeOrphans(/*at_start=*/true);
  MaybeStart();
}

void BuildManager::ConcludeOrphans(bool at_start) {
  const ClaimResult orphans = claims_.Orphans(at_start);
  if (!orphans.ok()) return QueueTrouble("claim the builds of replicas that stopped", orphans.error);
  for (const ClaimedBuild& orphan : orphans.builds) ConcludeOrphan(orphan);
}

void BuildManager::ConcludeOrphan(const ClaimedBuild& orphan) {
  Active* adopted = Adopt(orphan.doc);
  if (!adopted) return;
  Active& b = *adopted;
  const bool ours = claims_.WasOurs(orphan);
  b.record.last_seq = std::max(b.record.last_seq, store_.LastSeq(b.record.id));
  // The tree as the log left it: open phases are closed and `t` continues from there.
  store_.ForEachEvent(b.record.id, 0, [&](const StoredEvent& stored) {
    Event event;
    std::string ignored;
    if (EventFromJson(stored.json, &event, &ignored)) b.tree.Apply(event);
  });
  if (Reattach(b)) return;
  if (ours) executor_->StopLeftover({b.record.worker_pid, b.record.job});
  b.record.worker_pid = 0;
  const std::string owner = ReplicaNameError(orphan.previous_owner).empty() ? orphan.previous_owner : "?";
  EndWithoutWorker(b, BuildState::kInterrupted,
                   ours ? "interrupted: the service stopped while this build ran; submit it again"
                        : "interrupted: replica \"" + owner +
                              "\" stopped renewing its lease while this build ran (it was killed, or lost the "
                              "database); submit it again");
}

// A cluster's job runs on without the service that submitted it: followed again, from
// the record, to its end (its stream is read anew; what the log has is skipped).
bool BuildManager::Reattach(Active& b) {
  std::string request_error;
  if (!ParseBuildRequest(b.record.request_json, Paths(), &b.request, &request_error)) return false;
  std::unique_ptr<Execution> again = executor_->Reattach({b.record.worker_pid, b.record.job});
  if (!again) return false;
  const double ran = std::max(0.0, NowUnix() - b.record.started_at);
  b.started_ns = clock_.NowNs() - static_cast<int64_t>(ran * 1e9);
  const bool cancelling = b.record.state == BuildState::kCancelling;
  Follow(b, std::move(again));
  if (cancelling) {
    b.worker->RequestStop();
    StartGraceTimer(b, b.record.cancel_grace);
  }
  return true;
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
    return Refusal(SubmitOutcome::kStorageFailed, "the service cannot store builds now: " + writer_.error());
  }
  const CountResult waiting = claims_.CountQueued();  // across every replica
  if (!waiting.ok()) {
    writer_.Failed(StorageError("a new record", waiting.error));
    return Refusal(SubmitOutcome::kStorageFailed, writer_.error());
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
  const bool stored = slot_free ? claims_.AddClaimed(r.id, doc).ok() : store_.Put(r.id, "queued", doc);
  if (!stored) {
    writer_.Failed(StorageError("a new record", store_.last_error()));
    return Refusal(SubmitOutcome::kStorageFailed, writer_.error());
  }
  writer_.Announce(doc);
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
  if (std::optional<std::string> unsaved = writer_.Unsaved(id)) return {GetOutcome::kFound, *unsaved, "", id};
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
      const ClaimResult won = claims_.QueuedBuild(id);
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
  const ConditionalResult asked = claims_.RequestCancel(r.id, CancelAskToJson(full));
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


bool BuildManager::RetryUnsaved() { return writer_.RetryUnsaved(); }

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
    const ClaimResult claimed = claims_.Queued(options_.max_concurrent - static_cast<int>(running_));
    if (!claimed.ok()) return QueueTrouble("claim queued builds", claimed.error);
    if (claimed.builds.empty()) return;
    for (const ClaimedBuild& c : claimed.builds) StartClaimed(c.doc);
  }
}

int64_t BuildManager::queued() {
  const CountResult waiting = claims_.CountQueued();
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
  const bool lease_work = claims_.LeaseWorkDue();
  if (lease_work) {
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
    if (!writer_.watched() || active_.count(change.id) || !announced.insert(change.id).second) continue;
    if (const std::optional<std::string> doc = store_.Get(change.id)) writer_.Announce(*doc);
  }
  if (records) MaybeStart();  // a build may have been queued
}

void BuildManager::RenewLeases() {
  std::vector<std::string> ids;
  for (const auto& [id, b] : active_) ids.push_back(id);
  const RenewOutcome renewed = claims_.Renew(ids);
  if (!renewed.ok()) return QueueTrouble("renew the leases of its builds", renewed.error);
  for (const std::string& id : renewed.lost) {
    Active& b = *active_.at(id);
    if (b.worker && !b.fenced && !IsFinal(b.record.state)) Fence(b);
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
  const CancelRequestsResult taken = claims_.TakeCancelRequests();
  if (!taken.ok()) return QueueTrouble("read the cancels asked through other replicas", taken.error);
  for (const CancelRequest& request : taken.requests) {
    auto it = active_.find(request.id);
    const std::optional<CancelAsk> ask = CancelAskFromJson(request.request);
    if (it != active_.end() && ask) CancelActive(*it->second, *ask);  // else it ended meanwhile, or no ask
  }
}

void BuildManager::QueueTrouble(const std::string& what, const std::string& error) {
  const bool first = writer_.error().empty();
  writer_.Failed("the service could not " + what + " (" + error + "); check the store");
  if (first) std::fprintf(stderr, "trtwatch serve: %s\n", writer_.error().c_str());
}

void BuildManager::Start(Active& b) {
  const std::string id = b.record.id;
  const std::string engine = b.request.simulate.empty() ? after_.PartialEngine(id) : "";
  WorkerTask task{id, std::nullopt, options_.cancel_grace_seconds, b.request.gpu, b.request.simulate.empty()};
  double timeout = 0;
  std::string ignored;
  if (!b.request.timeout.empty() && ParseDuration(b.request.timeout, &timeout, &ignored)) task.timeout_seconds = timeout;
  ExecutionStart start =
      executor_->Start(task, WorkerArguments(b.request, engine, engine_cache_dir(), after_.SeedHistory(b.record, b.request)));
  if (!start.execution) {
    EndWithoutWorker(b, BuildState::kFailed, start.error);
    return;
  }
  b.started_ns = clock_.NowNs();
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
  if (!EventFromJson(line, &event, &error) || event.seq <= b.record.last_seq || b.saw_finish) {
    ++b.bad_lines;  // not the protocol, out of order, or after the end: not relayed
    return;
  }
  const std::string json_line = AdjustWorkerEvent(b.record, &event) ? EventToJson(event) : std::string(line);
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
  if (new_estimate && (!b.estimate_stored_ns || SecondsSince(*b.estimate_stored_ns) >= kEstimateStoreSeconds)) {
    b.estimate_stored_ns = clock_.NowNs();
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
  writer_.Failed(error);
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
  if (r.state == BuildState::kCancelling) r.cancel_stop = b.forced_kill ? "forced" : "cooperative";
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
    EndAsReported(b);
  } else {
    const WorkerDeath death = JudgeWorkerDeath(r, exit, b.forced_kill, ValidUtf8(Trim(b.err_tail)));
    AppendSynthesisedFinish(b, death.state, death.error);
    r.state = death.state;
    r.error = death.error;
  }
  Conclude(b);
}

// Another replica concluded it: nothing of it is written here.
void BuildManager::FinishFenced(Active& b) {
  after_.DropPartialEngine(b.record.id);  // never leave a partial engine
  after_.DropHistory(b.record.id);        // the replica that concluded it keeps what history there is
  b.worker.reset();
  --running_;
  Close(b);
  SlotFreed();
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
  if (b.finish.cancel_latency) {
    const auto& latency = *b.finish.cancel_latency;
    r.cancel_latency_json =
        json{{"to_first_false", latency.to_first_false ? json(*latency.to_first_false) : json(nullptr)},
             {"to_return", latency.to_return}}
            .dump();
  }
  if (r.state == BuildState::kSucceeded && b.request.simulate.empty()) {  // simulations write no engine
    after_.StoreEngine(r);
    if (r.state == BuildState::kSucceeded) after_.StoreTimingCache(r, b.request);
  }
}

// The record's end written, the history taken in, the slot freed.
void BuildManager::Conclude(Active& b) {
  BuildRecord& r = b.record;
  after_.DropPartialEngine(r.id);  // never leave a partial engine
  r.finished_at = NowUnix();
  r.phase_json = SnapshotJson(b.tree);
  after_.KeepHistory(r, b.saw_finish);
  Persist(b);
  metrics_.BuildFinished(BuildStateName(r.state), SecondsSince(b.started_ns));
  if (b.saw_finish && r.cache) metrics_.EngineCacheUsed(r.cache->state == "hit", r.engine_bytes.value_or(0));
  Close(b);
  SlotFreed();
}




void BuildManager::SlotFreed() {
  MaybeStart();
  if (shutting_down_ && running_ == 0 && on_idle_) std::exchange(on_idle_, nullptr)();
}


ArtifactResult BuildManager::Artifact(const std::string& id, ArtifactKind kind) {
  GetResult got = Get(id);
  if (got.outcome == GetOutcome::kNotFound) return {ArtifactOutcome::kNotFound, "", {}, got.error};
  BuildRecord r;
  RecordFromJson(got.record, &r);
  return after_.Artifact(r, kind);
}

void BuildManager::EndWithoutWorker(Active& b, BuildState state, const std::string& error) {
  b.started_ns = clock_.NowNs();
  AppendSynthesisedFinish(b, state, error);
  b.record.state = state;
  b.record.error = error;
  b.record.finished_at = NowUnix();
  b.record.phase_json = SnapshotJson(b.tree);
  after_.DropHistory(b.record.id);  // a worker that is gone or never ran added nothing worth keeping
  Persist(b);
  metrics_.BuildFinished(BuildStateName(state), 0);
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
  if (writer_.Put(b.record.id, std::string(BuildStateName(b.record.state)), RecordToJson(b.record))) return;
  if (b.worker && b.storage_failure.empty()) StorageFailed(b, writer_.error());
}



void BuildManager::Close(Active& b) {
  const std::string id = b.record.id;
  const std::optional<GroupTag> group = b.record.group;
  auto subs = std::move(b.subscribers);
  for (EventSubscriber* s : subs) s->OnEnd();
  active_.erase(id);  // closes the pipes; pending reads complete with operation_aborted
  // The group's last member to end here concludes it (its engines and manifest on disk).
  if (group && member_ended_) member_ended_(group->id);
}

std::string BuildManager::ActiveRecordJson(Active& b) const {
  b.record.phase_json = SnapshotJson(b.tree);
  return RecordToJson(b.record);
}

}  // namespace trtwatch::builds
