#include "service/api_groups.h"

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "builds/audit_log.h"
#include "builds/build_group.h"
#include "platform/sha256.h"
#include "service/access_check.h"
#include "service/api_outcomes.h"
#include "service/repr_digest.h"

namespace trtwatch::service {

namespace {

// The manifest with its digest (RFC 9530 §3) and a strong ETag that is the same digest.
ApiAnswer GroupManifestAnswer(ApiContext& api, const std::string& gid, std::string_view want_repr_digest) {
  ApiAnswer answer = ManagerAnswer(api.manager.groups().Manifest(gid));
  if (answer.status != 200) return answer;
  answer.Set("ETag", "\"" + HexOf(Sha256Of(answer.body)) + "\"");
  if (WantsSha256ReprDigest(want_repr_digest)) answer.Set("Repr-Digest", ReprDigestOfBytes(answer.body));
  return answer;
}

// A builder cancels only a group they submitted: every member's submitted_by is theirs.
std::optional<ApiAnswer> GroupNotTheirs(ApiContext& api, const ApiRequest& req, const std::string& gid) {
  if (req.caller.empty()) return std::nullopt;
  for (const std::string& record : api.manager.groups().MemberRecords(gid)) {
    if (auto refused = RecordOwnershipRefusal(req.caller, record, CurrentUsers(api), "group " + gid)) return refused;
  }
  return std::nullopt;
}

}  // namespace

ApiAnswer GroupAnswer(ApiContext& api, const ApiRequest& req) {
  const std::string gid(req.route.id);
  if (!builds::ValidGroupId(gid)) {
    return ErrorAnswer(404, "no group \"" + gid + "\"; group ids look like g_ and 32 hex digits");
  }
  if (req.route.endpoint == Endpoint::kGroupCancel) {
    if (req.method != Method::kPost) return MethodNotAllowed("POST");
    if (std::optional<ApiAnswer> refused = GroupNotTheirs(api, req, gid)) return std::move(*refused);
    builds::GroupResult cancelled = api.manager.groups().Cancel(gid, req.body, std::string(req.caller));
    if (cancelled.outcome == builds::GroupOutcome::kCancelling) {
      (void)api.audit.Record(req.caller, builds::audit_action::kGroupCancel, gid,
                             nlohmann::json{{"reason", "api"}}.dump());
    }
    return ManagerAnswer(std::move(cancelled));
  }
  if (req.method != Method::kGet) return MethodNotAllowed("GET");
  if (req.route.endpoint == Endpoint::kGroupManifest) return GroupManifestAnswer(api, gid, req.want_repr_digest);
  return ManagerAnswer(api.manager.groups().Get(gid));
}

}  // namespace trtwatch::service
