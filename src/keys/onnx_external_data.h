// The external-data files of an ONNX model: the `location` of every tensor whose
// `data_location` is EXTERNAL (initializers, sparse initializers, and tensors in node
// attributes, subgraphs and functions), as ONNX resolves them: relative to the
// model's folder. A model over 2 GB keeps its weights there, so a key without them
// would reuse an engine built from other weights.
//
// The model is read as protobuf wire format, skipping (not reading) tensor bytes, so
// a 2 GB model costs a few reads. Everything in it is untrusted: a location must be a
// relative path inside the model's folder (no "..", not absolute, no control
// characters, at most 4096 bytes), nesting is bounded, and a damaged file is an error
// naming the model, never a crash.
//
// Threading: a pure function of the file.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace trtwatch::keys {

struct ExternalDataOutcome {
  std::optional<std::vector<std::string>> locations;  // sorted, each once; absent on error
  std::string error;
};

ExternalDataOutcome FindExternalData(const std::string& model_path);

// Whether `location` is one ONNX may read: relative, inside the model's folder.
// Empty when it is, else why not.
std::string CheckLocation(const std::string& location);

}  // namespace trtwatch::keys
