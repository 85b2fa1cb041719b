#include "service/ui_session.h"

#include <cstdio>
#include <random>

#include "service/request_checks.h"  // TokenMatches

namespace trtwatch::service {

std::string UiSessions::Create(double now, std::string user) {
  DropExpired(now);
  while (sessions_.size() >= max_sessions_ && !sessions_.empty()) {
    auto soonest = sessions_.begin();
    for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
      if (it->second.expires < soonest->second.expires) soonest = it;
    }
    sessions_.erase(soonest);
  }
  std::random_device os_random;  // /dev/urandom on Linux
  std::string id;
  for (int i = 0; i < 8; ++i) {
    char word[9];
    std::snprintf(word, sizeof word, "%08x", static_cast<unsigned>(os_random()));
    id += word;
  }
  sessions_[id] = Session{now + lifetime_seconds_, std::move(user)};
  return id;
}

std::optional<std::string> UiSessions::UserOf(std::string_view id, double now) {
  DropExpired(now);
  const std::string presented(id);
  const Session* found = nullptr;
  for (const auto& [live, session] : sessions_) {
    if (TokenMatches(presented, live)) found = &session;
  }
  if (!found) return std::nullopt;
  return found->user;
}

void UiSessions::Revoke(std::string_view id) {
  auto it = sessions_.find(id);
  if (it != sessions_.end()) sessions_.erase(it);
}

void UiSessions::DropExpired(double now) {
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    it = it->second.expires <= now ? sessions_.erase(it) : std::next(it);
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
