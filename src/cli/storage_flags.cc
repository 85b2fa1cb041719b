#include "cli/storage_flags.h"

#include "core/memory_size.h"

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
  cmd->add_flag("--no-timing-caches", [config](int64_t) { config->timing_caches = false; },
                "Give builds no fleet timing cache (ARTIFACT_DIR/timing-caches, one per TensorRT version and GPU)");
  cmd->add_option_function<std::string>(
         "--timing-cache-max-size",
         [config](const std::string& text) {
           const MemorySize size = ParseMemorySize(text, "--timing-cache-max-size");
           if (!size.bytes) throw CLI::ValidationError(size.error);
           config->timing_cache_max_bytes = *size.bytes;
         },
         "A fleet timing cache is never grown past SIZE: a merge past it keeps the cache as it was")
      ->default_str("512M");
}

}  // namespace trtwatch
