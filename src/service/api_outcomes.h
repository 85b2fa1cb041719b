// The builds layer's outcomes in HTTP terms: a status, and for the ones worth
// retrying, a Retry-After. The resources' routes answer the manager's results with
// ManagerAnswer.
//
// Threading: pure functions.
#pragma once

#include <string>
#include <utility>

#include "builds/build_groups.h"
#include "builds/build_manager.h"
#include "service/api_answer.h"

namespace trtwatch::service {

struct HttpOutcome {
  int status = 500;
  int retry_after = 0;  // seconds; 0: none
};

[[nodiscard]] HttpOutcome ToHttp(builds::SubmitOutcome outcome);
[[nodiscard]] HttpOutcome ToHttp(builds::GetOutcome outcome);
[[nodiscard]] HttpOutcome ToHttp(builds::CancelOutcome outcome);
[[nodiscard]] HttpOutcome ToHttp(builds::GroupOutcome outcome);

// The record on success, {"error": ...} otherwise.
template <typename Outcome>
[[nodiscard]] ApiAnswer ManagerAnswer(builds::ManagerResult<Outcome> r) {
  const HttpOutcome h = ToHttp(r.outcome);
  if (h.status >= 200 && h.status < 300) return JsonAnswer(h.status, std::move(r.record));
  ApiAnswer answer = ErrorAnswer(h.status, r.error);
  if (h.retry_after > 0) answer.Set("Retry-After", std::to_string(h.retry_after));
  return answer;
}

}  // namespace trtwatch::service
