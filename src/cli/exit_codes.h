// Exit codes of `trtwatch build` (design brief; README "Exit codes").
#pragma once

namespace trtwatch::exit_code {

inline constexpr int kSucceeded = 0;
inline constexpr int kFailed = 1;
inline constexpr int kUsage = 2;          // bad arguments or input
inline constexpr int kTimedOut = 124;     // --timeout (or --stall-action cancel)
inline constexpr int kKilled = 137;       // --kill-after gave up waiting for the builder
inline constexpr int kInterrupted = 130;  // SIGINT
inline constexpr int kTerminated = 143;   // SIGTERM, SIGHUP

}  // namespace trtwatch::exit_code
