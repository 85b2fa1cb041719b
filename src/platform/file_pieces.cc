#include "platform/file_pieces.h"

#include <algorithm>
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

FileFollower::FileFollower(const std::string& path)
    : path_(path), file_(std::fopen(path.c_str(), "rb")), buffer_(new char[kPiece]) {
  if (!file_) {
    error_ = "cannot open \"" + path + "\" to read it";
    return;
  }
  std::setvbuf(file_.get(), nullptr, _IONBF, 0);  // our buffer is the only one
}

FileFollower::~FileFollower() = default;

bool FileFollower::ReadTo(uint64_t end, const std::function<void(std::string_view)>& piece) {
  if (!file_) return false;
  while (offset_ < end) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(kPiece, end - offset_));
    const size_t got = std::fread(buffer_.get(), 1, want, file_.get());
    if (got > 0) piece(std::string_view(buffer_.get(), got));
    offset_ += got;
    if (got < want) {
      error_ = std::ferror(file_.get()) ? "reading \"" + path_ + "\" failed"
                                        : "\"" + path_ + "\" ended at " + std::to_string(offset_) +
                                              " bytes, before the " + std::to_string(end) + " written";
      return false;
    }
  }
  return true;
}

}  // namespace trtwatch
