// BuildManager: the service's builds, from request to record.
//
// Each build runs as its own worker process (`trtwatch build ... --progress json`, in
// its own process group); the manager reads the worker's event stream on the event
// loop, keeps the record's phase snapshot, appends the events to the stored log and
// fans them out to live subscribers (SSE streams). Builds beyond max_concurrent wait
// in a queue. Cancel sends SIGTERM to the worker's group (it cancels cooperatively),
// then SIGKILL after a grace period. A worker that dies without finishing ends its
// build as failed, with the signal or exit code in the error; the service serves on.
//
// Threading: everything runs on the one thread that runs the io_context passed in;
// no method may be called from any other thread. Subscribers are called on it too.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/steady_timer.hpp>

#include "service/build_record.h"
#include "service/build_request.h"  // kMaxCancelGraceSeconds
#include "service/sse.h"

namespace boost::asio {
class io_context;
}

namespace trtwatch::service {

class Metrics;
class RecordStore;

struct ManagerOptions {
  std::string data_dir;                  // canonical
  std::vector<std::string> model_roots;  // canonical
  int max_concurrent = 2;
  int queue_limit = 100;
  double cancel_grace_seconds = 10;  // SIGTERM -> SIGKILL; a cancel request may set its own
  std::string worker_exe = "/proc/self/exe";
};

// A live reader of one build's events (an SSE stream).
class EventSubscriber {
 public:
  virtual void OnEvent(const SseItem& item) = 0;
  // The build's stream is over (its build_finish was delivered), or the service stops.
  virtual void OnEnd() = 0;

 protected:
  ~EventSubscriber() = default;
};

struct ApiResult {
  int status = 200;  // HTTP status
  std::string body;  // JSON: the record, or {"error": ...}
  std::string id;
  int retry_after = 0;  // seconds, for 429/503: sent as Retry-After
};


class BuildManager {
 public:
  BuildManager(boost::asio::io_context& io, RecordStore& store, Metrics& metrics, ManagerOptions options);
  ~BuildManager();
  BuildManager(const BuildManager&) = delete;
  BuildManager& operator=(const BuildManager&) = delete;

  // Restart recovery: builds that were running become interrupted; queued ones run.
  void Recover();

  ApiResult Submit(std::string_view body);
  ApiResult Get(const std::string& id);
  // `body` is empty or {"grace": SECONDS or "DUR"}: how long the worker may take to
  // stop cooperatively before it is killed (default: the service's grace).
  ApiResult Cancel(const std::string& id, std::string_view body = {});

  // Whether every record and event reached the store. A failed write makes the store
  // unhealthy until a retry succeeds (records are retried every second; see
  // RetryUnsaved); meanwhile new builds are refused with 503.
  bool storage_healthy() const;
  const std::string& storage_error() const { return storage_error_; }
  // Writes the records that could not be stored; returns storage_healthy().
  bool RetryUnsaved();
  // Cancel on behalf of another front end (the MCP server): `reason` ("api", "budget")
  // and `message` are what the record keeps, instead of POST /builds/{id}/cancel's.
  ApiResult CancelFor(const std::string& id, const std::string& reason, const std::string& message);

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
  bool ReplayPage(const std::string& id, uint64_t after, uint64_t up_to, std::vector<SseItem>* items,
                  uint64_t* last_read, std::string* error);
  void Unsubscribe(const std::string& id, EventSubscriber* subscriber);

  // Graceful stop: queued builds stay queued (they run after a restart); running ones
  // are cancelled (cancel_running) or left to finish. `done` runs once none runs.
  void Shutdown(bool cancel_running, std::function<void()> done);
  // Second signal: SIGKILL every worker group now.
  void KillAll();

  int64_t running() const { return running_; }
  int64_t queued() const { return static_cast<int64_t>(queue_.size()); }

 private:
  struct Active;

  void MaybeStart();
  void Start(Active& build);
  void ReadOutput(const std::string& id);
  void ReadErrors(const std::string& id);
  void HandleLine(Active& build, std::string_view line);
  void Flush(Active& build);
  void Reap(const std::string& id);
  void Finish(Active& build, int wait_status);
  void EndWithoutWorker(Active& build, BuildState state, const std::string& error);
  void StorageFailed(Active& build, const std::string& what);
  void StartGraceTimer(Active& build, double seconds);
  void ScheduleStorageRetry();
  void AppendSynthesisedFinish(Active& build, BuildState state, const std::string& error);
  void Broadcast(Active& build, uint64_t seq, const std::string& type, int64_t phase_id, const std::string& json);
  void Persist(Active& build);
  void Close(Active& build);  // removes a finished build from the active set
  std::string ActiveRecordJson(Active& build) const;
  std::string EngineDir() const { return options_.data_dir + "/engines"; }

  boost::asio::io_context& io_;
  RecordStore& store_;
  Metrics& metrics_;
  const ManagerOptions options_;
  std::map<std::string, std::unique_ptr<Active>> active_;  // queued, running, cancelling
  std::deque<std::string> queue_;                          // ids waiting, oldest first
  int64_t running_ = 0;
  bool shutting_down_ = false;
  std::function<void()> on_idle_;  // Shutdown's `done`
  // Records whose last write failed (id -> {status, document}), newest state; they
  // are served from here and written again until the store takes them.
  std::map<std::string, std::pair<std::string, std::string>> unsaved_;
  std::string storage_error_;  // the last storage failure; empty once healthy again
  std::unique_ptr<boost::asio::steady_timer> retry_timer_;
};

}  // namespace trtwatch::service
