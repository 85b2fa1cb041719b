// ReadFilePieces: a whole file read once, in order, piece by piece, each piece handed
// to a function that may hash it and write it elsewhere while it is still in the CPU's
// cache (the engine cache's verified copy: one read of the source for both). Pieces
// are small (256 KiB) so that the second pass over each stays in the CPU's cache.
//
// FileFollower reads a file that is still being written (the engine cache's check of
// the bytes it places, read back while the rest is copied) as far as its writer says.
//
// Threading: ReadFilePieces is pure; the function is called on the caller's thread. A
// FileFollower is used by one thread at a time.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
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

// Reads a file in order, piece by piece, up to where the caller says it is written.
class FileFollower {
 public:
  // Opens `path`; error() says why when it cannot.
  explicit FileFollower(const std::string& path);
  ~FileFollower();
  FileFollower(const FileFollower&) = delete;
  FileFollower& operator=(const FileFollower&) = delete;

  // Hands the bytes from where the last call stopped up to `end` to `piece`, in order;
  // false (error() says why) when the file cannot be read or ends before `end`.
  [[nodiscard]] bool ReadTo(uint64_t end, const std::function<void(std::string_view)>& piece);
  uint64_t offset() const { return offset_; }  // the bytes handed out so far
  const std::string& error() const { return error_; }

 private:
  struct ClosesStdFile {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  const std::string path_;
  std::unique_ptr<std::FILE, ClosesStdFile> file_;
  std::unique_ptr<char[]> buffer_;
  uint64_t offset_ = 0;
  std::string error_;
};

}  // namespace trtwatch
