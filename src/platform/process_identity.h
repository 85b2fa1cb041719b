// The name of this host and the id of this process: what names a replica by default
// (builds/replica_name.h). Implementation: platform/posix/process_identity.cc (POSIX
// only, as the service is).
#pragma once

#include <string>
#include <vector>

namespace trtwatch {

struct ProcessIdentity {
  std::string host_name;  // empty when the system does not say
  long pid = 0;
  std::string executable;  // this program's absolute path (what a cluster's job runs); empty if unknown
};

ProcessIdentity ThisProcess();

// This process's environment, "NAME=value" each: what a worker given one more variable
// starts from (builds/executors/local_executor.h).
std::vector<std::string> ThisEnvironment();

}  // namespace trtwatch
