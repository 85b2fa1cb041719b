// RecordStore: where the builds layer keeps build records and their event logs — the
// interface every store implements (builds/stores/sqlite_store.h: SQLite under --data-dir, the
// embedded default for one host; builds/stores/postgres_store.h: a PostgreSQL database named
// by --store). builds/stores/open_record_store.h picks one; builds/stores/schema_migrations.h keeps
// both schemas versioned.
//
// A record is its JSON document plus the columns queries need (status, creation
// order). Event logs are (build id, seq, JSON line) rows, appended in batches, each
// batch whole or not at all.
//
// Threading: single-threaded by contract, for every store: not synchronised, and the
// builds layer uses one store from its event-loop thread only (tests from one thread).
// Calls block that thread while the store works (a disk write, a round trip).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "builds/audit_entry.h"
#include "builds/stores/build_queue.h"
#include "builds/stores/change_feed.h"
#include "core/result.h"

namespace trtwatch::builds {

struct StoredEvent {
  uint64_t seq = 0;
  std::string json;
};

// One finished build in the service's history (docs/history.md): the entry's JSON line
// (history/history_entry.h) and the columns its queries filter by.
struct HistoryRow {
  std::string build;    // the service's build id
  std::string key;      // the build key's digest
  std::string model;
  std::string backend;
  std::string status;   // "succeeded", "failed", ...
  int64_t finished_at = 0;  // Unix seconds
  std::string entry;    // the entry as one JSON line
  // Nonzero: written only while `generation` is the build's lease generation (fenced,
  // as AppendEventsFenced); PutHistory refuses it otherwise, with an error.
  int64_t lease_generation = 0;
};

// Which history rows to read; every filter is optional.
struct HistoryQuery {
  std::string build;        // one build's id
  std::string model;        // a substring of the model
  std::string key;          // the whole digest
  std::string backend;
  std::string status;       // one status
  int64_t finished_after = 0;  // Unix seconds; 0: any
  int limit = 100;
};

class RecordStore {
 public:
  virtual ~RecordStore() = default;

  // Every call returns a Status or a Result<T> (core/result.h): the store's error text
  // when it fails. A failed write or batch is rolled back whole.

  // Inserts the record or replaces its status and document; creation order is kept.
  virtual Status Put(const std::string& id, const std::string& status, const std::string& doc) = 0;
  // The record's document; nullopt when there is no such record.
  virtual Result<std::optional<std::string>> Get(const std::string& id) = 0;

  struct Page {
    std::vector<std::string> docs;
    std::optional<int64_t> next_cursor;  // pass back as `cursor` for the next page
  };
  // Newest first. `statuses` empty means all; `cursor` 0 means from the newest; `model`
  // non-empty: the builds whose model, or simulated profile, contains it.
  virtual Result<Page> List(const std::vector<std::string>& statuses, int limit, int64_t cursor,
                            const std::string& model = "") = 0;
  // Every record in one of `statuses`, oldest first (restart recovery).
  virtual Result<std::vector<std::string>> WithStatus(const std::vector<std::string>& statuses) = 0;

  // Every write reports failure (disk full, I/O error); a failed batch is rolled back whole.
  virtual Status AppendEvents(const std::string& id, const std::vector<StoredEvent>& events) = 0;

  // Fenced writes (docs/deploy.md, "Fencing"): what the owner of a build writes about it
  // while it runs, taken only while `generation` is the build's lease generation (each
  // claim of the build increments it: builds/stores/build_queue.h), checked by the store
  // in the same statement as the write. A replica that lost the build's lease (paused
  // or cut off past it, and another claimed the build) writes nothing more of it.
  // Each is true when written, false when refused: the lease is another's now, or
  // (one ending per build) the build is concluded already.
  //
  // A batch of the log; `finish`: the batch ends with the build's build_finish, after
  // which the log takes no more events from anyone.
  virtual Result<bool> AppendEventsFenced(const std::string& id, const std::vector<StoredEvent>& events,
                                          int64_t generation, bool finish) = 0;
  // The record's status and document, replaced; refused once the record is final
  // (unless `doc` is what it holds: a retry of a write that was taken).
  virtual Result<bool> PutFenced(const std::string& id, const std::string& status, const std::string& doc,
                                 int64_t generation) = 0;
  // Calls `fn` with each event of `id` with seq > `after`, in seq order. An error if
  // the log could not be read to its end (damage, I/O error): then what `fn` saw is
  // incomplete.
  virtual Status ForEachEvent(const std::string& id, uint64_t after,
                              const std::function<void(const StoredEvent&)>& fn) = 0;
  // One bounded page of the log: at most `limit` events of `id` with `after` < seq <=
  // `up_to`, in seq order.
  virtual Result<std::vector<StoredEvent>> EventsPage(const std::string& id, uint64_t after, uint64_t up_to,
                                                      int limit) = 0;
  // The log of `id` with seq > `after`, in seq order.
  Result<std::vector<StoredEvent>> EventsAfter(const std::string& id, uint64_t after);
  // The highest seq in the log of `id`; 0 when it has none.
  virtual Result<uint64_t> LastSeq(const std::string& id) = 0;
  // A small write that tells whether the store takes writes again after a failure.
  virtual Status Probe() = 0;

  // Removes finished records (any of `final_statuses`) and their logs: those finished
  // before `finished_before` (an RFC 3339 time like the records'; empty: no age limit)
  // and all but the newest `keep_newest` (0: no count limit). One transaction. The ids
  // removed, or the storage error with nothing removed.
  virtual Result<std::vector<std::string>> Prune(const std::vector<std::string>& final_statuses,
                                                 const std::string& finished_before, int64_t keep_newest) = 0;

  // The history (docs/history.md): adds or replaces the row of `row.build`.
  virtual Status PutHistory(const HistoryRow& row) = 0;
  // The entries read, newest first.
  virtual Result<std::vector<std::string>> History(const HistoryQuery& query) = 0;
  // Removes the rows finished before `finished_before` (Unix seconds; 0: no age limit)
  // and all but the newest `keep_newest` (0: no count limit). The count removed.
  virtual Result<int64_t> PruneHistory(int64_t finished_before, int64_t keep_newest) = 0;

  // The audit trail (builds/audit_entry.h). Every replica of a shared store appends to
  // the one trail; the store numbers the entries (seq, unique and increasing, never
  // reused). An entry that breaks CheckAuditEntry is refused with its error.
  // Appends `entry` (its seq ignored); the seq given.
  [[nodiscard]] virtual Result<int64_t> AppendAudit(const AuditEntry& entry) = 0;
  // Newest first, as `query` filters; a query that breaks CheckAuditQuery is refused.
  [[nodiscard]] virtual Result<AuditEntries> AuditPage(const AuditQuery& query) = 0;
  // Removes the entries recorded before `before_unix` (0 or less: none). The count removed.
  [[nodiscard]] virtual Result<int64_t> PruneAudit(int64_t before_unix) = 0;

  // The queue of builds and their owners, kept in this store (builds/stores/build_queue.h).
  virtual BuildQueue& queue() = 0;
  // What other replicas write, as they write it (builds/stores/change_feed.h); null for
  // a store no other process writes (SQLite).
  virtual ChangeFeed* changes() { return nullptr; }
};

// What opening a store came to: the store, or why not with the fix in `error`.
struct StoreOpening {
  enum class Outcome {
    kOpened,
    kInvalid,      // the location is malformed (a --store that is no connection URI)
    kUnavailable,  // cannot be reached or read (no server, no folder, no permission)
    kInUse,        // another trtwatch service holds it (SQLite: one service per data dir)
    kNewerSchema,  // written by a newer trtwatch: refused, never downgraded
    kDamaged,      // not a trtwatch store, or damaged
  };
  Outcome outcome = Outcome::kUnavailable;
  std::unique_ptr<RecordStore> store;  // set when kOpened
  std::string error;                   // otherwise: the problem and the fix

  static StoreOpening Opened(std::unique_ptr<RecordStore> s) { return {Outcome::kOpened, std::move(s), {}}; }
  static StoreOpening Failed(Outcome o, std::string why) { return {o, nullptr, std::move(why)}; }
};

}  // namespace trtwatch::builds
