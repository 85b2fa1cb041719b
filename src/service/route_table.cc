#include "service/route_table.h"


namespace trtwatch::service {

namespace {

#define TRTWATCH_ROUTE_ENTRY(methods, pattern, endpoint, access, delivery, handler) \
  RouteEntry{methods, pattern, Endpoint::endpoint, Access::access, Delivery::delivery},
constexpr RouteEntry kRoutes[] = {TRTWATCH_SERVICE_ROUTES(TRTWATCH_ROUTE_ENTRY)};
#undef TRTWATCH_ROUTE_ENTRY

// The next '/'-separated segment of `s` (which starts after a '/'), and the rest
// after its separator; `more` says whether a separator followed.
struct Segment {
  std::string_view text;
  std::string_view rest;
  bool more = false;
};
Segment NextSegment(std::string_view s) {
  const size_t slash = s.find('/');
  if (slash == std::string_view::npos) return {s, {}, false};
  return {s.substr(0, slash), s.substr(slash + 1), true};
}

// Whether `path` fits `pattern`; the placeholders' segments go to `route` in order
// (the first is the id, the second the file).
bool Matches(std::string_view pattern, std::string_view path, Route* route) {
  if (path.empty() || path.front() != '/') return false;
  Segment p{{}, pattern.substr(1), true};
  Segment s{{}, path.substr(1), true};
  int placeholders = 0;
  while (p.more) {
    if (!s.more) return false;
    p = NextSegment(p.rest);
    s = NextSegment(s.rest);
    if (p.text.starts_with('{')) {
      if (p.text.ends_with("+}") && s.text.empty()) return false;
      (placeholders++ == 0 ? route->id : route->file) = s.text;
    } else if (p.text != s.text) {
      return false;
    }
  }
  return !s.more;
}

}  // namespace

std::span<const RouteEntry> Routes() { return kRoutes; }

Route RouteOf(std::string_view path) {
  for (const RouteEntry& entry : kRoutes) {
    Route route;
    if (Matches(entry.pattern, path, &route)) {
      route.endpoint = entry.endpoint;
      return route;
    }
  }
  return {};
}

const RouteEntry* EntryOf(Endpoint endpoint) {
  for (const RouteEntry& entry : kRoutes) {
    if (entry.endpoint == endpoint) return &entry;
  }
  return nullptr;
}

}  // namespace trtwatch::service
