#include "service/model_paths.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <memory>

namespace trtwatch::service {

namespace {

bool RealPath(const std::string& path, std::string* out) {
  std::unique_ptr<char, decltype(&free)> p(realpath(path.c_str(), nullptr), &free);
  if (!p) return false;
  *out = p.get();
  return true;
}

bool Inside(const std::string& path, const std::string& root) {
  if (root == "/") return true;
  return path.size() > root.size() && path.compare(0, root.size(), root) == 0 && path[root.size()] == '/';
}

bool HasDotDot(const std::string& path) {
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (path.compare(start, end - start, "..") == 0) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

bool CanonicalRoots(const std::vector<std::string>& roots, std::vector<std::string>* canonical,
                    std::string* error) {
  canonical->clear();
  for (const std::string& root : roots) {
    std::string real;
    struct stat st {};
    if (!RealPath(root, &real) || stat(real.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      *error = "--model-root \"" + root + "\" is not an existing folder; create it or fix the path";
      return false;
    }
    canonical->push_back(real);
  }
  return true;
}

bool ResolveModelPath(const std::string& requested, const std::vector<std::string>& roots,
                      std::string* resolved, std::string* error) {
  if (roots.empty()) {
    *error = "this service has no --model-root, so it builds no models; restart it with --model-root DIR "
             "or submit a simulated build ({\"simulate\": \"small-cnn\"})";
    return false;
  }
  if (requested.empty() || requested.find('\0') != std::string::npos || requested.size() > PATH_MAX) {
    *error = "\"model\" must be a non-empty path to an .onnx file inside a model root";
    return false;
  }
  if (HasDotDot(requested)) {
    *error = "\"model\" may not contain \"..\"; give the path inside a model root";
    return false;
  }
  std::vector<std::string> candidates;
  if (requested.front() == '/') {
    candidates.push_back(requested);
  } else {
    for (const std::string& root : roots) candidates.push_back(root + "/" + requested);
  }
  bool found_outside = false;
  for (const std::string& candidate : candidates) {
    std::string real;
    if (!RealPath(candidate, &real)) continue;
    bool inside = false;
    for (const std::string& root : roots) inside = inside || Inside(real, root);
    if (!inside) {
      found_outside = true;
      continue;
    }
    struct stat st {};
    if (stat(real.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      *error = "\"model\" \"" + requested + "\" is not a regular file";
      return false;
    }
    *resolved = real;
    return true;
  }
  if (found_outside) {
    *error = "\"model\" \"" + requested + "\" resolves outside every model root (symlinks included); "
             "put the model inside a --model-root folder";
  } else {
    *error = "\"model\" \"" + requested + "\" was not found inside any model root; give a path relative to a "
             "--model-root folder";
  }
  return false;
}

}  // namespace trtwatch::service
