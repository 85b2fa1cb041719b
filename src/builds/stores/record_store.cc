#include "builds/stores/record_store.h"

namespace trtwatch::builds {

std::vector<StoredEvent> RecordStore::EventsAfter(const std::string& id, uint64_t after) {
  std::vector<StoredEvent> events;
  if (!ForEachEvent(id, after, [&](const StoredEvent& e) { events.push_back(e); })) events.clear();
  return events;
}

}  // namespace trtwatch::builds
