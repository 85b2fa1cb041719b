// BuildKey: everything an engine depends on, as named parts, and the SHA-256 of their
// canonical document (docs/cache.md). Two builds with one key make interchangeable
// engines: the engine cache reuses on it, and build history groups by it.
//
// A backend describes what its build depends on as a KeyRecipe (named values, and the
// files whose bytes count: the model, its external data, plugin libraries); this file
// reads the files and makes the key. The recipes: keys/tensorrt_key.h,
// keys/simulated_key.h.
//
// The canonical document: the line "trtwatch build key v1", then one line per part,
// sorted by name, "NAME=VALUE" with '\\', '=' and newline escaped in both, so that no
// two part lists share a document.
//
// Threading: pure functions of their arguments and the files they read.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace trtwatch::keys {

// One thing the engine depends on, e.g. model.sha256, option.fp16, tensorrt.runtime,
// gpu.name, gpu.compute_capability, backend, simulate.profile.sha256.
struct KeyPart {
  std::string name;
  std::string value;
};

struct BuildKey {
  std::string digest;          // lowercase hex SHA-256 of the canonical key document
  std::vector<KeyPart> parts;  // the canonical document, in order (what `trtwatch cache key` prints)
};

// A file whose bytes the key covers: it becomes the part `name` with the file's
// SHA-256 (lowercase hex) as value.
struct KeyFile {
  std::string name;
  std::string path;
};

// What a build depends on, before any file is read.
struct KeyRecipe {
  std::vector<KeyPart> parts;
  std::vector<KeyFile> files;
};

// A recipe, or why none can be made (the error names the problem and the fix).
struct RecipeOutcome {
  std::optional<KeyRecipe> recipe;
  std::string error;
};

// The key, or why it cannot be computed: a file that cannot be read, two parts of one
// name.
struct KeyOutcome {
  std::optional<BuildKey> key;
  std::string error;
};

// Bump when the meaning of a part changes: every earlier key then misses.
inline constexpr const char* kKeyFormat = "trtwatch build key v1";

// Reads and hashes the recipe's files, sorts the parts and digests the document.
KeyOutcome ComputeBuildKey(const KeyRecipe& recipe);

// The canonical document of parts already sorted by name (what the digest covers).
std::string CanonicalDocument(const std::vector<KeyPart>& parts);

// The value of the part `name`, or nullptr.
const std::string* FindPart(const BuildKey& key, const std::string& name);

}  // namespace trtwatch::keys
