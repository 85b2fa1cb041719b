// The audit trail's route: GET /audit (docs/api.md, "Audit trail") — who did what to
// which build or model, when, newest first, in pages, filtered by user, action or a
// target's prefix. The entries are written by the routes that act (builds/audit_log.h).
//
// Threading: the service's event-loop thread.
#pragma once

#include <string_view>

#include "builds/audit_entry.h"
#include "core/result.h"
#include "service/api_answer.h"
#include "service/api_context.h"

namespace trtwatch::service {

// The query of GET /audit: limit (1..1000, default 100), before (a next_before), user,
// action (one of builds::kAuditActions), target (a prefix). An error names the parameter
// and the values it takes.
[[nodiscard]] Result<builds::AuditQuery> ParseAuditQuery(std::string_view target);

// GET /audit: 200 with {"entries": [...], "next_before": N or null}; 400 for a bad query.
[[nodiscard]] ApiAnswer AuditAnswer(ApiContext& api, const ApiRequest& req);

}  // namespace trtwatch::service
