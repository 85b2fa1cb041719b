// The dashboard: its public files (service/ui_routes.h) and the sign-in that trades a
// user's token for a session cookie bound to that user (POST /ui/session {"token":
// ...}; DELETE signs out; GET says whether a sign-in is needed, who is signed in and
// their role). Answered before the API's
// route table, without a token: the pages hold no data.
//
// Threading: the service's event-loop thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "service/api_answer.h"
#include "service/api_context.h"

namespace trtwatch::service {

// Whether `path` is the dashboard's (public: no token asked for).
[[nodiscard]] bool IsUiPath(std::string_view path);
// The dashboard's answer to `req`; nullopt for a path that is the API's.
[[nodiscard]] std::optional<ApiAnswer> UiAnswer(ApiContext& api, const ApiRequest& req);
// The user of the live dashboard sign-in `cookie` (the Cookie header) carries, or
// nullopt.
[[nodiscard]] std::optional<std::string> UiSessionUser(ApiContext& api, std::string_view cookie);

}  // namespace trtwatch::service
