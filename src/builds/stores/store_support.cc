#include "builds/stores/store_support.h"

#include <algorithm>

#include "platform/file_access.h"

namespace trtwatch::builds {

std::string PrepareDataDir(const std::string& dir) {
  std::string why;
  if (!MakePrivateFolder(dir, &why)) return "cannot create --data-dir \"" + dir + "\": " + why;
  // One made earlier (mkdir -p, an older version) may be open to others.
  const PrivacyResult r = KeepPrivate(dir);
  if (r.outcome != PrivacyResult::Outcome::kPrivate) {
    return "cannot make --data-dir \"" + dir + "\" private to this user: " + r.error;
  }
  return "";
}

RecordStore::Page PageOf(std::vector<std::pair<int64_t, std::string>> rows, int limit) {
  RecordStore::Page page;
  const size_t take = std::min(rows.size(), static_cast<size_t>(std::max(limit, 0)));
  for (size_t i = 0; i < take; ++i) page.docs.push_back(std::move(rows[i].second));
  if (rows.size() > take && take > 0) page.next_cursor = rows[take - 1].first;
  return page;
}

}  // namespace trtwatch::builds
