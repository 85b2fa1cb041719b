#include "attach/real_library.h"

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "platform/attach_channel.h"
#include "platform/library_location.h"

namespace trtwatch::attach {

namespace {

std::vector<std::string> SplitPath(const char* value) {
  std::vector<std::string> folders;
  if (value == nullptr) return folders;
  std::string text = value;
  for (size_t start = 0; start <= text.size();) {
    const size_t end = std::min(text.find(':', start), text.size());
    if (end > start) folders.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return folders;
}

// The candidates, in the order they are tried.
std::vector<std::string> Candidates(const std::string& file_name) {
  // The program's library path as it is now (it may have added to it), then as the run
  // found it; the attach folder in it is skipped (it holds this library).
  std::vector<std::string> folders = SplitPath(std::getenv("LD_LIBRARY_PATH"));
  for (std::string& folder : SplitPath(std::getenv(kAttachLibraryPathVariable))) folders.push_back(std::move(folder));
  for (std::string& folder : SystemLibraryFolders()) folders.push_back(std::move(folder));
  std::vector<std::string> candidates;
  for (const std::string& folder : folders) candidates.push_back(folder + "/" + file_name);
  if (const char* given = std::getenv("TRTWATCH_NVINFER"); given != nullptr && *given != '\0') {
    candidates.emplace_back(given);
  }
  return candidates;
}

}  // namespace

RealLibrary OpenRealLibrary(const std::string& file_name, const void* own_code) {
  const std::string self = PathOfLoadedCode(own_code);
  for (const std::string& candidate : Candidates(file_name)) {
    std::error_code error;
    if (!std::filesystem::exists(candidate, error) || IsSameFile(candidate, self)) continue;
    std::string open_error;
    std::unique_ptr<SharedLibrary> library = SharedLibrary::Open(candidate, &open_error);
    if (library && library->Symbol(kAttachMarkSymbol) == nullptr) return {std::move(library), {}};
  }
  return {nullptr, "the real " + file_name +
                       " was not found in the program's library path nor the system's folders; "
                       "set TRTWATCH_NVINFER=/path/to/" + file_name};
}

}  // namespace trtwatch::attach
