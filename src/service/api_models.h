// Models and engines: uploaded models (GET /models, GET and DELETE /models/{name};
// PUT /models/{name}[/{file}] streams its body to the artifact store through
// http_transfer.h) and built engines and timing caches (GET /builds/{id}/engine,
// /timing-cache, /groups/{gid}/engines/{name}: planned here, the file sent by the
// kernel through http_transfer.h).
//
// Threading: the service's event-loop thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "service/api_answer.h"
#include "service/api_context.h"

namespace trtwatch::service {

struct ExpectedDigest;
}  // namespace trtwatch::service

namespace trtwatch::builds {
struct ArtifactResult;
struct StoredFile;
}  // namespace trtwatch::builds

namespace trtwatch::service {

// GET /models, GET and DELETE /models/{name}; 405 for other methods (PUT is an upload).
// A removal is recorded in the audit trail (model.delete).
[[nodiscard]] ApiAnswer ModelsAnswer(ApiContext& api, const ApiRequest& req);

// A model route whose names break the rule, or an upload whose digest header is
// malformed: refused before any of the body is read. `digest` is the upload's
// (ExpectedSha256 of its headers, service/http_request.h), nullptr for another method.
[[nodiscard]] std::optional<ApiAnswer> RefusedModelRequest(const Route& route, const ExpectedDigest* digest);

// 403 when `caller` may not replace or delete model `model` (a builder acts on the
// models they uploaded first; access_check.h's OwnershipRefusal); nullopt when they may,
// or when there is no such model yet (its first upload makes it the caller's).
[[nodiscard]] std::optional<ApiAnswer> ModelNotTheirs(ApiContext& api, const std::string& model,
                                                      std::string_view caller);

// Where PUT /models/{name}[/{file}] goes: the model and the file's name.
struct UploadTarget {
  std::string model;
  std::string file;
};
[[nodiscard]] UploadTarget UploadTargetOf(const Route& route);

// 201 for a stored upload: the model's description, and its Location. The upload is
// recorded in the audit trail as `caller`'s (model.upload: the file, its size and sha256).
[[nodiscard]] ApiAnswer UploadedAnswer(ApiContext& api, const UploadTarget& target, const builds::StoredFile& stored,
                                       std::string_view caller);

// The headers a download's answer depends on (empty when absent).
struct DownloadHeaders {
  std::string_view if_none_match;
  std::string_view range;
  std::string_view if_range;
  std::string_view want_repr_digest;  // RFC 9530 §4 (service/repr_digest.h)
};

// How a download is answered: an error or a 416 (`answer`, sent whole), a 304 (its
// head only), or a file (`answer` holds the head: status and fields, no length yet)
// with the bytes from `first`, `length` of them.
struct DownloadPlan {
  enum class Kind { kAnswer, kNotModified, kFile };
  Kind kind = Kind::kAnswer;
  ApiAnswer answer;
  std::string path;
  std::string file_name;
  uint64_t first = 0;
  uint64_t length = 0;
};
// A file found (`found.outcome` kFound) or not (404; 409 while its build runs), as a
// download named `file_name`, with the conditional and range headers applied.
[[nodiscard]] DownloadPlan PlanFileDownload(const builds::ArtifactResult& found, const std::string& file_name,
                                            const DownloadHeaders& headers);

// GET /builds/{id}/engine, /builds/{id}/timing-cache and /groups/{gid}/engines/{name}:
// the artifact looked up and the conditional and range headers applied (RFC 9110
// §8.8.3 strong ETag, §13.1.2 If-None-Match, §14 one byte range).
[[nodiscard]] DownloadPlan PlanDownload(ApiContext& api, const Route& route, const DownloadHeaders& headers);

}  // namespace trtwatch::service
