#include "service/ui_session.h"

#include <cstdio>
#include <random>

#include "service/request_checks.h"  // TokenMatches

namespace trtwatch::service {

std::string UiSessions::Create(double now) {
  DropExpired(now);
  while (expiry_.size() >= max_sessions_ && !expiry_.empty()) {
    auto soonest = expiry_.begin();
    for (auto it = expiry_.begin(); it != expiry_.end(); ++it) {
      if (it->second < soonest->second) soonest = it;
    }
    expiry_.erase(soonest);
  }
  std::random_device os_random;  // /dev/urandom on Linux
  std::string id;
  for (int i = 0; i < 8; ++i) {
    char word[9];
    std::snprintf(word, sizeof word, "%08x", static_cast<unsigned>(os_random()));
    id += word;
  }
  expiry_[id] = now + lifetime_seconds_;
  return id;
}

bool UiSessions::Valid(std::string_view id, double now) {
  DropExpired(now);
  const std::string presented(id);
  bool found = false;
  for (const auto& [live, expires] : expiry_) found |= TokenMatches(presented, live);
  return found;
}

void UiSessions::Revoke(std::string_view id) {
  auto it = expiry_.find(id);
  if (it != expiry_.end()) expiry_.erase(it);
}

void UiSessions::DropExpired(double now) {
  for (auto it = expiry_.begin(); it != expiry_.end();) {
    it = it->second <= now ? expiry_.erase(it) : std::next(it);
  }
}

std::string_view CookieValue(std::string_view header, std::string_view name) {
  while (!header.empty()) {
    const size_t end = header.find(';');
    std::string_view pair = header.substr(0, end);
    header = end == std::string_view::npos ? std::string_view() : header.substr(end + 1);
    while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
    const size_t eq = pair.find('=');
    if (eq != std::string_view::npos && pair.substr(0, eq) == name) return pair.substr(eq + 1);
  }
  return {};
}

std::string SessionSetCookie(std::string_view id, double max_age_seconds) {
  return std::string(kSessionCookieName) + "=" + std::string(id) + "; Path=/; HttpOnly; SameSite=Strict; Max-Age=" +
         std::to_string(static_cast<long long>(max_age_seconds));
}

}  // namespace trtwatch::service
