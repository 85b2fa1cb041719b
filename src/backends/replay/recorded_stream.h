// RecordedStream: one build's saved event stream (docs/events.md), read whole and checked
// before anything is played: a file written by `--events`, or the service's
// `GET /builds/{id}/events` saved as Server-Sent Events (`curl -N … > build.sse`).
//
// What a replay may rely on once it is read: the first event is the build's one
// build_start, `seq` rises strictly, the last event is its build_finish, and every
// phase event names a phase the stream started. Anything else is refused with the line
// and the fix, and nothing is played: half a replay would look like a real build cut
// short.
//
// Threading: a pure function of the file's bytes.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/event.h"

namespace trtwatch::replay {

// Bounds on the untrusted file: a stream of a day-long build is a few MiB.
inline constexpr size_t kMaxStreamBytes = 256u << 20;
inline constexpr size_t kMaxLineBytes = 1u << 20;

struct RecordedStream {
  std::vector<Event> events;  // build_start … build_finish, in seq order
};

struct RecordedStreamRead {
  std::optional<RecordedStream> stream;  // set when the file is a whole, valid stream
  std::string error;                     // otherwise: what is wrong, where, and what to do
};

// Reads and checks the file at `path`.
RecordedStreamRead ReadRecordedStream(const std::string& path);
// The same for bytes already read (`name` is how messages refer to them).
RecordedStreamRead ParseRecordedStream(const std::string& bytes, const std::string& name);

}  // namespace trtwatch::replay
