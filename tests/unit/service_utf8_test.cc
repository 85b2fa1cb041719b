// Untrusted bytes to valid UTF-8 (service/utf8.h).
#include "service/utf8.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace trtwatch::service {
namespace {

TEST(ValidUtf8Test, KeepsValidTextAsIs) {
  for (const std::string& s : std::vector<std::string>{"", "plain", "é", "日本語", "\xF0\x9F\x98\x80 emoji", std::string("nul\0in", 6)}) {
    EXPECT_EQ(ValidUtf8(s), s);
  }
}

TEST(ValidUtf8Test, ReplacesEveryInvalidSequence) {
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(ValidUtf8("a\xC3"), "a" + r);                   // cut after the lead byte
  EXPECT_EQ(ValidUtf8("\xA9x"), r + "x");                   // a lone continuation byte
  EXPECT_EQ(ValidUtf8("\xC0\xAF"), r + r);                  // overlong '/'
  EXPECT_EQ(ValidUtf8("\xE0\x80\xAF"), r + r + r);          // overlong, three bytes
  EXPECT_EQ(ValidUtf8("\xED\xA0\x80"), r + r + r);          // a surrogate
  EXPECT_EQ(ValidUtf8("\xF4\x90\x80\x80"), r + r + r + r);  // past U+10FFFF
  EXPECT_EQ(ValidUtf8("\xFF"), r);
  EXPECT_EQ(ValidUtf8("\xE6\x97"), r + r);  // a three-byte character cut after two
}

TEST(ValidUtf8Test, TheResultAlwaysSerialisesAsJson) {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  bytes += "\xE6\x97";
  EXPECT_NO_THROW((void)nlohmann::json(ValidUtf8(bytes)).dump());
}

TEST(Utf8TailTest, StartsOnACharacterBoundary) {
  const std::string text = "ab\xC3\xA9\xC3\xA9";  // "abéé"
  EXPECT_EQ(Utf8Tail(text, 100), text);
  EXPECT_EQ(Utf8Tail(text, 4), "\xC3\xA9\xC3\xA9");
  EXPECT_EQ(Utf8Tail(text, 3), "\xC3\xA9");  // would start inside the first é
  EXPECT_EQ(Utf8Tail(text, 0), "");
}

}  // namespace
}  // namespace trtwatch::service
