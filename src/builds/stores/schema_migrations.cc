#include "builds/stores/schema_migrations.h"

namespace trtwatch::builds {

namespace {

MigrationResult MigrationFailed(SchemaAccess& db, int found) {
  MigrationResult r{MigrationResult::Outcome::kFailed, found, db.error()};
  db.Rollback();
  return r;
}

}  // namespace

MigrationResult Migrate(SchemaAccess& db, std::span<const char* const> steps) {
  const int known = static_cast<int>(steps.size());
  if (!db.Begin()) return {MigrationResult::Outcome::kFailed, 0, db.error()};
  const std::optional<int> found = db.ReadVersion();
  if (!found) return MigrationFailed(db, 0);
  if (*found >= known) {
    db.Rollback();  // nothing to write either way
    return {*found > known ? MigrationResult::Outcome::kNewer : MigrationResult::Outcome::kCurrent, *found, ""};
  }
  for (int step = *found + 1; step <= known; ++step) {
    if (!db.Apply(steps[static_cast<size_t>(step - 1)])) return MigrationFailed(db, *found);
  }
  if (!db.WriteVersion(known) || !db.Commit()) return MigrationFailed(db, *found);
  return {MigrationResult::Outcome::kMigrated, *found, ""};
}

std::string NewerSchemaError(const std::string& what, int found, int known, const std::string& flag) {
  return what + " was written by a newer trtwatch (schema " + std::to_string(found) +
         ", this binary knows up to " + std::to_string(known) + "): upgrade trtwatch or point " + flag +
         " elsewhere";
}

}  // namespace trtwatch::builds
