#include "builds/remote_followers.h"

#include <algorithm>
#include <optional>

#include "builds/event_subscriber.h"
#include "builds/build_record.h"
#include "builds/framed_event.h"
#include "builds/stores/record_store.h"

namespace trtwatch::builds {

namespace {

constexpr int kPullPage = 256;  // events read per query: bounded memory per pull

// Whether the stored record of `id` is final (unreadable now: not known, the next pull asks again).
bool RecordIsOver(RecordStore& store, const std::string& id) {
  const Result<std::optional<std::string>> doc = store.Get(id);
  if (!doc.ok() || !*doc) return false;
  BuildRecord r;
  return RecordFromJson(**doc, &r) && IsFinal(r.state);
}

}  // namespace

uint64_t RemoteFollowers::Add(const std::string& id, EventSubscriber* subscriber) {
  auto [it, added] = follows_.try_emplace(id);
  if (added) {
    const Result<uint64_t> last = store_.LastSeq(id);  // unreadable: from the start
    it->second.delivered = last.ok() ? *last : 0;
  }
  it->second.subscribers.push_back(subscriber);
  return it->second.delivered;
}

bool RemoteFollowers::Remove(const std::string& id, EventSubscriber* subscriber) {
  auto it = follows_.find(id);
  if (it == follows_.end()) return false;
  auto& subs = it->second.subscribers;
  const auto gone = std::remove(subs.begin(), subs.end(), subscriber);
  const bool found = gone != subs.end();
  subs.erase(gone, subs.end());
  if (subs.empty()) follows_.erase(it);
  return found;
}

void RemoteFollowers::Pull(const std::string& id) {
  while (PullPage(id)) {
  }
}

void RemoteFollowers::PullAll() {
  std::vector<std::string> ids;
  for (const auto& [id, follow] : follows_) ids.push_back(id);
  for (const std::string& id : ids) Pull(id);
}

bool RemoteFollowers::PullPage(const std::string& id) {
  auto it = follows_.find(id);
  if (it == follows_.end()) return false;
  const Result<std::vector<StoredEvent>> read = store_.EventsPage(id, it->second.delivered, UINT64_MAX, kPullPage);
  if (!read.ok()) return false;  // the next pull tries again
  const std::vector<StoredEvent>& page = *read;
  if (page.empty()) {
    if (RecordIsOver(store_, id)) End(id);
    return false;
  }
  bool finished = false;
  for (const StoredEvent& e : page) {
    FramedEvent item;
    finished = finished || StoredEventType(e.json) == "build_finish";
    it->second.delivered = e.seq;
    if (!FrameStoredEvent(e.seq, e.json, &item)) continue;
    // A reader may leave (or the follow end) while it is handed an event.
    const std::vector<EventSubscriber*> subs = it->second.subscribers;
    for (EventSubscriber* s : subs) {
      it = follows_.find(id);
      if (it == follows_.end()) return false;
      auto& now = it->second.subscribers;
      if (std::find(now.begin(), now.end(), s) != now.end()) s->OnEvent(item);
    }
    it = follows_.find(id);
    if (it == follows_.end()) return false;
  }
  if (finished) {
    End(id);
    return false;
  }
  return static_cast<int>(page.size()) == kPullPage;
}

std::vector<EventSubscriber*> RemoteFollowers::Take(const std::string& id) {
  Pull(id);
  auto it = follows_.find(id);
  if (it == follows_.end()) return {};
  std::vector<EventSubscriber*> subs = std::move(it->second.subscribers);
  follows_.erase(it);
  return subs;
}

void RemoteFollowers::End(const std::string& id) {
  auto it = follows_.find(id);
  if (it == follows_.end()) return;
  const std::vector<EventSubscriber*> subs = std::move(it->second.subscribers);
  follows_.erase(it);
  for (EventSubscriber* s : subs) s->OnEnd();
}

void RemoteFollowers::EndAll() {
  while (!follows_.empty()) End(follows_.begin()->first);
}

}  // namespace trtwatch::builds
