#include "core/build_session.h"

#include <exception>

namespace trtwatch {

BuildSession::BuildSession(const Clock& clock, const std::vector<Sink*>& sinks,
                           SessionOptions options)
    : options_(std::move(options)), monitor_(clock), dispatcher_(monitor_, sinks, options_.delivery) {}

BuildResult BuildSession::Run(const BuildInfo& info, const BuildFunction& build) {
  monitor_.BuildStarted(info);
  BuildOutcome outcome;
  {
    Watchdog watchdog(monitor_, options_.watchdog);
    try {
      outcome = build(monitor_);
    } catch (const std::exception& e) {
      outcome = BuildOutcome{false, e.what()};
    } catch (...) {
      outcome = BuildOutcome{false, "the backend threw an unknown exception"};
    }
  }
  BuildResult result = monitor_.BuildReturned(outcome);
  result.events_dropped = dispatcher_.Join();
  return result;
}

}  // namespace trtwatch
