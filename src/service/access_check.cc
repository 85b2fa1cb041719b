#include "service/access_check.h"

#include <boost/asio/ip/address.hpp>
#include <nlohmann/json.hpp>

namespace trtwatch::service {

namespace {

// The address as one form: an IPv4-mapped IPv6 address as IPv4; nullopt if not one.
std::optional<boost::asio::ip::address> AddressOf(std::string_view text) {
  boost::system::error_code ec;
  boost::asio::ip::address address = boost::asio::ip::make_address(std::string(text), ec);
  if (ec) return std::nullopt;
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    return boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, address.to_v6());
  }
  return address;
}

std::string_view MethodName(Method method) {
  switch (method) {
    case Method::kGet:
      return "GET";
    case Method::kPost:
      return "POST";
    case Method::kPut:
      return "PUT";
    case Method::kDelete:
      return "DELETE";
    case Method::kOther:
      break;
  }
  return "this method on";
}

// RFC 9110 §11.6.1: a 401 says how to authenticate.
ApiAnswer Unauthenticated(const std::string& message) {
  ApiAnswer answer = ErrorAnswer(401, message);
  answer.Set("WWW-Authenticate", "Bearer");
  return answer;
}

ApiAnswer RoleRefusal(const RouteEntry& entry, Method method, const Caller& caller, Role needed) {
  const std::string message = std::string(MethodName(method)) + " " + std::string(entry.pattern) + " needs the role " +
                              std::string(RoleName(needed)) + "; " + caller.name + " is " +
                              std::string(RoleWithArticle(caller.role)) +
                              " (an admin can change it in the users file)";
  return JsonAnswer(403, nlohmann::json{{"error", message}, {"needed_role", RoleName(needed)}}.dump());
}

// The caller the credentials name: the proxy's header first, then a dashboard
// session, then the bearer token; or the refusal.
AccessDecision Identify(const Credentials& credentials, const Users& users) {
  AccessDecision decision;
  if (credentials.proxy.kind == ProxyIdentity::Kind::kBadHeader) {
    decision.refusal = ErrorAnswer(400, credentials.proxy.name);
    return decision;
  }
  const User* user = nullptr;
  if (credentials.proxy.kind == ProxyIdentity::Kind::kUser) {
    user = users.ByName(credentials.proxy.name);
    if (!user) {
      decision.refusal = ErrorAnswer(403, "the proxy signed in \"" + credentials.proxy.name +
                                              "\", who is not in the users file; an admin adds them with `trtwatch "
                                              "user add " + credentials.proxy.name + " --role viewer --users FILE`");
      return decision;
    }
  } else if (credentials.session_user) {
    user = users.ByName(*credentials.session_user);  // a user since removed has no session
  }
  if (!user && credentials.bearer) user = users.ByToken(*credentials.bearer);
  if (user) decision.caller = Caller{user->name, user->role};
  return decision;
}

}  // namespace

ProxyIdentity TrustedProxyIdentity(std::string_view peer, std::optional<std::string_view> header,
                                   const std::vector<std::string>& trusted, std::string_view header_name) {
  const std::optional<boost::asio::ip::address> from = AddressOf(peer);
  bool is_trusted = false;
  for (const std::string& address : trusted) is_trusted |= from && AddressOf(address) == from;
  if (!is_trusted || !header) return {};
  if (!ValidUserName(*header)) {
    return {ProxyIdentity::Kind::kBadHeader,
            "the trusted proxy's " + std::string(header_name) +
                " header is not a user name (1-64 characters of A-Z a-z 0-9 . _ @ -); configure the proxy to send "
                "the user's name there"};
  }
  return {ProxyIdentity::Kind::kUser, std::string(*header)};
}

AccessDecision CheckAccess(const RouteEntry* entry, Method method, const Credentials& credentials, const Users& users,
                           bool required) {
  if (!required) return {};
  AccessDecision decision = Identify(credentials, users);
  if (decision.refusal) return decision;
  const std::optional<Role> needed = entry ? NeededRole(entry->access, method) : std::nullopt;
  if (!needed) return decision;
  if (!decision.caller) {
    decision.refusal = Unauthenticated(
        "missing or unknown bearer token; send \"Authorization: Bearer TOKEN\" with your token from the server's "
        "--users file (`trtwatch user add`) or its --token-file");
  } else if (!RoleAllows(decision.caller->role, *needed)) {
    decision.refusal = RoleRefusal(*entry, method, *decision.caller, *needed);  // RFC 9110 §15.5.4
  }
  return decision;
}

std::optional<ApiAnswer> OwnershipRefusal(std::string_view caller, std::string_view owner, const Users& users,
                                          std::string_view what, Owned how) {
  if (caller.empty() || caller == owner) return std::nullopt;
  const User* user = users.ByName(caller);
  if (user && user->role == Role::kAdmin) return std::nullopt;
  const std::string by = owner.empty() ? "before users were set up (an admin's)" : "by " + std::string(owner);
  const bool uploaded = how == Owned::kUploaded;
  const std::string message = std::string(what) + (uploaded ? " was uploaded " : " was submitted ") + by + "; " +
                              std::string(caller) + (uploaded ? " may replace" : " may cancel") +
                              " or delete only their own, an admin may do it";
  return JsonAnswer(403, nlohmann::json{{"error", message}, {"needed_role", "admin"}}.dump());
}

std::optional<ApiAnswer> RecordOwnershipRefusal(std::string_view caller, std::string_view record, const Users& users,
                                                std::string_view what) {
  if (caller.empty()) return std::nullopt;
  const nlohmann::json doc = nlohmann::json::parse(record, nullptr, false);
  const nlohmann::json owner = doc.is_object() ? doc.value("submitted_by", nlohmann::json(nullptr)) : nullptr;
  return OwnershipRefusal(caller, owner.is_string() ? owner.get<std::string>() : std::string(), users, what,
                          Owned::kSubmitted);
}

}  // namespace trtwatch::service
