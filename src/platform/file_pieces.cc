#include "platform/file_pieces.h"

#include <cstdio>
#include <memory>
#include <vector>

namespace trtwatch {

namespace {

// Fits a core's L2 cache: the piece is hashed and then copied from there, not from RAM.
constexpr size_t kPiece = size_t{256} << 10;

struct ClosesFile {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

}  // namespace

FilePieces ReadFilePieces(const std::string& path, const std::function<bool(std::string_view)>& piece) {
  FilePieces result;
  std::unique_ptr<std::FILE, ClosesFile> file(std::fopen(path.c_str(), "rb"));
  if (!file) {
    result.error = "cannot open \"" + path + "\" to read it";
    return result;
  }
  std::setvbuf(file.get(), nullptr, _IONBF, 0);  // our buffer is the only one
  std::vector<char> buffer(kPiece);
  for (;;) {
    const size_t got = std::fread(buffer.data(), 1, buffer.size(), file.get());
    if (got > 0 && !piece(std::string_view(buffer.data(), got))) {
      result.stopped = true;
      return result;
    }
    result.size += got;
    if (got < buffer.size()) break;
  }
  if (std::ferror(file.get())) {
    result.error = "reading \"" + path + "\" failed";
    return result;
  }
  result.ok = true;
  return result;
}

}  // namespace trtwatch
