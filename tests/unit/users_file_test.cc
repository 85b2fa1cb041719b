// The users file (service/users_file.h): its lines, every refusal naming file:line and
// the fix, and token lookup by digest.
#include "service/users_file.h"

#include <gtest/gtest.h>

#include <string>

#include "platform/sha256.h"

namespace trtwatch::service {
namespace {

std::string Digest(std::string_view token) { return HexOf(Sha256Of(token)); }

TEST(UsersFile, ReadsUsersCommentsAndBlankLines) {
  const std::string text = "# team\n\nalice viewer " + Digest("t-alice") + "\n  bob\tbuilder " + Digest("t-bob") +
                           "  \r\nsso.carol@example admin -\n";
  Result<Users> users = Users::Parse(text, "users.txt");
  ASSERT_TRUE(users.ok()) << users.error();
  ASSERT_EQ(users->all().size(), 3u);
  EXPECT_EQ(users->ByToken("t-alice")->name, "alice");
  EXPECT_EQ(users->ByToken("t-bob")->role, Role::kBuilder);
  EXPECT_EQ(users->ByToken("t-carol"), nullptr);
  EXPECT_EQ(users->ByToken(""), nullptr);
  EXPECT_EQ(users->ByName("sso.carol@example")->role, Role::kAdmin);
  EXPECT_FALSE(users->ByName("sso.carol@example")->token_digest.has_value());  // proxy sign-in only
}

struct BadLine {
  std::string text;
  std::string says;
};

TEST(UsersFile, EveryBadLineIsRefusedWithItsPlaceAndTheFix) {
  const std::string d = Digest("x");
  const BadLine cases[] = {
      {"alice viewer\n", "users.txt:1: expected 3 fields"},
      {"# ok\nalice viewer " + d + " extra\n", "users.txt:2: expected 3 fields"},
      {"al/ice viewer " + d + "\n", "is not 1-64 characters"},
      {std::string(65, 'a') + " viewer " + d + "\n", "is not 1-64 characters"},
      {"alice owner " + d + "\n", "the role \"owner\" is none of viewer, builder, admin"},
      {"alice viewer " + d.substr(1) + "\n", "64 lowercase hex digits"},
      {"alice viewer " + std::string(64, 'A') + "\n", "64 lowercase hex digits"},
      {"alice viewer " + d + "\nalice admin -\n", "users.txt:2: the user \"alice\" is listed twice"},
      {"alice viewer " + d + "\nbob admin " + d + "\n", "give each user a token of their own"},
      {std::string(300, '#') + "\n", "longer than 256 bytes"},
  };
  for (const BadLine& c : cases) {
    Result<Users> users = Users::Parse(c.text, "users.txt");
    ASSERT_FALSE(users.ok()) << c.text;
    EXPECT_NE(users.error().find(c.says), std::string::npos) << users.error();
  }
}

TEST(UsersFile, ALineWritesBackAsItReads) {
  const User user{"alice", Role::kBuilder, Sha256Of("t")};
  Result<Users> users = Users::Parse(UsersFileLine(user) + UsersFileLine(User{"sso", Role::kViewer, {}}), "f");
  ASSERT_TRUE(users.ok()) << users.error();
  EXPECT_EQ(users->ByToken("t")->name, "alice");
  EXPECT_EQ(UsersFileLine(*users->ByName("sso")), "sso viewer -\n");
}

TEST(UsersFile, TheTokenFileIsOneAdminWhoseNameNoUserMayTake) {
  Result<UsersSource> alone = UsersSource::Open("", "a-token-of-sixteen-chars");
  ASSERT_TRUE(alone.ok()) << alone.error();
  EXPECT_TRUE(alone.value().required());
  const User* admin = alone.value().Current(0).ByToken("a-token-of-sixteen-chars");
  ASSERT_NE(admin, nullptr);
  EXPECT_EQ(admin->name, kTokenFileUser);
  EXPECT_EQ(admin->role, Role::kAdmin);

  Result<UsersSource> none = UsersSource::Open("", "");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none.value().required());
}

TEST(UsersFile, NamesFollowTheRule) {
  EXPECT_TRUE(ValidUserName("a"));
  EXPECT_TRUE(ValidUserName("Jane.Doe_2@corp-x"));
  EXPECT_TRUE(ValidUserName(std::string(64, 'z')));
  EXPECT_FALSE(ValidUserName(""));
  EXPECT_FALSE(ValidUserName(std::string(65, 'z')));
  EXPECT_FALSE(ValidUserName("a b"));
  EXPECT_FALSE(ValidUserName("a\nb"));
  EXPECT_FALSE(ValidUserName("ü"));
}

}  // namespace
}  // namespace trtwatch::service
