// Versioned schemas for the record stores. Each store has an ordered list of steps;
// step N takes its database from version N-1 to N (step 1 is the schema of the first
// release). At open, Migrate runs the steps the database lacks in one transaction and
// refuses a database whose version is past the list — written by a newer trtwatch,
// whose data this binary could misread or damage. A store keeps the version where its
// engine suggests (SQLite: PRAGMA user_version; PostgreSQL: the trtwatch_schema table).
//
// Threading: as the store that runs it (one thread).
#pragma once

#include <optional>
#include <span>
#include <string>

namespace trtwatch::builds {

// What Migrate needs of a store: its transaction, its version record and its SQL.
class SchemaAccess {
 public:
  virtual ~SchemaAccess() = default;
  // Begins the migration's transaction, with whatever lock keeps two starting processes
  // from migrating at once.
  virtual bool Begin() = 0;
  // The database's schema version: 0 when it holds no schema yet; nullopt on an error.
  virtual std::optional<int> ReadVersion() = 0;
  virtual bool Apply(const char* step_sql) = 0;
  virtual bool WriteVersion(int version) = 0;
  virtual bool Commit() = 0;
  virtual void Rollback() = 0;
  // What the last failed call met.
  virtual std::string error() const = 0;
};

struct MigrationResult {
  enum class Outcome { kCurrent, kMigrated, kNewer, kFailed };
  Outcome outcome = Outcome::kFailed;
  int found = 0;      // the version the database had
  std::string error;  // kFailed: what the store met
};

// Brings the database to version steps.size(), or leaves it as it was.
MigrationResult Migrate(SchemaAccess& db, std::span<const char* const> steps);

// The refusal of a newer database: `what` names it ("the database \"…\""), `flag` is the
// option that points elsewhere (--data-dir, --store).
std::string NewerSchemaError(const std::string& what, int found, int known, const std::string& flag);

}  // namespace trtwatch::builds
