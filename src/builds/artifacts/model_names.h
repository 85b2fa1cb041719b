// The names of uploaded models and their files, and what "models:NAME" in a build
// request resolves to: pure rules, apart from the store that keeps the files
// (artifact_store.h), so that request parsing needs no more than them.
//
// Threading: pure functions (ResolveUploadedModel reads the file system).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace trtwatch::builds {

inline constexpr std::string_view kModelFileName = "model.onnx";
inline constexpr size_t kMaxArtifactName = 128;

// Why `name` is not a valid model or file name, naming the rule; empty when it is.
// `what` names it in the message ("model name", "file name").
std::string ArtifactNameError(std::string_view name, std::string_view what);

// "models:NAME" in a build request: the canonical path of NAME's model.onnx under
// `models_dir`. False with the reason (a bad name, no such model, no model.onnx yet).
bool ResolveUploadedModel(std::string_view name, const std::string& models_dir, std::string* resolved,
                          std::string* error);

}  // namespace trtwatch::builds
