// The live readers of the builds layer: one build's events (an SSE stream), and every
// record change (the dashboard's list). A header of its own so that what feeds them
// (the manager, builds/remote_followers.h) and what implements them (service/) need
// not see each other.
//
// Threading: called on the build manager's event-loop thread only.
#pragma once

#include <vector>

#include "builds/framed_event.h"

namespace trtwatch::builds {

// A live reader of one build's events (an SSE stream).
class EventSubscriber {
 public:
  virtual void OnEvent(const FramedEvent& item) = 0;
  // A batch of the log as it was stored, in seq order: handed over as one (an SSE hub
  // delivers it whole, so that a reader that keeps up gets every event of it).
  virtual void OnEvents(const std::vector<FramedEvent>& items) {
    for (const FramedEvent& item : items) OnEvent(item);
  }
  // The build's stream is over (its build_finish was delivered), or the service stops.
  virtual void OnEnd() = 0;

 protected:
  ~EventSubscriber() = default;
};

// A live reader of every record change (the dashboard's list): each write of a record
// (submitted, started, cancel requested, finished) as one SSE frame "event: record".
class RecordWatcher {
 public:
  virtual void OnRecord(const FramedEvent& item) = 0;

 protected:
  ~RecordWatcher() = default;
};

}  // namespace trtwatch::builds
