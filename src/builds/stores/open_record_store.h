// Which record store a service runs on: --store (or TRTWATCH_STORE) names it.
//   empty                                  SQLite in DIR/trtwatch.db under --data-dir (builds/stores/sqlite_store.h)
//   postgresql://USER@HOST:PORT/DB         a PostgreSQL database (builds/stores/postgres_store.h);
//   postgres://…                           any libpq connection URI
// With PostgreSQL the data dir is still made (engines, worker files), unlocked.
//
// Threading: call from the thread that will use the store.
#pragma once

#include <string>

#include "builds/stores/record_store.h"

namespace trtwatch::builds {

StoreOpening OpenRecordStore(const std::string& store_uri, const std::string& data_dir);

// Whether `store_uri` names a PostgreSQL database (its scheme).
bool IsPostgresUri(const std::string& store_uri);

}  // namespace trtwatch::builds
