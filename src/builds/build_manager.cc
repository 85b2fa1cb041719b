#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "builds/build_manager.h"

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "builds/active_build.h"
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

// How often a replica on a shared store looks for cancels asked through other replicas,
// queued builds to claim, and new events of the remote builds it has readers for: a
// cancel reaches the worker within about this long.
constexpr std::chrono::milliseconds kReplicaTick{250};

}  // namespace


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
  if (BuildRecord claimed; RecordFromJson(orphan.doc, &claimed) && active_.count(claimed.id)) {
    // One this replica runs, whose lease lapsed while the store was out of reach: held
    // again, under the new generation (its writes under the old one would be refused).
    active_.at(claimed.id)->generation = orphan.generation;
    return;
  }
  Active* adopted = Adopt(orphan.doc, orphan.generation);
  if (!adopted) return;
  Active& b = *adopted;
  const bool ours = claims_.WasOurs(orphan);
  const Result<uint64_t> stored_seq = store_.LastSeq(b.record.id);
  b.record.last_seq = std::max(b.record.last_seq, stored_seq.ok() ? *stored_seq : 0);
  b.stored_seq = b.record.last_seq;
  // The tree as the log left it: open phases are closed and `t` continues from there;
  // a log that cannot be read to its end leaves the tree as far as it was read.
  std::optional<Event> logged_finish;
  (void)store_.ForEachEvent(b.record.id, 0, [&](const StoredEvent& stored) {
    Event event;
    std::string ignored;
    if (!EventFromJson(stored.json, &event, &ignored)) return;
    b.tree.Apply(event);
    if (event.type == EventType::kBuildFinish) logged_finish = event;
  });
  if (logged_finish) return EndAsLogged(b, *logged_finish);  // the first conclusion stands
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
  Result<BuildRequest> request = ParseBuildRequest(b.record.request_json, Paths());
  if (!request.ok()) return false;
  b.request = std::move(request).value();
  std::unique_ptr<Execution> again = executor_->Reattach({b.record.worker_pid, b.record.job});
  if (!again) return false;
  const double ran = std::max(0.0, clock_.UnixSeconds() - b.record.started_at);
  b.started_ns = clock_.NowNs() - static_cast<int64_t>(ran * 1e9);
  const bool cancelling = b.record.state == BuildState::kCancelling;
  Follow(b, std::move(again));
  if (cancelling) {
    b.worker->RequestStop();
    StartGraceTimer(b, b.record.cancel_grace);
  }
  return true;
}

BuildManager::Active* BuildManager::Adopt(const std::string& doc, int64_t generation) {
  auto build = std::make_unique<Active>();
  if (!RecordFromJson(doc, &build->record) || active_.count(build->record.id)) return nullptr;
  Active& b = *build;
  b.generation = generation;
  b.stored_seq = b.record.last_seq;
  const std::string id = b.record.id;
  active_[id] = std::move(build);
  b.subscribers = followers_.Take(id);  // they have had the log up to its end
  return &b;
}

void BuildManager::StartClaimed(const std::string& doc, int64_t generation, const BuildRequest* accepted) {
  Active* adopted = Adopt(doc, generation);
  if (!adopted) return;
  Active& b = *adopted;
  if (accepted) {
    b.request = *accepted;  // accepted here: parsed and checked once, by Parse
  } else {
    // Accepted by another replica: parsed once here, from the record it stored.
    Result<BuildRequest> stored = ParseBuildRequest(b.record.request_json, Paths());
    if (!stored.ok()) {
      EndWithoutWorker(b, BuildState::kFailed, "cannot run on replica \"" + options_.replica + "\": " + stored.error());
      return;
    }
    b.request = std::move(stored).value();
  }
  Start(b);
}

Result<BuildRequest> BuildManager::Parse(const JsonBody& body) const {
  Result<BuildRequest> parsed = ParseBuildRequest(body, Paths());
  if (!parsed.ok() || parsed->gpu.empty()) return parsed;
  if (const GpuCheck gpu = executor_->CheckGpu(parsed->gpu); !gpu.accepted()) return Status::Error(gpu.error);
  return parsed;
}

SubmitResult BuildManager::Submit(const JsonBody& body, const std::optional<GroupTag>& group,
                                  const std::string& member_id) {
  Result<BuildRequest> parsed = Parse(body);
  if (!parsed.ok()) return Refusal(SubmitOutcome::kInvalid, parsed.error());
  return Submit(std::move(parsed).value(), group, member_id);
}

SubmitResult BuildManager::Submit(BuildRequest request, const std::optional<GroupTag>& group,
                                  const std::string& member_id) {
  if (shutting_down_) {
    return Refusal(SubmitOutcome::kShuttingDown, "the service is shutting down; submit again after it restarts");
  }
  if (!RetryUnsaved()) {
    return Refusal(SubmitOutcome::kStorageFailed, "the service cannot store builds now: " + writer_.error());
  }
  const CountResult waiting = claims_.CountQueued();  // across every replica
  if (!waiting.ok()) {
    writer_.Failed(writer_.StoreError("a new record", waiting.error));
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
  r.created_at = clock_.UnixSeconds();
  r.group = group;
  r.submitted_by = request.submitted_by;
  const std::string doc = RecordToJson(r);
  Status stored = OkStatus();
  if (!slot_free) {
    stored = store_.Put(r.id, "queued", doc);
  } else if (const QueueResult added = claims_.AddClaimed(r.id, doc); !added.ok()) {
    stored = Status::Error(added.error);
  }
  if (!stored.ok()) {
    writer_.Failed(writer_.StoreError("a new record", stored.error()));
    return Refusal(SubmitOutcome::kStorageFailed, writer_.error());
  }
  writer_.Announce(doc);
  const std::string id = r.id;
  if (slot_free) {
    StartClaimed(doc, kFirstLeaseGeneration, &request);
  } else {
    MaybeStart();
  }
  return {SubmitOutcome::kCreated, Get(id).record, "", id};  // it may have ended already (no worker)
}

GetResult BuildManager::Get(const std::string& id) {
  auto it = active_.find(id);
  if (it != active_.end()) return {GetOutcome::kFound, ActiveRecordJson(*it->second), "", id};
  if (std::optional<std::string> unsaved = writer_.Unsaved(id)) return {GetOutcome::kFound, *unsaved, "", id};
  // A store that cannot be read finds no build, as an absent record.
  if (Result<std::optional<std::string>> doc = store_.Get(id); doc.ok() && *doc) {
    return {GetOutcome::kFound, **doc, "", id};
  }
  return Refusal(GetOutcome::kNotFound, "no build \"" + id + "\"; list builds with GET /builds", id);
}

bool BuildManager::RetryUnsaved() { return writer_.RetryUnsaved(); }

BuildManager::Subscription BuildManager::Subscribe(const std::string& id, EventSubscriber* subscriber) {
  Subscription s;
  auto it = active_.find(id);
  if (it != active_.end()) {
    s.found = true;
    s.live = true;
    s.last_seq = it->second->stored_seq;  // what was stored is what its readers got: replayed from the log
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
  const Result<uint64_t> stored_seq = store_.LastSeq(id);
  s.last_seq = stored_seq.ok() ? *stored_seq : 0;
  return s;
}

bool BuildManager::ReplayPage(const std::string& id, uint64_t after, uint64_t up_to, std::vector<FramedEvent>* items,
                              uint64_t* last_read, std::string* error) {
  constexpr int kReplayPage = 256;  // events read per page (~40 KB of a typical log)
  items->clear();
  const Result<std::vector<StoredEvent>> read = store_.EventsPage(id, after, up_to, kReplayPage);
  if (!read.ok()) {
    *error = "the stored events of " + id + " cannot be read (" + read.error() + ")";
    return false;
  }
  const std::vector<StoredEvent>& page = *read;
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
    for (const ClaimedBuild& c : claimed.builds) StartClaimed(c.doc, c.generation, nullptr);
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
    if (const Result<std::optional<std::string>> doc = store_.Get(change.id); doc.ok() && *doc) writer_.Announce(**doc);
  }
  if (records) MaybeStart();  // a build may have been queued
}

void BuildManager::RenewLeases() {
  std::vector<std::string> ids;
  for (const auto& [id, b] : active_) ids.push_back(id);
  const RenewOutcome renewed = claims_.Renew(ids);
  if (!renewed.ok()) return QueueTrouble("renew the leases of its builds", renewed.error);
  for (const std::string& id : renewed.lost) {
    auto it = active_.find(id);
    if (it == active_.end() || it->second->fenced) continue;
    Active& b = *it->second;
    Fence(b);
    if (!b.worker && b.concluding) ConcludeWhenStored(b);  // its end waited for the store: it is not ours to write
  }
}

void BuildManager::Fence(Active& b) {
  if (b.fenced) return;
  std::fprintf(stderr,
               "trtwatch serve: build %s is another replica's now: this one (\"%s\") lost its lease (paused, or cut "
               "off from the database, past the lease); its worker is stopped and nothing more of it is written "
               "here (the store refuses it)\n",
               b.record.id.c_str(), options_.replica.c_str());
  metrics_.BuildFenced();
  b.fenced = true;
  b.pending.clear();
  b.pending_bytes = 0;
  // A cluster's job is the other replica's now (it re-attached to it): this one only
  // stops reading it, at its end, and writes nothing of it meanwhile.
  if (b.worker && !executor_->WorkersOutliveService()) b.worker->ForceStop();
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

}  // namespace trtwatch::builds
