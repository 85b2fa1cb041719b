#include "cli/storage_flags.h"

namespace trtwatch {

void AddStorageFlags(CLI::App* cmd, builds::BuildsConfig* config) {
  cmd->add_option("--store", config->store,
                  "Where build records and event logs are kept: empty (default) for SQLite in --data-dir, or a "
                  "PostgreSQL database as a libpq URI, postgresql://USER@HOST:PORT/DB (any number of replicas may "
                  "share it; the schema is migrated at start)")
      ->envname("TRTWATCH_STORE");
  cmd->add_option("--model-root", config->model_roots, "Folder whose models may be built (repeatable)");
  cmd->add_option("--artifact-dir", config->artifact_dir,
                  "Where uploaded models are kept (PUT /models/NAME; a build asks for one as \"model\": "
                  "\"models:NAME\"); shared storage for several hosts (default: DATA_DIR/artifacts)");
}

}  // namespace trtwatch
