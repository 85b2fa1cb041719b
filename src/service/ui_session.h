// Browser sign-in for a service started with --users or --token-file.
//
// A browser cannot attach "Authorization: Bearer" to a page load or an EventSource, and
// a token in a URL leaks into history and logs. So the dashboard POSTs the token once
// (POST /ui/session) and gets back a session cookie, bound to the user the token names: 256 random bits, HttpOnly (page
// scripts never see it), SameSite=Strict (never sent by another site's page), Path=/.
// The cookie is not the token: it can be revoked (sign out) and expires on its own.
// Sessions live in memory only; after a restart the browser signs in again.
//
// Threading: not synchronised; owned by the service's event-loop thread.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace trtwatch::service {

inline constexpr std::string_view kSessionCookieName = "trtwatch_session";

class UiSessions {
 public:
  UiSessions(double lifetime_seconds, size_t max_sessions)
      : lifetime_seconds_(lifetime_seconds), max_sessions_(max_sessions) {}

  // A new session id (64 hex digits from the OS's random source) for `user` (its
  // requests carry that user; empty where no users are set up). When max_sessions are
  // open the one that expires first is dropped.
  std::string Create(double now, std::string user = {});
  // The user of the live session `id` (constant-time compare against each live id), or
  // nullopt.
  std::optional<std::string> UserOf(std::string_view id, double now);
  bool Valid(std::string_view id, double now) { return UserOf(id, now).has_value(); }
  void Revoke(std::string_view id);
  double lifetime_seconds() const { return lifetime_seconds_; }
  size_t size() const { return sessions_.size(); }

 private:
  void DropExpired(double now);

  const double lifetime_seconds_;
  const size_t max_sessions_;
  struct Session {
    double expires = 0;  // unix time
    std::string user;
  };
  std::map<std::string, Session, std::less<>> sessions_;  // by id
};

// The value of cookie `name` in a Cookie request header ("a=1; b=2"), or empty.
std::string_view CookieValue(std::string_view cookie_header, std::string_view name);

// "trtwatch_session=ID; Path=/; HttpOnly; SameSite=Strict; Max-Age=N". An empty id
// with max_age 0 clears the cookie (sign out).
std::string SessionSetCookie(std::string_view id, double max_age_seconds);

}  // namespace trtwatch::service
