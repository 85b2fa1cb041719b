#include "service/api_ui.h"

#include <nlohmann/json.hpp>
#include <string>

#include "builds/audit_log.h"
#include "core/clock.h"
#include "builds/build_record.h"
#include "service/http_request.h"
#include "service/ui_routes.h"

namespace trtwatch::service {

using nlohmann::json;

namespace {

constexpr std::string_view kSessionPath = "/ui/session";

ApiAnswer SignIn(ApiContext& api, const ApiRequest& req) {
  // JSON only (checked with the head): a cross-site HTML form cannot send it without
  // a CORS preflight.
  const json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object() || !body.contains("token") || !body["token"].is_string()) {
    return ErrorAnswer(400,
                       "send Content-Type: application/json with {\"token\": \"...\"}, your token from the server's "
                       "--users file or its --token-file");
  }
  if (!api.users.required()) return ErrorAnswer(409, "this server needs no sign-in (no --users, no --token-file)");
  const User* user = CurrentUsers(api).ByToken(body["token"].get<std::string>());
  if (!user) return ErrorAnswer(401, "unknown token; use yours from the server's --users file or its --token-file");
  (void)api.audit.Record(user->name, builds::audit_action::kUiSignIn, "");
  ApiAnswer answer = JsonAnswer(200, json{{"signed_in", true}, {"user", user->name}, {"role", RoleName(user->role)}}.dump());
  answer.Set("Set-Cookie", SessionSetCookie(api.ui_sessions.Create(Clock::SystemUnixSeconds(), user->name),
                                            api.ui_sessions.lifetime_seconds()));
  return answer;
}

// GET /ui/session: whether a sign-in is needed, and who is signed in with which role,
// so that the dashboard hides what the role may not do (the server checks anyway).
ApiAnswer SessionStatus(ApiContext& api, const ApiRequest& req) {
  const bool needed = api.users.required();
  const User* user = req.caller.empty() ? nullptr : CurrentUsers(api).ByName(req.caller);
  json status{{"token_required", needed}, {"signed_in", !needed || user}};
  status["user"] = user ? json(user->name) : json(nullptr);
  // Without credentials every caller may do everything.
  status["role"] = user ? json(RoleName(user->role)) : needed ? json(nullptr) : json("admin");
  return JsonAnswer(200, status.dump());
}

ApiAnswer Session(ApiContext& api, const ApiRequest& req) {
  if (req.method == Method::kGet) return SessionStatus(api, req);
  if (req.method == Method::kDelete) {
    // Only a live sign-in's end is recorded: anyone may send DELETE.
    const std::string_view id = req.cookie.empty() ? std::string_view() : CookieValue(req.cookie, kSessionCookieName);
    if (!id.empty() && api.ui_sessions.Valid(id, Clock::SystemUnixSeconds())) {
      (void)api.audit.Record(req.caller, builds::audit_action::kUiSignOut, "");
    }
    if (!id.empty()) api.ui_sessions.Revoke(id);
    ApiAnswer answer = JsonAnswer(200, json{{"signed_in", false}}.dump());
    answer.Set("Set-Cookie", SessionSetCookie("", 0));
    return answer;
  }
  if (req.method != Method::kPost) return MethodNotAllowed("GET, POST, DELETE");
  return SignIn(api, req);
}

}  // namespace

bool IsUiPath(std::string_view path) { return path == kSessionPath || UiAssetFor(path).has_value(); }

std::optional<ApiAnswer> UiAnswer(ApiContext& api, const ApiRequest& req) {
  if (req.path == kSessionPath) return Session(api, req);
  const std::optional<UiAsset> asset = UiAssetFor(req.path);
  if (!asset) return std::nullopt;
  if (req.method != Method::kGet) return MethodNotAllowed("GET");
  ApiAnswer answer;
  answer.Set("Content-Type", std::string(asset->content_type));
  answer.Set("Content-Security-Policy", std::string(kUiContentSecurityPolicy));
  answer.Set("X-Content-Type-Options", "nosniff");
  answer.Set("Referrer-Policy", "no-referrer");
  answer.Set("Cache-Control", "no-cache");
  answer.body = std::string(asset->body);
  return answer;
}

std::optional<std::string> UiSessionUser(ApiContext& api, std::string_view cookie) {
  if (cookie.empty()) return std::nullopt;
  const std::string_view id = CookieValue(cookie, kSessionCookieName);
  if (id.empty()) return std::nullopt;
  return api.ui_sessions.UserOf(id, Clock::SystemUnixSeconds());
}

}  // namespace trtwatch::service
