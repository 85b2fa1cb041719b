// Untrusted bytes to valid UTF-8: every string from a worker, a client or a model
// passes through here before it reaches JSON or SQLite (both refuse or throw on
// invalid UTF-8, and one cut character once aborted the whole service).
//
// Threading: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace trtwatch::service {

// `bytes` with every invalid or truncated UTF-8 sequence (overlong forms, surrogates,
// code points past U+10FFFF included) replaced by U+FFFD. Valid input comes back as is.
std::string ValidUtf8(std::string_view bytes);

// The last `max_bytes` (at most) of `text`, starting on a character boundary, so a
// tail of a long message never begins inside a character.
std::string_view Utf8Tail(std::string_view text, size_t max_bytes);

}  // namespace trtwatch::service
