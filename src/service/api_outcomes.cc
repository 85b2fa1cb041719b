#include "service/api_outcomes.h"

namespace trtwatch::service {

using builds::CancelOutcome;
using builds::GetOutcome;
using builds::GroupOutcome;
using builds::SubmitOutcome;

HttpOutcome ToHttp(SubmitOutcome outcome) {
  switch (outcome) {
    case SubmitOutcome::kCreated:
      return {201};
    case SubmitOutcome::kInvalid:
      return {400};
    case SubmitOutcome::kQueueFull:
      return {429, 10};
    case SubmitOutcome::kShuttingDown:
    case SubmitOutcome::kStorageFailed:
      return {503, 5};
  }
  return {500};
}

HttpOutcome ToHttp(GetOutcome outcome) { return {outcome == GetOutcome::kFound ? 200 : 404}; }

HttpOutcome ToHttp(CancelOutcome outcome) {
  switch (outcome) {
    case CancelOutcome::kCancelled:
    case CancelOutcome::kCancelling:
      return {202};
    case CancelOutcome::kInvalid:
      return {400};
    case CancelOutcome::kNotFound:
      return {404};
    case CancelOutcome::kAlreadyFinished:
      return {409};
    case CancelOutcome::kUnavailable:
      return {503, 5};
  }
  return {500};
}

HttpOutcome ToHttp(GroupOutcome outcome) {
  switch (outcome) {
    case GroupOutcome::kCreated:
      return {201};
    case GroupOutcome::kFound:
      return {200};
    case GroupOutcome::kCancelling:
      return {202};
    case GroupOutcome::kInvalid:
      return {400};
    case GroupOutcome::kNotFound:
      return {404};
    case GroupOutcome::kNotYet:
      return {409};
    case GroupOutcome::kQueueFull:
      return {429, 10};
    case GroupOutcome::kShuttingDown:
    case GroupOutcome::kStorageFailed:
    case GroupOutcome::kUnavailable:
      return {503, 5};
  }
  return {500};
}

}  // namespace trtwatch::service
