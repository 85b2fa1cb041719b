// The dashboard: its public files (service/ui_routes.h) and the sign-in that trades
// the --token-file token for a session cookie (POST /ui/session {"token": ...};
// DELETE signs out; GET says whether a sign-in is needed). Answered before the API's
// route table, without a token: the pages hold no data.
//
// Threading: the service's event-loop thread.
#pragma once

#include <optional>
#include <string_view>

#include "service/api_answer.h"
#include "service/api_context.h"

namespace trtwatch::service {

// Whether `path` is the dashboard's (public: no token asked for).
[[nodiscard]] bool IsUiPath(std::string_view path);
// The dashboard's answer to `req`; nullopt for a path that is the API's.
[[nodiscard]] std::optional<ApiAnswer> UiAnswer(ApiContext& api, const ApiRequest& req);
// Whether `cookie` (the Cookie header) carries a live dashboard sign-in.
[[nodiscard]] bool HasUiSession(ApiContext& api, std::string_view cookie);

}  // namespace trtwatch::service
