#include "builds/stores/open_record_store.h"

#include <utility>

#include "builds/stores/postgres_store.h"
#include "builds/stores/sqlite_store.h"
#include "builds/stores/store_support.h"
#include "protocol/utf8.h"

namespace trtwatch::builds {

bool IsPostgresUri(const std::string& store_uri) {
  return store_uri.rfind("postgresql://", 0) == 0 || store_uri.rfind("postgres://", 0) == 0;
}

StoreOpening OpenRecordStore(const std::string& store_uri, const std::string& data_dir) {
  using Outcome = StoreOpening::Outcome;
  if (store_uri.empty()) return SqliteStore::Open(data_dir);
  if (!IsPostgresUri(store_uri)) {
    // Only the scheme is quoted: a URI may carry a password.
    const std::string scheme = ValidBoundedText(store_uri.substr(0, store_uri.find(':')), 40);
    return StoreOpening::Failed(Outcome::kInvalid, "--store \"" + scheme +
                                                       ":…\" is no store this trtwatch knows: give "
                                                       "postgresql://USER@HOST:PORT/DB, or leave it empty for "
                                                       "SQLite in --data-dir");
  }
  StoreOpening opened = PostgresStore::Open(store_uri);  // first: a bad URI makes no folder
  if (opened.store) {
    std::string why = PrepareDataDir(data_dir);
    if (!why.empty()) return StoreOpening::Failed(Outcome::kUnavailable, std::move(why));
  }
  return opened;
}

}  // namespace trtwatch::builds
