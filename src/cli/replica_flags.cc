#include "cli/replica_flags.h"

namespace trtwatch {

void AddReplicaFlags(CLI::App* cmd, builds::BuildsConfig* config) {
  cmd->add_option("--replica", config->replica,
                  "This process's name among the replicas sharing a --store database (1 to 64 of A-Z a-z 0-9 . _ -; "
                  "default HOSTNAME-PID)")
      ->envname("TRTWATCH_REPLICA");
  cmd->add_option("--lease-seconds", config->lease_seconds,
                  "How long a replica's claim on a build lasts unless renewed (every third of it); another replica "
                  "concludes the builds of one that stopped renewing (3 to 300)")
      ->default_val(15);
}

}  // namespace trtwatch
