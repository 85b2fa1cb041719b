// AttachedBuilds: the builds of the programs `trtwatch run` watches (docs/attach.md).
// Each build call the attach library reports is a build of its own, numbered in the
// order they start: a Runner (the one build path) fed with the events that come over
// the channel instead of a backend's callbacks, with its own view, summary, files,
// timeout and stall watch. A cancel any of its runners asks for (--timeout,
// --stall-timeout, Ctrl+C) travels back to the program's build.
//
// Threading: one thread (the run's loop) calls everything.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "runner/runner.h"

namespace trtwatch {

class AttachedBuilds {
 public:
  // The options of build `number` (its own events and trace files, what it is
  // remembered by), from the build_start the program sent.
  using OptionsFor = std::function<RunOptions(int number, const Event& start)>;
  // Asks process `pid` to cancel its build `build` (the attach library's own number).
  using CancelSender = std::function<void(int pid, int build)>;
  AttachedBuilds(OptionsFor options_for, CancelSender send_cancel);
  ~AttachedBuilds();
  AttachedBuilds(const AttachedBuilds&) = delete;
  AttachedBuilds& operator=(const AttachedBuilds&) = delete;

  // One message of the channel: "PID BUILD EVENT-JSON". Malformed ones are ignored
  // (said once): the channel is the run's own, but a program may write anything.
  void OnMessage(std::string_view message);
  // Sends the cancels the runners asked for since the last call (once per build).
  void ForwardCancels();
  // Cancels every build in progress (Ctrl+C) and says `notice` above their view; false
  // when none is.
  bool CancelAll(CancelReason reason, const std::string& why, const std::string& notice);
  // COMMAND ended: builds still open end failed, with `why`.
  void EndAll(const std::string& why);

  int started() const { return started_; }
  // 124 when a timeout or stall cancelled a build, 130 when Ctrl+C did; otherwise none
  // (the run exits with COMMAND's code).
  std::optional<int> ExitCodeOverride() const { return override_; }

 private:
  struct Build;
  void Start(std::pair<int, int> key, const Event& event);
  void Feed(Build& build, const Event& event);
  void End(std::pair<int, int> key, const BuildOutcome& outcome);

  OptionsFor options_for_;
  CancelSender send_cancel_;
  std::map<std::pair<int, int>, std::unique_ptr<Build>> active_;  // (pid, build) -> its runner
  int started_ = 0;
  std::optional<int> override_;
  bool said_malformed_ = false;
};

}  // namespace trtwatch
