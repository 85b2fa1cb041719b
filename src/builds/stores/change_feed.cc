#include "builds/stores/change_feed.h"

#include <algorithm>
#include <charconv>

namespace trtwatch::builds {

namespace {

bool IsBuildIdText(const std::string& id) {
  constexpr size_t kHexDigits = 32;
  return id.size() == 2 + kHexDigits && id.compare(0, 2, "b_") == 0 &&
         std::all_of(id.begin() + 2, id.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

}  // namespace

bool ParseStoreChange(StoreChange::Kind kind, const std::string& payload, StoreChange* change) {
  if (payload.size() > 64) return false;
  const size_t space = payload.find(' ');
  change->kind = kind;
  change->id = payload.substr(0, space);
  change->last_seq = 0;
  if (!IsBuildIdText(change->id)) return false;
  if (kind == StoreChange::Kind::kRecord) return space == std::string::npos;
  if (space == std::string::npos) return false;
  const char* first = payload.data() + space + 1;
  const char* last = payload.data() + payload.size();
  const auto [end, ec] = std::from_chars(first, last, change->last_seq);
  return ec == std::errc() && end == last && first != last;
}

}  // namespace trtwatch::builds
