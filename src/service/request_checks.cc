#include "service/request_checks.h"

#include <boost/asio/ip/address.hpp>
#include <vector>

#include "service/http_request.h"  // EqualsIgnoreCase

namespace trtwatch::service {

std::string BrowserCheck(std::string_view origin, std::string_view host, bool credentials_required,
                         const ServerOptions& options) {
  auto listed = [](const std::vector<std::string>& list, std::string_view value) {
    for (const std::string& item : list) {
      if (EqualsIgnoreCase(item, value)) return true;
    }
    return false;
  };
  if (!host.empty() && !credentials_required) {
    // The name without the port; an IP literal or localhost cannot be rebound to
    // another address by a hostile DNS server.
    std::string_view name = host;
    if (name.front() == '[') {
      name = name.substr(0, name.find(']') + 1);
    } else if (const size_t colon = name.rfind(':'); colon != std::string_view::npos) {
      name = name.substr(0, colon);
    }
    boost::system::error_code ec;
    std::string bare(name);
    if (bare.size() >= 2 && bare.front() == '[') bare = bare.substr(1, bare.size() - 2);
    boost::asio::ip::make_address(bare, ec);
    if (ec && !EqualsIgnoreCase(name, "localhost") && !listed(options.allowed_hosts, name) &&
        !listed(options.allowed_hosts, host)) {
      return "Host \"" + std::string(host) + "\" is not this service's; use an IP address or localhost, or start the "
             "service with --allow-host " + std::string(name);
    }
  }
  if (!origin.empty()) {
    const bool same_origin = !host.empty() && (EqualsIgnoreCase(origin, "http://" + std::string(host)) ||
                                               EqualsIgnoreCase(origin, "https://" + std::string(host)));
    if (!same_origin && !listed(options.allowed_origins, origin)) {
      return "cross-origin request from \"" + std::string(origin) + "\" refused; start the service with "
             "--allow-origin " + std::string(origin) + " to allow that page";
    }
  }
  return {};
}


bool TokenMatches(const std::string& presented, const std::string& expected) {
  // Every byte is compared whatever the first difference; the length only decides
  // the result, not how long the comparison takes over the expected token.
  unsigned char diff = presented.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < expected.size(); ++i) {
    const unsigned char p = i < presented.size() ? static_cast<unsigned char>(presented[i]) : 0;
    diff |= static_cast<unsigned char>(p ^ static_cast<unsigned char>(expected[i]));
  }
  return diff == 0;
}

}  // namespace trtwatch::service
