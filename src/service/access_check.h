// Who is calling, and whether they may: the identity a request carries (a trusted
// proxy's header, a dashboard sign-in, a bearer token) checked against the users and
// the role the route and method need (roles.h). Decided on the request's head alone,
// before its body is read; ownership (a builder cancels and deletes only their own)
// needs the record, so the handlers check it (OwnershipRefusal).
//
// Threading: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "service/api_answer.h"
#include "service/roles.h"
#include "service/route_table.h"
#include "service/users_file.h"

namespace trtwatch::service {

// What a trusted proxy's identity header says about a request (TrustedProxyIdentity).
struct ProxyIdentity {
  enum class Kind { kNone, kUser, kBadHeader };
  Kind kind = Kind::kNone;  // kNone: not from a trusted proxy, or no header: the token decides
  std::string name;         // kUser: the user named; kBadHeader: what is wrong, and the fix
};

// `peer`: the connection's address; `header`: the identity header's value, none when
// absent; `trusted`: --trusted-proxy's addresses; `header_name` for the error. A header
// from any other peer is ignored, never trusted.
ProxyIdentity TrustedProxyIdentity(std::string_view peer, std::optional<std::string_view> header,
                                   const std::vector<std::string>& trusted, std::string_view header_name);

// The credentials a request presents, as read from its head.
struct Credentials {
  ProxyIdentity proxy;
  std::optional<std::string> session_user;  // a live dashboard session's user
  std::optional<std::string_view> bearer;   // the Authorization header's bearer token
};

struct Caller {
  std::string name;
  Role role = Role::kViewer;
};

// A caller, none (no credentials asked for, or none presented to a public route), or
// the refusal to answer with.
struct AccessDecision {
  std::optional<Caller> caller;
  std::optional<ApiAnswer> refusal;  // 400, 401 (with WWW-Authenticate), 403 (with needed_role)
};

// `entry` is the route's (nullptr for the dashboard's public pages); `required`: the
// service asks for credentials (--users or --token-file).
AccessDecision CheckAccess(const RouteEntry* entry, Method method, const Credentials& credentials, const Users& users,
                           bool required);

// What an owner did to own something: a build or group is submitted (its owner may
// cancel or delete it), a model uploaded (its owner may replace or delete it).
enum class Owned { kSubmitted, kUploaded };

// 403 when `caller` may not act on what `owner` submitted or uploaded (`what`: "build
// b_...", "model resnet50"); nullopt when they may (an admin, the owner, or no caller:
// no credentials asked for). An owner of "" (made before users existed) is an admin's.
std::optional<ApiAnswer> OwnershipRefusal(std::string_view caller, std::string_view owner, const Users& users,
                                          std::string_view what, Owned how);
// OwnershipRefusal with the owner read from a build record's submitted_by.
std::optional<ApiAnswer> RecordOwnershipRefusal(std::string_view caller, std::string_view record, const Users& users,
                                                std::string_view what);

}  // namespace trtwatch::service
