#include "builds/stores/record_store.h"

namespace trtwatch::builds {

Result<std::vector<StoredEvent>> RecordStore::EventsAfter(const std::string& id, uint64_t after) {
  std::vector<StoredEvent> events;
  Status read = ForEachEvent(id, after, [&](const StoredEvent& e) { events.push_back(e); });
  if (!read.ok()) return read;
  return events;
}

}  // namespace trtwatch::builds
