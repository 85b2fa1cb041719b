#include "keys/build_key.h"

#include <algorithm>

#include "platform/sha256.h"

namespace trtwatch::keys {

namespace {

// '\\', '=' and newline escaped: a name or value can never fake a separator.
void AppendEscaped(std::string& out, const std::string& text) {
  for (char c : text) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '=':
        out += "\\=";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
}

}  // namespace

std::string CanonicalDocument(const std::vector<KeyPart>& parts) {
  std::string document = kKeyFormat;
  document += '\n';
  for (const KeyPart& part : parts) {
    AppendEscaped(document, part.name);
    document += '=';
    AppendEscaped(document, part.value);
    document += '\n';
  }
  return document;
}

KeyOutcome ComputeBuildKey(const KeyRecipe& recipe) {
  KeyOutcome outcome;
  BuildKey key;
  key.parts = recipe.parts;
  for (const KeyFile& file : recipe.files) {
    const FileSha256 hashed = Sha256OfFile(file.path);
    if (!hashed.digest) {
      outcome.error = "the build key needs the bytes of " + file.name + ": " + hashed.error;
      return outcome;
    }
    key.parts.push_back({file.name, HexOf(*hashed.digest)});
  }
  std::stable_sort(key.parts.begin(), key.parts.end(),
                   [](const KeyPart& a, const KeyPart& b) { return a.name < b.name; });
  const auto repeated = std::adjacent_find(key.parts.begin(), key.parts.end(),
                                           [](const KeyPart& a, const KeyPart& b) { return a.name == b.name; });
  if (repeated != key.parts.end()) {
    outcome.error = "the build key has two parts named \"" + repeated->name + "\"";
    return outcome;
  }
  key.digest = HexOf(Sha256Of(CanonicalDocument(key.parts)));
  outcome.key = std::move(key);
  return outcome;
}

const std::string* FindPart(const BuildKey& key, const std::string& name) {
  for (const KeyPart& part : key.parts) {
    if (part.name == name) return &part.value;
  }
  return nullptr;
}

}  // namespace trtwatch::keys
