#include "core/build_session.h"

#include <exception>

namespace trtwatch {

BuildSession::BuildSession(const Clock& clock, const std::vector<Sink*>& sinks,
                           SessionOptions options)
    : options_(std::move(options)), monitor_(clock), dispatcher_(monitor_, sinks, options_.delivery) {}

void BuildSession::Start(const BuildInfo& info) {
  monitor_.BuildStarted(info);
  watchdog_.emplace(monitor_, options_.watchdog);
}

BuildResult BuildSession::Finish(const BuildOutcome& outcome) {
  watchdog_.reset();
  BuildResult result = monitor_.BuildReturned(outcome);
  result.events_dropped = dispatcher_.Join();
  return result;
}

BuildResult BuildSession::Run(const BuildInfo& info, const BuildFunction& build) {
  Start(info);
  return Finish(CallBuild([&] { return build(monitor_); }));
}

BuildOutcome CallBuild(const std::function<BuildOutcome()>& build) {
  try {
    return build();
  } catch (const std::exception& e) {
    return BuildOutcome{false, e.what()};
  } catch (...) {
    return BuildOutcome{false, "the build threw an exception that is not a std::exception"};
  }
}

}  // namespace trtwatch
