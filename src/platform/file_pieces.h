// ReadFilePieces: a whole file read once, in order, piece by piece, each piece handed
// to a function that may hash it and write it elsewhere while it is still in the CPU's
// cache (the engine cache's verified copy: one read of the source for both). Pieces
// are small (256 KiB) so that the second pass over each stays in the CPU's cache.
//
// Threading: pure; the function is called on the caller's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace trtwatch {

struct FilePieces {
  bool ok = false;       // the whole file was read and every piece accepted
  bool stopped = false;  // `piece` returned false (its own error, which it keeps)
  uint64_t size = 0;     // bytes read
  std::string error;     // a read error, naming the path (not `stopped`)
};

// Hands `path`'s bytes to `piece` in order; `piece` returns false to stop.
[[nodiscard]] FilePieces ReadFilePieces(const std::string& path, const std::function<bool(std::string_view)>& piece);

}  // namespace trtwatch
