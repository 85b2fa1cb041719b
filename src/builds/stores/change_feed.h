// ChangeFeed: what other replicas write to a shared store, as they write it — an event
// batch appended to a build's log, a record written — so that a replica's readers of
// builds it does not run, and its /builds/changes watchers, hear of them at once.
// PostgreSQL's LISTEN/NOTIFY carries it (builds/stores/postgres_store.h): the writer's
// insert and its notification commit together, so a notification never announces
// what is not stored. A session lost loses what was sent meanwhile: whoever listens
// reads the logs again after Listen.
//
// Notification payloads come from the database and are untrusted: a change whose build
// id or seq is malformed is dropped.
//
// Threading: as RecordStore (builds/stores/record_store.h): one thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trtwatch::builds {

struct StoreChange {
  enum class Kind { kEvents, kRecord };
  Kind kind = Kind::kRecord;
  std::string id;         // a build id: "b_" and 32 lowercase hex digits
  uint64_t last_seq = 0;  // kEvents: the last seq of the batch
};

class ChangeFeed {
 public:
  virtual ~ChangeFeed() = default;
  // (Re)opens the listening session: its socket, non-blocking, to watch for reads; -1
  // with `*error` when it cannot.
  virtual int Listen(std::string* error) = 0;
  // What arrived, oldest first, without waiting (this store's own writes left out);
  // false once the session is lost (Listen again).
  virtual bool Drain(std::vector<StoreChange>* changes) = 0;
  // Closes the session; its socket is gone.
  virtual void Close() = 0;
};

// A notification's payload as a change: "ID SEQ" (kEvents) or "ID" (kRecord); false
// when it is not one.
bool ParseStoreChange(StoreChange::Kind kind, const std::string& payload, StoreChange* change);

}  // namespace trtwatch::builds
