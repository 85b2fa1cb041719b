// Untrusted bytes to valid UTF-8: every string from a worker, a client or a model
// passes through here before it reaches JSON or SQLite (both refuse or throw on
// invalid UTF-8, and one cut character once aborted the whole service).
//
// Threading: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace trtwatch {

// `bytes` with every invalid or truncated UTF-8 sequence (overlong forms, surrogates,
// code points past U+10FFFF included) replaced by U+FFFD. Valid input comes back as is.
std::string ValidUtf8(std::string_view bytes);
// Whether `bytes` is valid UTF-8 already (ValidUtf8 would return it unchanged), without a copy.
bool IsValidUtf8(std::string_view bytes);

// The last `max_bytes` (at most) of `text`, starting on a character boundary, so a
// tail of a long message never begins inside a character.
std::string_view Utf8Tail(std::string_view text, size_t max_bytes);

// What ends a text that BoundedText cut ("… [cut]", 9 bytes: U+2026, a space, "[cut]").
inline constexpr std::string_view kCutMark = "\xE2\x80\xA6 [cut]";

// Bounds a text from a client or a worker before it reaches a record or an event:
// `text` (valid UTF-8) as is when it has at most `max_bytes` bytes; else its longest
// prefix that ends on a character boundary, followed by kCutMark, `max_bytes` in all.
// `max_bytes` must be larger than kCutMark.
std::string BoundedText(std::string_view text, size_t max_bytes);

// Bytes as they may come (a client's, a worker's) to valid, bounded UTF-8.
inline std::string ValidBoundedText(std::string_view bytes, size_t max_bytes) {
  return BoundedText(ValidUtf8(bytes.substr(0, max_bytes + 4)), max_bytes);  // +4: the last character may be whole
}

}  // namespace trtwatch
