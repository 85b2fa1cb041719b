// Confinement of model paths to the service's --model-root folders.
//
// A client names a model; the service only builds files that really live inside one
// of its roots: no "..", no symlink that leads out, no device or directory.
// Threading: pure functions over the file system; safe from any thread.
#pragma once

#include <string>
#include <vector>

namespace trtwatch::builds {

// Resolves `requested` (absolute, or relative to each root in turn) to a canonical
// path inside one of `roots` (already canonical, see CanonicalRoots). On failure
// returns false and says why, naming the fix, in `*error`.
bool ResolveModelPath(const std::string& requested, const std::vector<std::string>& roots,
                      std::string* resolved, std::string* error);

// Resolves a file the build will write (a timing cache): absolute, or relative to
// `default_dir`. Its folder must exist inside one of `roots` (canonical); the file, if
// it exists, must be a regular file that resolves inside a root too. `*resolved` is
// the canonical folder plus the file name.
bool ResolveWritablePath(const std::string& requested, const std::vector<std::string>& roots,
                         const std::string& default_dir, std::string* resolved, std::string* error);

// Canonicalises the configured roots (they must exist and be directories).
bool CanonicalRoots(const std::vector<std::string>& roots, std::vector<std::string>* canonical,
                    std::string* error);

}  // namespace trtwatch::builds
