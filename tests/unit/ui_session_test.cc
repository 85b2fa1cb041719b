// The dashboard's sign-in sessions and cookie parsing.
#include <gtest/gtest.h>

#include <set>

#include "service/ui_session.h"

namespace trtwatch::service {
namespace {

TEST(UiSessions, ANewSessionIsValidUntilItExpires) {
  UiSessions sessions(100, 8);
  const std::string id = sessions.Create(1000);
  ASSERT_EQ(id.size(), 64u);
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_TRUE(sessions.Valid(id, 1099));
  EXPECT_FALSE(sessions.Valid(id, 1100));
  EXPECT_EQ(sessions.size(), 0u);
}

TEST(UiSessions, ASessionKeepsTheUserWhoSignedIn) {
  UiSessions sessions(100, 8);
  const std::string alice = sessions.Create(1000, "alice");
  const std::string bob = sessions.Create(1000, "bob");
  EXPECT_EQ(sessions.UserOf(alice, 1001), "alice");
  EXPECT_EQ(sessions.UserOf(bob, 1001), "bob");
  EXPECT_EQ(sessions.UserOf(alice, 1100), std::nullopt);  // expired
  EXPECT_EQ(sessions.UserOf("nope", 1001), std::nullopt);
}

TEST(UiSessions, UnknownEmptyAndTruncatedIdsAreRefused) {
  UiSessions sessions(100, 8);
  const std::string id = sessions.Create(0);
  EXPECT_FALSE(sessions.Valid("", 1));
  EXPECT_FALSE(sessions.Valid(id.substr(0, 63), 1));
  EXPECT_FALSE(sessions.Valid(std::string(64, '0'), 1));
  EXPECT_FALSE(sessions.Valid(id + "0", 1));
}

TEST(UiSessions, SessionsAreDistinctAndRevocable) {
  UiSessions sessions(100, 64);
  std::set<std::string> ids;
  for (int i = 0; i < 32; ++i) ids.insert(sessions.Create(0));
  EXPECT_EQ(ids.size(), 32u);
  const std::string one = *ids.begin();
  sessions.Revoke(one);
  EXPECT_FALSE(sessions.Valid(one, 1));
  EXPECT_TRUE(sessions.Valid(*std::next(ids.begin()), 1));
}

TEST(UiSessions, AtTheLimitTheSessionExpiringFirstIsDropped) {
  UiSessions sessions(100, 2);
  const std::string oldest = sessions.Create(0);
  const std::string second = sessions.Create(10);
  const std::string third = sessions.Create(20);
  EXPECT_EQ(sessions.size(), 2u);
  EXPECT_FALSE(sessions.Valid(oldest, 21));
  EXPECT_TRUE(sessions.Valid(second, 21));
  EXPECT_TRUE(sessions.Valid(third, 21));
}

TEST(CookieValue, FindsTheNamedCookieOnly) {
  EXPECT_EQ(CookieValue("trtwatch_session=abc", "trtwatch_session"), "abc");
  EXPECT_EQ(CookieValue("a=1; trtwatch_session=abc; b=2", "trtwatch_session"), "abc");
  EXPECT_EQ(CookieValue("xtrtwatch_session=abc; trtwatch_session_old=d", "trtwatch_session"), "");
  EXPECT_EQ(CookieValue("", "trtwatch_session"), "");
  EXPECT_EQ(CookieValue(";;; =; trtwatch_session", "trtwatch_session"), "");
}

TEST(SessionSetCookie, IsHttpOnlyStrictAndScopedToTheSite) {
  EXPECT_EQ(SessionSetCookie("abc", 3600), "trtwatch_session=abc; Path=/; HttpOnly; SameSite=Strict; Max-Age=3600");
  EXPECT_EQ(SessionSetCookie("", 0), "trtwatch_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
}

}  // namespace
}  // namespace trtwatch::service
