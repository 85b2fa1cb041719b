// RemoteFollowers: the live readers of builds this process does not run — queued, or
// running on another replica — fed from the stored log. Each pull reads the log after
// the last event delivered and hands every new event, in seq order, to each reader of
// that build: no gap and no duplicate, since the log is the one the owner appends to.
// After build_finish (or once the record is final) the readers are ended. When this
// process starts running the build itself (it claimed it), the manager takes the
// readers over with Take.
//
// Who pulls when: the manager, whenever the build may have moved (its replica tick on
// a shared store; its own claims and cancels on any store).
//
// Threading: the manager's event-loop thread only, as BuildManager (builds/build_manager.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace trtwatch::builds {

class EventSubscriber;
class RecordStore;

class RemoteFollowers {
 public:
  explicit RemoteFollowers(RecordStore& store) : store_(store) {}
  RemoteFollowers(const RemoteFollowers&) = delete;
  RemoteFollowers& operator=(const RemoteFollowers&) = delete;

  // Follows `id` for `subscriber`; returns the seq after which its live events start
  // (what was delivered to the build's other readers, else the log's end).
  uint64_t Add(const std::string& id, EventSubscriber* subscriber);
  // False when `subscriber` did not follow `id` here.
  bool Remove(const std::string& id, EventSubscriber* subscriber);
  bool empty() const { return follows_.empty(); }

  // Delivers what the log of `id` (or of every followed build) holds beyond what was
  // delivered; ends the readers of a build that is over.
  void Pull(const std::string& id);
  void PullAll();
  // The readers of `id`, after a last pull, now the caller's (it runs the build); the
  // seq they have had is the log's end.
  std::vector<EventSubscriber*> Take(const std::string& id);
  // Ends every reader (the service stops).
  void EndAll();

 private:
  struct Follow {
    std::vector<EventSubscriber*> subscribers;
    uint64_t delivered = 0;  // the last seq handed to them
  };
  // Delivers one page; false once nothing more is to be read now (or the build ended).
  bool PullPage(const std::string& id);
  void End(const std::string& id);

  RecordStore& store_;
  std::map<std::string, Follow> follows_;
};

}  // namespace trtwatch::builds
