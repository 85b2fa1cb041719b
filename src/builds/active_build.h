// ActiveBuild: a build this manager has claimed, while it runs here (or is cancelled,
// or concluded as an orphan): its record and request, its phase tree, its live readers
// and its worker with what is read from it. The manager's own state, shared by the
// files of its implementation (build_manager*.cc); no other part sees it.
//
// Threading: the build manager's event-loop thread only.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/steady_timer.hpp>

#include "builds/build_record.h"
#include "builds/build_request.h"
#include "builds/event_subscriber.h"
#include "builds/executors/executor.h"
#include "builds/stores/record_store.h"  // StoredEvent
#include "builds/worker_stream.h"
#include "core/event.h"
#include "core/phase_tree.h"

namespace trtwatch::builds {

// An event read from the worker, waiting to be stored; its readers get it once stored.
struct PendingEvent {
  StoredEvent stored;
  std::string type;  // the SSE event name
  int64_t phase_id = 0;
};

struct ActiveBuild {
  BuildRecord record;
  BuildRequest request;
  PhaseTree tree;
  std::vector<EventSubscriber*> subscribers;
  std::unique_ptr<Execution> worker;          // while it runs; dropped once its end is known
  std::unique_ptr<boost::asio::steady_timer> grace;  // Kill after Terminate
  std::unique_ptr<boost::asio::steady_timer> reap;   // polls for the worker's end after stdout closed
  std::array<char, 65536> out_chunk{};
  std::array<char, 4096> err_chunk{};
  LineSplitter lines;    // its stdout, cut into protocol lines
  std::string err_tail;  // the end of the worker's stderr
  // Read, not yet stored: written as one fenced batch, then sent to the live readers, so
  // that they get exactly the stored log (ids and contents). While the store is out of
  // reach they wait here, bounded (ManagerOptions' max_unstored_events and _bytes).
  std::vector<PendingEvent> pending;
  size_t pending_bytes = 0;
  uint64_t stored_seq = 0;  // the log's last stored event: live readers start after it
  int64_t generation = 0;   // the lease generation of this replica's claim: the fence of its writes
  std::string outage;       // the store's error while `pending` waits for it; empty otherwise
  bool concluding = false;  // its end is known and waits for the store to take the log's end
  bool without_worker = false;  // ended with no worker of its own (an orphan, a start that failed)
  std::unique_ptr<boost::asio::steady_timer> store_retry;  // writes `pending` again during an outage
  bool saw_finish = false;
  Event finish;
  bool finish_held = false;  // `finish` waits for the executor's verdict (Finish relays it)
  // A stop from outside (HoldsOutsideStop): its cancel_requested and what followed it,
  // waiting for the verdict; `outside_stop_at` is when it came (Unix seconds).
  bool outside_stop = false;
  bool outside_released = false;  // the held events went out (the verdict, or too many to hold)
  std::vector<std::pair<Event, std::string>> outside_held;  // each with its JSON line
  double outside_stop_at = 0;
  bool forced_kill = false;     // killed after the cancel grace (or a second service signal)
  std::string storage_failure;  // set when its events could not be stored: the build is stopped
  bool fenced = false;          // another replica concluded it: this one writes nothing more of it
  bool err_closed = false;      // stderr read to its end
  std::optional<WorkerExit> exit;  // the worker's end, once polled
  int polls_after_exit = 0;
  uint64_t bad_lines = 0;
  int64_t started_ns = 0;          // on the manager's clock
  std::optional<int64_t> estimate_stored_ns;  // when an estimate was last written to the store
};

}  // namespace trtwatch::builds
