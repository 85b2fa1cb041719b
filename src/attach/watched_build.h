// WatchedBuild: one build call of an attached program, watched for `trtwatch run`
// (docs/attach.md). The attach library's version-independent half: a core Monitor and
// Dispatcher per build call, whose events go to the run over the inherited channel
// (platform/attach_channel.h) without ever blocking TensorRT's threads, and the cancels
// the run sends back.
//
// Never fails a build on trtwatch's account: without a run (no channel), after the run
// died or once the channel stayed full, Begin returns null and the build goes on
// unwatched; the first such change is said once on stderr.
//
// Threading: Begin from any thread (several builds at once are fine); a WatchedBuild
// belongs to the thread of its build call, its monitor() to TensorRT's threads.
#pragma once

#include <memory>
#include <string>

#include "core/monitor.h"

namespace trtwatch::attach {

class WatchedBuild {
 public:
  // Null when nothing watches this process. `call` names the entry point
  // ("buildSerializedNetwork"), `tensorrt_version` is the library's.
  static std::unique_ptr<WatchedBuild> Begin(const std::string& call, int tensorrt_version);
  ~WatchedBuild();
  WatchedBuild(const WatchedBuild&) = delete;
  WatchedBuild& operator=(const WatchedBuild&) = delete;

  Monitor& monitor();
  // The build call returned: build_finish goes out, delivery ends.
  void Returned(bool built);

 private:
  struct Parts;
  explicit WatchedBuild(std::unique_ptr<Parts> parts);
  std::unique_ptr<Parts> parts_;
};

}  // namespace trtwatch::attach
