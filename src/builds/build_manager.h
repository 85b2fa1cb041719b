// BuildManager: the builds of the service and the MCP server, from request to record.
//
// Each build runs as its own worker (`trtwatch build ... --progress json`), started by
// an Executor (builds/executors/executor.h: local processes, Slurm jobs, or a fake
// launcher's in tests; app/ picks it); the manager reads
// the worker's event stream on the event loop, keeps the record's phase snapshot,
// appends the events to the stored log and fans them out to live subscribers (SSE
// streams). Builds wait in the store's queue (builds/stores/build_queue.h) and run
// only once claimed: any number of managers — replicas, one per process, on one
// PostgreSQL database — claim the oldest queued builds as they have free slots
// (max_concurrent each), renew the leases of those they run and conclude the builds
// of a replica that stopped renewing (interrupted). A build running on another
// replica is read from the store, followed from its stored log
// (builds/remote_followers.h) as the store's change feed announces its events
// (builds/change_watch.h), and cancelled by a request its owner takes (a tick every
// 250 ms on a shared store). Cancel asks the worker to stop (cooperatively: it
// cancels at the next step), then stops it by force after a grace period. A worker that
// dies without finishing ends its build as failed, with the signal or exit code in the
// error; the service serves on.
//
// The manager coordinates parts with one concern each: Claims (claims and leases,
// builds/claims.h), the worker's stream (builds/worker_stream.h) and the stored logs of
// builds elsewhere (builds/remote_followers.h), RecordWriter (record writes, watchers,
// storage health: builds/record_writer.h) and AfterBuild (history intake, engines,
// timing caches, downloads: builds/after_build.h). Its executor, clock and build groups
// are given by app/ (app/builds_root.cc), the composition root.
//
// Operations answer with typed outcomes (SubmitOutcome, ...) and the record or an
// error text; each front end maps them to its protocol: HTTP status codes (service/api_outcomes.cc),
// MCP tool results (mcp/manager_builds.cc).
//
// Threading: everything runs on the one thread that runs the io_context passed in;
// no method may be called from any other thread, so no member needs a lock.
// Subscribers are called on it too.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/steady_timer.hpp>

#include "builds/after_build.h"
#include "builds/fleet_timing_caches.h"
#include "builds/build_record.h"
#include "builds/build_request.h"  // kMaxCancelGraceSeconds, RequestPaths
#include "builds/claims.h"
#include "builds/event_subscriber.h"
#include "builds/executors/executor.h"
#include "builds/framed_event.h"
#include "builds/gpu_routing.h"
#include "builds/record_writer.h"
#include "builds/remote_cancel.h"
#include "builds/remote_followers.h"
#include "builds/stores/change_feed.h"
#include "core/event.h"
#include "protocol/utf8.h"

namespace boost::asio {
class io_context;
}

namespace trtwatch {
class Clock;
}

namespace trtwatch::builds {

struct ActiveBuild;
class BuildGroups;
class ChangeWatch;
class Metrics;
class RecordStore;

struct ManagerOptions {
  std::string data_dir;                  // canonical
  std::vector<std::string> model_roots;  // canonical
  std::string models_dir;                // uploaded models ("models:NAME"); empty: none
  int max_concurrent = 2;
  int queue_limit = 100;
  double cancel_grace_seconds = 10;  // SIGTERM -> SIGKILL; a cancel request may set its own
  std::string worker_exe = "/proc/self/exe";  // the default executor's workers run this
  std::string replica = "replica";  // this manager's name among its store's replicas (builds/replica_name.h)
  double lease_seconds = 15;        // a claim lasts this long unless renewed (every third of it)
  // Real builds share an engine cache in DATA_DIR/engine-cache (docs/cache.md); a
  // request turns it off for itself with "cache": false.
  bool engine_cache = true;
  // The fleet's timing caches (ARTIFACT_DIR/timing-caches): builds are given their GPU's
  // unless their request says "timing_cache": false or names a cache; empty: none.
  std::string timing_caches_dir;
  uint64_t timing_cache_max_bytes = 0;
  // The GPU types the executor routes to (--gpu-type): the targets a build group may name.
  GpuTable gpu_types;
  // What a build keeps of its events while the store does not take them (docs/deploy.md):
  // past either bound its worker is stopped and it fails with reason store_unavailable.
  size_t max_unstored_events = 100000;
  size_t max_unstored_bytes = 32u << 20;
};

enum class SubmitOutcome {
  kCreated,        // queued, or started at once
  kInvalid,        // the request is not a valid build request
  kQueueFull,      // queue_limit builds wait already: retry later
  kShuttingDown,   // the service is stopping: submit again after it restarts
  kStorageFailed,  // the record store takes no writes now: retry later
};
enum class GetOutcome { kFound, kNotFound };
enum class CancelOutcome {
  kCancelled,        // it was queued: it ended at once
  kCancelling,       // its worker was asked to stop (now or before: cancel is idempotent)
  kInvalid,          // the cancel body is invalid
  kNotFound,         // no such build
  kAlreadyFinished,  // nothing to cancel; `record` is its final record
  kUnavailable,      // the store could not be reached to find or ask the build's replica: retry later
};

// What an operation came to: `record` is the build's record (JSON) where there is
// one; `error` says what is wrong and what to do where the operation did not happen.
template <typename Outcome>
struct ManagerResult {
  Outcome outcome;
  std::string record;
  std::string error;
  std::string id;
};
// An operation that did not happen, and why (valid UTF-8: it may quote the client's bytes).
template <typename Outcome>
ManagerResult<Outcome> Refusal(Outcome outcome, const std::string& error, const std::string& id = "") {
  return {outcome, "", ValidUtf8(error), id};
}
using SubmitResult = ManagerResult<SubmitOutcome>;
using GetResult = ManagerResult<GetOutcome>;
using CancelResult = ManagerResult<CancelOutcome>;

class BuildManager {
 public:
  // `executor` runs the workers (never null); `clock` times leases, estimates and
  // builds (it outlives the manager).
  BuildManager(boost::asio::io_context& io, RecordStore& store, Metrics& metrics, ManagerOptions options,
               std::unique_ptr<Executor> executor, const Clock& clock);
  ~BuildManager();
  BuildManager(const BuildManager&) = delete;
  BuildManager& operator=(const BuildManager&) = delete;

  // Restart recovery: builds that were running here (on SQLite: any) or under a lapsed
  // lease become interrupted; queued ones run.
  void Recover();

  // A request body, read once by the front end (ParseJsonBody), checked once (its
  // paths, its GPU need against the executor), recording nothing: the typed request
  // travels with the build from here.
  Result<BuildRequest> Parse(const JsonBody& body) const;
  // `group`: the build is a member of that group, with the id `member_id` its group
  // gives it (builds/build_groups.h).
  SubmitResult Submit(BuildRequest request, const std::optional<GroupTag>& group = std::nullopt,
                      const std::string& member_id = "");
  // Parse, then Submit; kInvalid with Parse's error.
  SubmitResult Submit(const JsonBody& body, const std::optional<GroupTag>& group = std::nullopt,
                      const std::string& member_id = "");
  // A body not yet read (a test's, a tool's text): read once, then as above.
  SubmitResult Submit(std::string_view body) { return Submit(ParseJsonBody(body)); }
  // Build groups: one request, a build per GPU type (POST /builds with "targets"),
  // made over this manager by app/; `member_ended` is told the group of each member
  // that ends here (the last one concludes its group).
  void AttachGroups(BuildGroups& groups, std::function<void(const std::string& group_id)> member_ended);
  BuildGroups& groups() { return *groups_; }
  // The fleet's timing caches its builds are given (options' timing_caches_dir).
  const FleetTimingCaches& timing_caches() const { return timing_caches_; }
  GetResult Get(const std::string& id);
  // `body` is empty or {"grace": SECONDS or "DUR"}: how long the worker may take to
  // stop cooperatively before it is killed (default: the service's grace).
  // `by`: the user who asks (the record's cancelled_by); empty: no credentials asked for.
  CancelResult Cancel(const std::string& id, std::string_view body = {}, const std::string& by = {});
  // Where a finished build's engine or timing cache is, with its size and digest (from
  // its sidecar, or hashed once and kept there).
  ArtifactResult Artifact(const std::string& id, ArtifactKind kind);

  // Whether every record and event reached the store. A failed write makes the store
  // unhealthy until a retry succeeds (records are retried every second; see
  // RetryUnsaved); meanwhile new builds are refused with 503.
  bool storage_healthy() const { return writer_.healthy(); }
  const std::string& storage_error() const { return writer_.error(); }
  // Writes the records that could not be stored; returns storage_healthy().
  bool RetryUnsaved();
  // Cancel on behalf of another front end (the MCP server) or of a build group:
  // `reason` ("api", "budget", "group") and `message` are what the record and the
  // stream keep, instead of POST /builds/{id}/cancel's; `grace` as Cancel's body gives it.
  CancelResult CancelFor(const std::string& id, const std::string& reason, const std::string& message,
                         std::optional<double> grace = std::nullopt, const std::string& by = {});

  struct Subscription {
    bool found = false;
    bool live = false;      // subscribed: OnEvent/OnEnd will follow, for seq > last_seq
    uint64_t last_seq = 0;  // the log's last event when subscribed: replay up to here
  };
  // Subscribes `subscriber` to the events of `id` that follow its log's current end
  // (unless the build is over). The log up to there is read with ReplayPage. Unsubscribe
  // before `subscriber` dies.
  Subscription Subscribe(const std::string& id, EventSubscriber* subscriber);
  // One bounded page of stored events of `id` with `after` < seq <= `up_to`, as SSE
  // items: per-client replay memory stays one page however long the log. `*last_read`
  // is where the next page starts (`up_to` once the log is exhausted). Returns false
  // with `*error` set if the log cannot be read.
  bool ReplayPage(const std::string& id, uint64_t after, uint64_t up_to, std::vector<FramedEvent>* items,
                  uint64_t* last_read, std::string* error);
  void Unsubscribe(const std::string& id, EventSubscriber* subscriber);

  // Every record written from now on goes to `watcher` until UnwatchRecords. The
  // frames' ids count record writes since the service started.
  void WatchRecords(RecordWatcher* watcher) { writer_.Watch(watcher); }
  void UnwatchRecords(RecordWatcher* watcher) { writer_.Unwatch(watcher); }

  // Graceful stop: queued builds stay queued (they run after a restart); running ones
  // are cancelled (cancel_running) or left to finish. `done` runs once none runs.
  void Shutdown(bool cancel_running, std::function<void()> done);
  // Second signal: kill every worker group now.
  void KillAll();

  int64_t running() const { return running_; }
  // Where finished engines and timing-cache copies are kept (DATA_DIR/engines).
  std::string engine_dir() const { return after_.engine_dir(); }
  std::string engine_cache_dir() const { return options_.engine_cache ? options_.data_dir + "/engine-cache" : ""; }
  // Builds waiting in the store's queue, for every replica (0 when it cannot be read).
  int64_t queued();

 private:
  using Active = ActiveBuild;  // builds/active_build.h

  // Claims queued builds while this replica has free slots, and starts them.
  void MaybeStart();
  // A build this manager claimed (its document), now one it runs: its readers taken
  // over from the log followers. Null when the document is not a record.
  Active* Adopt(const std::string& doc, int64_t generation);
  // `accepted`: the request as this replica parsed it (it accepted the build); null:
  // parsed from the record (another replica accepted it).
  void StartClaimed(const std::string& doc, int64_t generation, const BuildRequest* accepted);
  // Builds nobody runs any more (their replica died, or this one restarted) concluded
  // as interrupted, as a worker's death is; a cluster's job is followed again.
  void ConcludeOrphans(bool at_start);
  void ConcludeOrphan(const ClaimedBuild& orphan);
  bool Reattach(Active& build);
  // On a shared store, every kReplicaTick: cancels asked through other replicas, claims,
  // readers of remote builds; every third of the lease: renewals and orphans.
  void ScheduleTick();
  void ReplicaTick();
  // Renews this replica's leases; a build it runs whose lease was not renewed was
  // concluded by another replica (this one was paused or cut off past its lease).
  void RenewLeases();
  // Such a build (or one whose fenced write the store refused): its worker is stopped,
  // nothing more of it is written or relayed, and its readers are ended (they reconnect
  // and read the record and log the other wrote). Logged, and counted on /metrics.
  void Fence(Active& build);
  // A worker slot is free: the queue moves on, and a shutdown waiting for it completes.
  void SlotFreed();
  void ApplyCancelRequests();
  // Other replicas' writes: new events of builds followed here, records for the
  // watchers, and a queue that may have grown.
  void OnStoreChanges(const std::vector<StoreChange>& changes);
  // A queue operation that failed: the store is unhealthy until a write succeeds.
  void QueueTrouble(const std::string& what, const std::string& error);
  CancelResult CancelBuild(const std::string& id, const CancelAsk& ask);
  CancelResult CancelActive(Active& build, const CancelAsk& ask);
  CancelResult CancelQueued(const ClaimedBuild& claimed, const CancelAsk& ask);
  CancelResult CancelElsewhere(const BuildRecord& record, const CancelAsk& ask);
  CancelAsk WithDefaults(const CancelAsk& ask, const std::string& id) const;
  void Start(Active& build);
  // Makes `worker` the build's, running: its place recorded and its streams read.
  void Follow(Active& build, std::unique_ptr<Execution> worker);
  void ReadOutput(const std::string& id);
  void ReadErrors(const std::string& id);
  void HandleLine(Active& build, std::string_view line);
  // An event of the worker's, as the log and the followers get it.
  void Relay(Active& build, const Event& event, const std::string& json_line);
  // The stream's build_finish held for the executor's verdict, as the verdict says (or
  // as the worker wrote it, without one).
  void ReleaseHeldFinish(Active& build, const std::optional<EndVerdict>& verdict);
  // A stop the service did not ask for, of a worker whose executor judges such ends (a
  // Slurm job cancelled from outside, its time limit): the worker's cancel_requested
  // and every event after it wait for the verdict, so that the log says who stopped it
  // (builds/executors/executor.h, JudgesUnsuccessfulEnds).
  bool HoldsOutsideStop(Active& build, const Event& event, const std::string& json_line);
  void ReleaseOutsideStop(Active& build, const std::optional<EndVerdict>& verdict);
  // The executor's verdict on a worker that ended; for a stop from outside without
  // one, the outside cancel it was.
  std::optional<EndVerdict> JudgeEnd(Active& build);
  // The record's cancel of a build stopped from outside (reason slurm_cancelled).
  void NoteOutsideCancel(Active& build, const EndVerdict& verdict);
  // Stores the pending events (fenced) and then sends them to the live readers.
  void Flush(Active& build);
  // The store did not take them: they wait (bounded: past the bound the build is stopped
  // and fails with reason store_unavailable) and are written again every kStoreRetry.
  void StoreOutage(Active& build, const std::string& why);
  void RetryStore(const std::string& id);
  void Reap(const std::string& id);
  // The worker is gone: the record says how the build ended, as the executor judged
  // it, as the stream reported it, or as the worker's exit tells.
  void Finish(Active& build, const WorkerExit& exit);
  void FinishFenced(Active& build);
  // The build's end, once the store took the log's end (at once, or after an outage).
  void ConcludeWhenStored(Active& build);
  // An orphan whose log has its build_finish already (its replica stopped after storing
  // it): the record says what the log says; nothing is appended.
  void EndAsLogged(Active& build, const Event& finish);
  void EndAsReported(Active& build);
  void Conclude(Active& build);
  void EndWithoutWorker(Active& build, BuildState state, const std::string& error);
  void RecordEndWithoutWorker(Active& build);
  void StorageFailed(Active& build, const std::string& what);
  void StartGraceTimer(Active& build, double seconds);
  void AppendSynthesisedFinish(Active& build, BuildState state, const std::string& error);
  void Persist(Active& build);
  void Close(Active& build);  // removes a finished build from the active set
  RequestPaths Paths() const;
  std::string ActiveRecordJson(Active& build) const;
  // Seconds on the injected clock since `since_ns`.
  double SecondsSince(int64_t since_ns) const;

  boost::asio::io_context& io_;
  RecordStore& store_;
  Metrics& metrics_;
  const ManagerOptions options_;
  const std::unique_ptr<Executor> executor_;
  const Clock& clock_;
  Claims claims_;
  AfterBuild after_;
  const FleetTimingCaches timing_caches_{options_.timing_caches_dir};
  RecordWriter writer_;
  std::map<std::string, std::unique_ptr<Active>> active_;  // claimed here: running, cancelling
  RemoteFollowers followers_;  // readers of builds not running here (queued, or on another replica)
  std::unique_ptr<boost::asio::steady_timer> tick_;  // the replica tick (shared stores only)
  std::unique_ptr<ChangeWatch> watch_;  // the store's change feed, where it has one; before followers_ goes
  int64_t running_ = 0;
  bool shutting_down_ = false;
  std::function<void()> on_idle_;  // Shutdown's `done`
  BuildGroups* groups_ = nullptr;  // AttachGroups'
  std::function<void(const std::string&)> member_ended_;
};

}  // namespace trtwatch::builds
