// The wire framing of Server-Sent Events (WHATWG HTML, "Server-sent events"): how one
// event of the stream is written for an EventSource. The builds layer frames each
// event once, and every reader over HTTP shares that frame.
//
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace trtwatch {

// "id: SEQ\nevent: TYPE\ndata: JSON\n\n". `data` is one line (the protocol's lines
// never contain a newline); a stray newline would be split into several data lines.
std::string SseFrame(uint64_t seq, std::string_view type, std::string_view data);
// "retry: MS\n\n": how long a client waits before it reconnects.
std::string SseRetry(int milliseconds);
// A comment line; clients ignore it, idle-dropping proxies see traffic.
inline constexpr std::string_view kSseHeartbeat = ": heartbeat\n\n";

}  // namespace trtwatch
