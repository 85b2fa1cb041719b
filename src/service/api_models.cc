#include "service/api_models.h"

#include <nlohmann/json.hpp>

#include "builds/artifacts/artifact_store.h"
#include "builds/artifacts/model_names.h"
#include "builds/audit_log.h"
#include "builds/build_group.h"
#include "builds/build_groups.h"
#include "builds/build_manager.h"
#include "service/access_check.h"
#include "service/http_request.h"
#include "service/repr_digest.h"

namespace trtwatch::service {

using nlohmann::json;

namespace {

// {name, complete, url, uploaded_by, files: [{name, size, sha256}]}
json ModelJson(const builds::ModelInfo& info) {
  json files = json::array();
  for (const builds::StoredFile& f : info.files) files.push_back({{"name", f.name}, {"size", f.size}, {"sha256", f.sha256}});
  return {{"name", info.name},
          {"complete", info.complete},
          {"url", "/models/" + info.name},
          {"uploaded_by", info.owner.empty() ? json(nullptr) : json(info.owner)},
          {"files", files}};
}

ApiAnswer ModelResponse(ApiContext& api, int status, const std::string& name) {
  std::string error;
  std::optional<builds::ModelInfo> info = api.artifacts.Describe(name, &error);
  if (!info) return ErrorAnswer(404, "no uploaded model \"" + name + "\"; list them with GET /models");
  return JsonAnswer(status, ModelJson(*info).dump());
}

ApiAnswer ListModels(ApiContext& api) {
  std::string error;
  json models = json::array();
  for (const builds::ModelInfo& info : api.artifacts.List(&error)) models.push_back(ModelJson(info));
  if (!error.empty()) return ErrorAnswer(500, error);
  return JsonAnswer(200, json{{"models", models}}.dump());
}

ApiAnswer RemoveModel(ApiContext& api, const std::string& name, std::string_view caller) {
  if (std::optional<ApiAnswer> refused = ModelNotTheirs(api, name, caller)) return std::move(*refused);
  std::string error;
  switch (api.artifacts.Remove(name, &error)) {
    case builds::ArtifactStore::RemoveOutcome::kRemoved:
      (void)api.audit.Record(caller, builds::audit_action::kModelDelete, name);
      return ApiAnswer{204, {}, {}};
    case builds::ArtifactStore::RemoveOutcome::kNotFound:
      return ErrorAnswer(404, "no uploaded model \"" + name + "\"; list them with GET /models");
    case builds::ArtifactStore::RemoveOutcome::kFailed:
      break;
  }
  return ErrorAnswer(500, error);
}

// A 416 for a range outside the file (RFC 9110 §15.5.17).
ApiAnswer RangeNotSatisfiable(std::string_view range, uint64_t size) {
  ApiAnswer refused = ErrorAnswer(416, "the range \"" + std::string(range) + "\" lies outside the " +
                                           std::to_string(size) + " bytes; ask for bytes=0-" +
                                           std::to_string(size == 0 ? 0 : size - 1) + " or less");
  refused.Set("Content-Range", UnsatisfiedContentRange(size));
  refused.Set("Accept-Ranges", "bytes");
  return refused;
}

}  // namespace

DownloadPlan PlanFileDownload(const builds::ArtifactResult& a, const std::string& file_name, const DownloadHeaders& h) {
  DownloadPlan plan;
  if (a.outcome != builds::ArtifactOutcome::kFound) {
    plan.answer = ErrorAnswer(a.outcome == builds::ArtifactOutcome::kNotYet ? 409 : 404, a.error);
    return plan;
  }
  const std::string etag = "\"" + a.file.sha256 + "\"";
  const uint64_t size = a.file.size;
  ApiAnswer& head = plan.answer;
  head.Set("ETag", etag);
  head.Set("Accept-Ranges", "bytes");
  head.Set("Cache-Control", "no-cache");  // revalidated: a 304 costs no bytes
  // The whole file's digest, also on a 206 and a 304 (RFC 9530 §3: of the representation).
  if (WantsSha256ReprDigest(h.want_repr_digest)) head.Set("Repr-Digest", ReprDigestOfHex(a.file.sha256));
  if (!h.if_none_match.empty() && IfNoneMatchMatches(h.if_none_match, etag)) {  // RFC 9110 §13.1.2: GET and HEAD
    head.status = 304;
    plan.kind = DownloadPlan::Kind::kNotModified;
    return plan;
  }
  RangeRequest range;
  if (!h.range.empty() && (h.if_range.empty() || IfRangeMatches(h.if_range, etag))) range = ParseRange(h.range, size);
  if (range.kind == RangeRequest::Kind::kUnsatisfiable) {
    plan.answer = RangeNotSatisfiable(h.range, size);
    return plan;
  }
  const bool partial = range.kind == RangeRequest::Kind::kPartial;
  const ByteRange span = partial ? range.range : ByteRange{0, size == 0 ? 0 : size - 1};
  if (partial) {
    head.status = 206;
    head.Set("Content-Range", ContentRange(span, size));
  }
  head.Set("Content-Type", "application/octet-stream");
  head.Set("Content-Disposition", "attachment; filename=\"" + file_name + "\"");
  plan.kind = DownloadPlan::Kind::kFile;
  plan.path = a.path;
  plan.file_name = file_name;
  plan.first = span.first;
  plan.length = partial ? span.length() : size;
  return plan;
}

namespace {

DownloadPlan NotFound(std::string message) {
  DownloadPlan plan;
  plan.answer = ErrorAnswer(404, message);
  return plan;
}

}  // namespace

ApiAnswer ModelsAnswer(ApiContext& api, const ApiRequest& req) {
  if (req.route.endpoint == Endpoint::kModels) {
    if (req.method != Method::kGet) return MethodNotAllowed("GET");
    return ListModels(api);
  }
  if (req.route.endpoint == Endpoint::kModelFile) return MethodNotAllowed("GET, HEAD, PUT");
  const std::string name(req.route.id);
  if (req.method == Method::kGet) return ModelResponse(api, 200, name);
  if (req.method != Method::kDelete) return MethodNotAllowed("GET, PUT, DELETE");
  return RemoveModel(api, name, req.caller);
}

std::optional<ApiAnswer> RefusedModelRequest(const Route& route, const ExpectedDigest* digest) {
  if (route.endpoint != Endpoint::kModel && route.endpoint != Endpoint::kModelFile) return std::nullopt;
  std::string why = builds::ArtifactNameError(route.id, "model name");
  if (why.empty() && route.endpoint == Endpoint::kModelFile) why = builds::ArtifactNameError(route.file, "file name");
  if (!why.empty()) return ErrorAnswer(400, why);
  if (digest && !digest->error.empty()) return ErrorAnswer(400, digest->error);
  return std::nullopt;
}

std::optional<ApiAnswer> ModelNotTheirs(ApiContext& api, const std::string& model, std::string_view caller) {
  if (caller.empty()) return std::nullopt;
  const std::optional<std::string> owner = api.artifacts.Owner(model);
  if (!owner) return std::nullopt;
  return OwnershipRefusal(caller, *owner, CurrentUsers(api), "model " + model, Owned::kUploaded);
}

UploadTarget UploadTargetOf(const Route& route) {
  return {std::string(route.id),
          route.endpoint == Endpoint::kModel ? std::string(builds::kModelFileName) : std::string(route.file)};
}

ApiAnswer UploadedAnswer(ApiContext& api, const UploadTarget& target, const builds::StoredFile& stored,
                         std::string_view caller) {
  (void)api.audit.Record(caller, builds::audit_action::kModelUpload, target.model,
                         json{{"file", target.file}, {"size", stored.size}, {"sha256", stored.sha256}}.dump());
  ApiAnswer answer = ModelResponse(api, 201, target.model);
  answer.Set("Location", "/models/" + target.model);
  return answer;
}

DownloadPlan PlanDownload(ApiContext& api, const Route& route, const DownloadHeaders& headers) {
  if (route.endpoint == Endpoint::kModelFile) {
    const std::string model(route.id);
    const std::string file(route.file);
    const builds::ArtifactStore::FileLookup found = api.artifacts.FindFile(model, file);
    if (!found.file) return NotFound(found.error);
    return PlanFileDownload({builds::ArtifactOutcome::kFound, found.path, *found.file, ""}, file, headers);
  }
  if (route.endpoint == Endpoint::kGroupEngine) {
    const std::string gid(route.id);
    if (!builds::ValidGroupId(gid)) return NotFound("no group \"" + gid + "\"; group ids look like g_ and 32 hex digits");
    const std::string name(route.file);
    return PlanFileDownload(api.manager.groups().Engine(gid, name), name, headers);
  }
  const std::string id(route.id);
  if (!ValidBuildId(id)) return NotFound("no build \"" + id + "\"; build ids look like b_ and 32 hex digits");
  const bool engine = route.endpoint == Endpoint::kBuildEngine;
  const builds::ArtifactResult a =
      api.manager.Artifact(id, engine ? builds::ArtifactKind::kEngine : builds::ArtifactKind::kTimingCache);
  return PlanFileDownload(a, id + (engine ? ".engine" : ".timing-cache"), headers);
}

}  // namespace trtwatch::service
