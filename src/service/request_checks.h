// The checks every request goes through before its route: where it comes from (a
// browser's Origin and Host) and the comparison of secrets. Pure, so that
// fuzz/http_request_fuzz.cc drives them without a server.
//
// Threading: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "service/server_options.h"

namespace trtwatch::service {

// Why a request is refused as browser-borne (cross-origin or a foreign Host), or empty.
// `origin`/`host` are the header values (empty when absent); `credentials_required`
// says whether credentials guard the API (--users or --token-file: then a foreign Host
// cannot read anything).
std::string BrowserCheck(std::string_view origin, std::string_view host, bool credentials_required,
                         const ServerOptions& options);

// Constant-time comparison of a presented token with the expected one.
bool TokenMatches(const std::string& presented, const std::string& expected);

}  // namespace trtwatch::service
