// CancelAsk: what a cancel asks for — the reason and message the record keeps, and the
// grace before a forced stop — and its form in the store, where a replica leaves it
// for the replica that runs the build (builds/stores/build_queue.h, RequestCancel).
// What comes back from the store is untrusted: reasons are checked, messages made
// valid UTF-8 and bounded, the grace held to the rule every grace follows.
//
// Threading: pure functions.
#pragma once

#include <optional>
#include <string>

namespace trtwatch::builds {

struct CancelAsk {
  std::optional<double> grace;  // none: the service's --cancel-grace
  std::string reason;           // "api" | "budget" | "group"; empty: the manager's own ("api"; "signal" when
                                // stopping)
  std::string message;          // what the record and the stream say; empty with an empty reason
  std::string by;               // the user who asked (the record's cancelled_by); empty: the service itself
};

std::string CancelAskToJson(const CancelAsk& ask);
// The ask a replica stored, checked; none when it is not one.
std::optional<CancelAsk> CancelAskFromJson(const std::string& text);

}  // namespace trtwatch::builds
