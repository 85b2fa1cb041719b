// Who calls and whether they may (service/access_check.h): the trusted proxy's header,
// the bearer token, the role per route and method, ownership. RFC 9110 §11.6.1: a 401
// carries WWW-Authenticate; §15.5.4: 403 is a known caller refused.
#include "service/access_check.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

#include "platform/sha256.h"

namespace trtwatch::service {
namespace {

Users TeamUsers() {
  Users users;
  EXPECT_TRUE(users.Add({"vera", Role::kViewer, Sha256Of("t-vera")}).ok());
  EXPECT_TRUE(users.Add({"bo", Role::kBuilder, Sha256Of("t-bo")}).ok());
  EXPECT_TRUE(users.Add({"ada", Role::kAdmin, Sha256Of("t-ada")}).ok());
  EXPECT_TRUE(users.Add({"sso", Role::kBuilder, std::nullopt}).ok());
  return users;
}

const RouteEntry& Entry(Endpoint endpoint) { return *EntryOf(endpoint); }

Credentials Bearer(std::string_view token) { return {{}, std::nullopt, token}; }

TEST(TrustedProxy, OnlyAListedPeerIsBelieved) {
  const std::vector<std::string> trusted = {"127.0.0.1", "10.0.0.7"};
  const ProxyIdentity from_proxy = TrustedProxyIdentity("127.0.0.1", "sso", trusted, "X-Forwarded-User");
  EXPECT_EQ(from_proxy.kind, ProxyIdentity::Kind::kUser);
  EXPECT_EQ(from_proxy.name, "sso");
  // The same address as IPv4-mapped IPv6, as a dual-stack socket reports it.
  EXPECT_EQ(TrustedProxyIdentity("::ffff:10.0.0.7", "sso", trusted, "X").kind, ProxyIdentity::Kind::kUser);
  // Anyone else's header is ignored, never trusted.
  EXPECT_EQ(TrustedProxyIdentity("10.0.0.8", "ada", trusted, "X").kind, ProxyIdentity::Kind::kNone);
  EXPECT_EQ(TrustedProxyIdentity("127.0.0.1", "ada", {}, "X").kind, ProxyIdentity::Kind::kNone);
  EXPECT_EQ(TrustedProxyIdentity("", "ada", trusted, "X").kind, ProxyIdentity::Kind::kNone);
  // The proxy without the header: the bearer token decides.
  EXPECT_EQ(TrustedProxyIdentity("127.0.0.1", std::nullopt, trusted, "X").kind, ProxyIdentity::Kind::kNone);
  const ProxyIdentity bad = TrustedProxyIdentity("127.0.0.1", "a b", trusted, "X-Forwarded-User");
  EXPECT_EQ(bad.kind, ProxyIdentity::Kind::kBadHeader);
  EXPECT_NE(bad.name.find("X-Forwarded-User"), std::string::npos);
}

TEST(CheckAccess, WithoutCredentialsAskedForEveryoneMayAndNobodyIsNamed) {
  const AccessDecision d = CheckAccess(&Entry(Endpoint::kBuilds), Method::kPost, {}, Users{}, false);
  EXPECT_FALSE(d.refusal);
  EXPECT_FALSE(d.caller);
}

TEST(CheckAccess, NoOrAnUnknownTokenIs401WithWwwAuthenticate) {
  const Users users = TeamUsers();
  for (const Credentials& c : {Credentials{}, Bearer("wrong")}) {
    const AccessDecision d = CheckAccess(&Entry(Endpoint::kBuilds), Method::kGet, c, users, true);
    ASSERT_TRUE(d.refusal);
    EXPECT_EQ(d.refusal->status, 401);
    const std::pair<std::string, std::string> challenge{"WWW-Authenticate", "Bearer"};
    EXPECT_NE(std::find(d.refusal->headers.begin(), d.refusal->headers.end(), challenge), d.refusal->headers.end());
    EXPECT_NE(d.refusal->body.find("--users"), std::string::npos);
    EXPECT_NE(d.refusal->body.find("--token-file"), std::string::npos);
  }
  // A public route asks for nothing.
  EXPECT_FALSE(CheckAccess(&Entry(Endpoint::kHealth), Method::kGet, {}, users, true).refusal);
}

TEST(CheckAccess, ARoleTooLowIs403NamingTheRoleNeeded) {
  const Users users = TeamUsers();
  const AccessDecision d = CheckAccess(&Entry(Endpoint::kBuilds), Method::kPost, Bearer("t-vera"), users, true);
  ASSERT_TRUE(d.refusal);
  EXPECT_EQ(d.refusal->status, 403);
  const nlohmann::json body = nlohmann::json::parse(d.refusal->body);
  EXPECT_EQ(body["needed_role"], "builder");
  EXPECT_EQ(body["error"], "POST /builds needs the role builder; vera is a viewer (an admin can change it in the users file)");
  // Reading the same route is a viewer's.
  const AccessDecision read = CheckAccess(&Entry(Endpoint::kBuilds), Method::kGet, Bearer("t-vera"), users, true);
  EXPECT_FALSE(read.refusal);
  EXPECT_EQ(read.caller->name, "vera");
}

TEST(CheckAccess, BuildersAndAdminsPassTheirRoutes) {
  const Users users = TeamUsers();
  for (const char* token : {"t-bo", "t-ada"}) {
    for (Endpoint e : {Endpoint::kBuildCancel, Endpoint::kMcp, Endpoint::kModel, Endpoint::kMetrics}) {
      EXPECT_FALSE(CheckAccess(&Entry(e), Method::kPost, Bearer(token), users, true).refusal) << token;
    }
  }
}

TEST(CheckAccess, TheProxyComesFirstThenTheSessionThenTheToken) {
  const Users users = TeamUsers();
  Credentials c{{ProxyIdentity::Kind::kUser, "sso"}, std::string("vera"), "t-ada"};
  EXPECT_EQ(CheckAccess(&Entry(Endpoint::kBuilds), Method::kPost, c, users, true).caller->name, "sso");
  c.proxy = {};
  EXPECT_EQ(CheckAccess(&Entry(Endpoint::kBuilds), Method::kGet, c, users, true).caller->name, "vera");
  c.session_user = "gone";  // removed from the file since: the token decides
  EXPECT_EQ(CheckAccess(&Entry(Endpoint::kBuilds), Method::kGet, c, users, true).caller->name, "ada");
  // A proxy user not in the file: 403 naming `trtwatch user add`.
  const Credentials stranger{{ProxyIdentity::Kind::kUser, "mallory"}, std::nullopt, std::nullopt};
  const AccessDecision d = CheckAccess(&Entry(Endpoint::kBuilds), Method::kGet, stranger, users, true);
  ASSERT_TRUE(d.refusal);
  EXPECT_EQ(d.refusal->status, 403);
  EXPECT_NE(d.refusal->body.find("trtwatch user add mallory"), std::string::npos);
  const Credentials bad{{ProxyIdentity::Kind::kBadHeader, "bad header"}, std::nullopt, "t-ada"};
  EXPECT_EQ(CheckAccess(&Entry(Endpoint::kBuilds), Method::kGet, bad, users, true).refusal->status, 400);
}

TEST(OwnershipRefusal, ABuilderTouchesOnlyTheirOwnAnAdminAnything) {
  const Users users = TeamUsers();
  EXPECT_FALSE(OwnershipRefusal("bo", "bo", users, "build b_1", Owned::kSubmitted));
  EXPECT_FALSE(OwnershipRefusal("ada", "bo", users, "build b_1", Owned::kSubmitted));
  EXPECT_FALSE(OwnershipRefusal("", "bo", users, "build b_1", Owned::kSubmitted));  // no credentials asked for
  const std::optional<ApiAnswer> refused = OwnershipRefusal("sso", "bo", users, "build b_1", Owned::kSubmitted);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 403);
  const nlohmann::json body = nlohmann::json::parse(refused->body);
  EXPECT_EQ(body["needed_role"], "admin");
  EXPECT_NE(body["error"].get<std::string>().find("submitted by bo"), std::string::npos);
  EXPECT_TRUE(OwnershipRefusal("bo", "", users, "build b_1", Owned::kSubmitted));  // made before users: an admin's
}

}  // namespace
}  // namespace trtwatch::service
