#include "builds/model_paths.h"

#include <limits.h>

#include <filesystem>
#include <system_error>

namespace trtwatch::builds {

namespace {

namespace fs = std::filesystem;

// The absolute path with every symlink, "." and ".." resolved; false if `path` (or a
// folder on the way) does not exist or cannot be looked at.
bool RealPath(const std::string& path, std::string* out) {
  std::error_code ec;
  const fs::path real = fs::canonical(path, ec);
  if (ec) return false;
  *out = real.string();
  return true;
}

bool IsFolder(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(fs::status(path, ec));
}

bool IsRegularFile(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(fs::status(path, ec));
}

// Whether something (a symlink too, dangling or not) is at `path`.
bool Exists(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(path, ec);
  return !ec && fs::exists(st);
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
    if (!RealPath(root, &real) || !IsFolder(real)) {
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
    if (!IsRegularFile(real)) {
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

bool ResolveWritablePath(const std::string& requested, const std::vector<std::string>& roots,
                         const std::string& default_dir, std::string* resolved, std::string* error) {
  if (requested.empty() || requested.find('\0') != std::string::npos || requested.size() > PATH_MAX) {
    *error = "give a non-empty file path";
    return false;
  }
  if (HasDotDot(requested)) {
    *error = "the path may not contain \"..\"";
    return false;
  }
  std::string path = requested;
  if (path.front() != '/') {
    if (default_dir.empty()) {
      *error = "give an absolute path inside a model root";
      return false;
    }
    path = default_dir + "/" + path;
  }
  const size_t slash = path.rfind('/');
  const std::string name = path.substr(slash + 1);
  if (name.empty() || name == ".") {
    *error = "\"" + requested + "\" names a folder; give a file path";
    return false;
  }
  std::string folder;
  if (!RealPath(slash == 0 ? "/" : path.substr(0, slash), &folder)) {
    *error = "the folder of \"" + requested + "\" does not exist; use a folder inside a model root or the data dir";
    return false;
  }
  const auto inside_a_root = [&](const std::string& p) {
    for (const std::string& root : roots) {
      if (p == root || Inside(p, root)) return true;
    }
    return false;
  };
  if (!inside_a_root(folder)) {
    *error = "\"" + requested + "\" is outside every model root and the data dir; put it inside one of them";
    return false;
  }
  const std::string candidate = (folder == "/" ? "" : folder) + "/" + name;
  if (Exists(candidate)) {
    std::string real;
    if (!RealPath(candidate, &real) || !inside_a_root(real)) {
      *error = "\"" + requested + "\" resolves outside every model root and the data dir (symlinks included)";
      return false;
    }
    if (!IsRegularFile(real)) {
      *error = "\"" + requested + "\" exists and is not a regular file";
      return false;
    }
  }
  *resolved = candidate;
  return true;
}

}  // namespace trtwatch::builds
