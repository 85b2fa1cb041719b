// Untrusted bytes to valid UTF-8 (protocol/utf8.h).
#include "protocol/utf8.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace trtwatch {
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
}  // namespace trtwatch

namespace trtwatch {
namespace {

// Issue 22: a 3 MiB cancel reason became a 6 MB record. Client and worker texts are
// bounded, cut on a character boundary and marked as cut.
TEST(BoundedTextTest, ShortTextIsKeptAsIs) {
  EXPECT_EQ(BoundedText("", 32), "");
  EXPECT_EQ(BoundedText("exactly 16 bytes", 16), "exactly 16 bytes");
}

TEST(BoundedTextTest, LongTextIsCutToTheBoundAndMarked) {
  const std::string cut = BoundedText(std::string(3 << 20, 'x'), 4096);
  EXPECT_EQ(cut.size(), 4096u);
  EXPECT_EQ(cut.substr(cut.size() - kCutMark.size()), kCutMark);
  EXPECT_EQ(cut.substr(0, 4096 - kCutMark.size()), std::string(4096 - kCutMark.size(), 'x'));
}

TEST(BoundedTextTest, NeverSplitsAMultiByteCharacter) {
  // Every cut position through 2-, 3- and 4-byte characters: the result is valid UTF-8
  // (ValidUtf8 keeps it as is), within the bound, and ends with the mark.
  for (const std::string ch : {"\xC3\xA9", "\xE6\x97\xA5", "\xF0\x9F\x98\x80"}) {
    std::string text;
    while (text.size() < 200) text += ch;
    for (size_t max = kCutMark.size() + 1; max < 60; ++max) {
      const std::string cut = BoundedText(text, max);
      EXPECT_LE(cut.size(), max);
      EXPECT_EQ(ValidUtf8(cut), cut) << "max " << max;
      EXPECT_EQ(cut.substr(cut.size() - kCutMark.size()), kCutMark);
      EXPECT_EQ((cut.size() - kCutMark.size()) % ch.size(), 0u) << "whole characters only, max " << max;
    }
  }
}

TEST(BoundedTextTest, ValidBoundedTextMendsAndBoundsRawBytes) {
  std::string raw(3 << 20, 'y');
  raw[100] = '\xFF';
  const std::string out = ValidBoundedText(raw, 1024);
  EXPECT_EQ(out.size(), 1024u);
  EXPECT_EQ(ValidUtf8(out), out);
  EXPECT_EQ(out.substr(100, 3), "\xEF\xBF\xBD");
  EXPECT_EQ(ValidBoundedText("ok \xFF", 1024), "ok \xEF\xBF\xBD");
}

}  // namespace
}  // namespace trtwatch
