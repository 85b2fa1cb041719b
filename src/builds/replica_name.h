// The name of a replica: one `trtwatch serve` (or `mcp`) among those sharing a store
// (builds/stores/build_queue.h). It owns the builds it claims, so records and errors
// name it ("interrupted: replica \"gpu-7\" stopped renewing its lease"). Given by
// --replica or TRTWATCH_REPLICA, else HOSTNAME-PID; 1 to 64 of A-Z a-z 0-9 . _ -.
//
// Threading: pure functions.
#pragma once

#include <cstddef>
#include <string>

namespace trtwatch::builds {

inline constexpr size_t kMaxReplicaName = 64;

// Why `name` is no replica name (the rule, naming the flag), or empty.
std::string ReplicaNameError(const std::string& name);

// HOSTNAME-PID, with the host name's other characters dropped and cut to fit.
std::string DefaultReplicaName(const std::string& host_name, long pid);

}  // namespace trtwatch::builds
