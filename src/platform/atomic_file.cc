// What AtomicFile does the same on every platform, over its per-OS implementation
// (platform/<os>/atomic_file.cc).
#include "platform/atomic_file.h"

namespace trtwatch {

bool WriteFileAtomically(const std::string& target, std::string_view data, std::string* error) {
  std::unique_ptr<AtomicFile> file = AtomicFile::Create(target, error);
  if (!file) return false;
  if (!file->Write(data.data(), data.size(), error)) return false;
  return file->Commit(error);
}

}  // namespace trtwatch
