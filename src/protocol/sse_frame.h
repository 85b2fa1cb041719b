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
// A build_finish also carries "retry: kSseRetryAfterEndMs": the build has ended, so an
// EventSource that does not close itself waits a day before it asks again (and then
// gets the ending again) rather than reconnecting every few seconds for ever.
std::string SseFrame(uint64_t seq, std::string_view type, std::string_view data);
inline constexpr int kSseRetryAfterEndMs = 86'400'000;
// "retry: MS\n\n": how long a client waits before it reconnects.
std::string SseRetry(int milliseconds);
// A comment line; clients ignore it, idle-dropping proxies see traffic.
inline constexpr std::string_view kSseHeartbeat = ": heartbeat\n\n";

}  // namespace trtwatch
