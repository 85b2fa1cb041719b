#include "attach/watched_build.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "core/build_id.h"
#include "core/build_session.h"
#include "core/clock.h"
#include "core/mutex.h"
#include "platform/attach_channel.h"

namespace trtwatch::attach {

namespace {

// How long the delivery thread (never TensorRT's) waits for room in a full channel
// before the process stops being watched.
constexpr auto kFullChannelPatience = std::chrono::seconds(2);

// What this process shares between its watched builds. One per process: a child made
// by fork finds its parent's (its pid differs) and makes its own.
struct ProcessState {
  int pid = 0;
  AttachChannel channel;
  // Cleared once the channel failed. Atomic: read by every delivery thread.
  std::atomic<bool> watching{true};
  std::atomic<int> next_build{1};
  Mutex mu;
  std::map<int, Monitor*> active GUARDED_BY(mu);  // build number -> its monitor
  // The cancel listener runs while a build does (none between builds: a program that
  // forks between builds forks no thread of trtwatch's). Its own lock, never held by
  // the listener's thread, so that it can be joined under it.
  Mutex listener_mu;  // taken before mu, never after
  std::unique_ptr<CancelListener> listener GUARDED_BY(listener_mu);
  // The state this process inherited from its parent by fork, kept (never freed: the
  // forked copy's threads do not exist here) and reachable.
  ProcessState* inherited = nullptr;

  explicit ProcessState(AttachChannel opened) : pid(CurrentProcessId()), channel(std::move(opened)) {}

  void StopWatching(const char* why) {
    if (watching.exchange(false)) {
      std::fprintf(stderr, "trtwatch: %s; the builds of this process go on unwatched\n", why);
    }
  }
  // Registers a build, starting the listener for the first one.
  void Add(int build, Monitor* monitor) {
    MutexLock listening(&listener_mu);
    if (!listener) {
      listener = CancelListener::Start(channel.token(), pid, [this](std::string_view message) { Cancel(message); });
    }
    MutexLock lock(&mu);
    active[build] = monitor;
  }
  // Forgets a build, stopping the listener after the last one.
  void Remove(int build) {
    MutexLock listening(&listener_mu);
    bool none_left = false;
    {
      MutexLock lock(&mu);
      active.erase(build);
      none_left = active.empty();
    }
    if (none_left) listener.reset();
  }
  void Cancel(std::string_view number) {
    const int build = std::atoi(std::string(number).c_str());
    MutexLock lock(&mu);
    const auto found = active.find(build);
    if (found != active.end()) found->second->RequestCancel(CancelReason::kApi, "cancelled by trtwatch run");
  }
};

// The process's state, made on the first build of this process (nothing before: a
// program that never builds pays nothing). Null without a channel. Made states are
// never freed: a forked child's copy of its parent's may still be pointed at.
ProcessState* State() {
  static std::mutex made_mu;
  static std::atomic<ProcessState*> state{nullptr};
  static std::atomic<bool> unwatched{false};
  ProcessState* current = state.load(std::memory_order_acquire);
  if (current != nullptr && current->pid == CurrentProcessId()) return current;
  if (current == nullptr && unwatched.load()) return nullptr;
  std::lock_guard<std::mutex> lock(made_mu);
  current = state.load();
  if (current != nullptr && current->pid == CurrentProcessId()) return current;
  std::optional<AttachChannel> channel = AttachChannel::FromEnvironment();
  if (!channel) {
    unwatched = true;
    return nullptr;
  }
  auto* made = new ProcessState(std::move(*channel));
  made->inherited = current;
  state.store(made, std::memory_order_release);
  return made;
}

// The events of one build, each as "PID BUILD JSON", to the run.
class ChannelSink final : public Sink {
 public:
  ChannelSink(ProcessState& state, int build)
      : state_(state), prefix_(std::to_string(state.pid) + " " + std::to_string(build) + " ") {}

  void OnEvent(const Event& event) override {
    if (!state_.watching.load(std::memory_order_relaxed)) return;
    const std::string message = prefix_ + EventToJson(event.type == EventType::kBuildFinish ? Slim(event) : event);
    const auto give_up = std::chrono::steady_clock::now() + kFullChannelPatience;
    for (;;) {
      const ChannelSend sent = state_.channel.Send(message);
      if (sent == ChannelSend::kSent || sent == ChannelSend::kTooLarge) return;  // too large: that one is lost
      if (sent == ChannelSend::kClosed) return state_.StopWatching("trtwatch run is gone");
      if (std::chrono::steady_clock::now() > give_up) return state_.StopWatching("trtwatch run stopped reading");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

 private:
  // build_finish as the run needs it: how it ended. The run's own runner summarises
  // the phases it was fed (a big build's summary would not fit one message).
  static Event Slim(const Event& finish) {
    Event slim;
    slim.type = finish.type;
    slim.seq = finish.seq;
    slim.t = finish.t;
    slim.status = finish.status;
    slim.error = finish.error;
    slim.elapsed = finish.elapsed;
    return slim;
  }

  ProcessState& state_;
  const std::string prefix_;
};

}  // namespace

struct WatchedBuild::Parts {
  ProcessState& state;
  int number;
  SteadyClock clock;
  ChannelSink sink;
  BuildSession session;

  Parts(ProcessState& s, int n) : state(s), number(n), sink(s, n), session(clock, {&sink}, SessionOptions{}) {}
};

WatchedBuild::WatchedBuild(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}

WatchedBuild::~WatchedBuild() {
  if (parts_) Returned(false);
}

std::unique_ptr<WatchedBuild> WatchedBuild::Begin(const std::string& call, int tensorrt_version) {
  ProcessState* state = State();
  if (state == nullptr || !state->watching.load()) return nullptr;
  auto parts = std::make_unique<Parts>(*state, state->next_build.fetch_add(1));
  BuildInfo info;
  info.build_id = NewBuildId();
  info.backend = "tensorrt";
  info.model = call;
  info.facts = {{"tensorrt", std::to_string(tensorrt_version)}, {"pid", std::to_string(state->pid)}};
  parts->session.Start(info);
  state->Add(parts->number, &parts->session.monitor());
  return std::unique_ptr<WatchedBuild>(new WatchedBuild(std::move(parts)));
}

Monitor& WatchedBuild::monitor() { return parts_->session.monitor(); }

void WatchedBuild::Returned(bool built) {
  if (!parts_) return;
  parts_->state.Remove(parts_->number);
  parts_->session.Finish(BuildOutcome{built, built ? "" : "TensorRT returned no engine"});
  parts_.reset();
}

}  // namespace trtwatch::attach
