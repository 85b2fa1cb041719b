#include "platform/sha256.h"

#include <cstdio>
#include <vector>

namespace trtwatch {

namespace {

// Large reads: the hash, not the read calls, sets the pace (sha256sum's speed or better).
constexpr size_t kFileChunk = 1 << 20;

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

}  // namespace

Sha256Digest Sha256Of(std::string_view bytes) {
  Sha256 sha;
  sha.Update(bytes);
  return sha.Final();
}

FileSha256 Sha256OfFile(const std::string& path) {
  FileSha256 result;
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) {
    result.error = "cannot open \"" + path + "\" to hash it";
    return result;
  }
  std::setvbuf(file.get(), nullptr, _IONBF, 0);  // our buffer is the only one
  Sha256 sha;
  std::vector<char> chunk(kFileChunk);
  for (;;) {
    const size_t got = std::fread(chunk.data(), 1, chunk.size(), file.get());
    sha.Update(std::string_view(chunk.data(), got));
    result.size += got;
    if (got < chunk.size()) break;
  }
  if (std::ferror(file.get())) {
    result.error = "reading \"" + path + "\" failed while hashing it";
    return result;
  }
  result.digest = sha.Final();
  return result;
}

std::string HexOf(const Sha256Digest& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(64);
  for (uint8_t b : digest) {
    hex += kHex[b >> 4];
    hex += kHex[b & 15];
  }
  return hex;
}

std::optional<Sha256Digest> DigestFromHex(std::string_view hex) {
  if (hex.size() != 64) return std::nullopt;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  Sha256Digest digest{};
  for (size_t i = 0; i < 32; ++i) {
    const int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    digest[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return digest;
}

}  // namespace trtwatch
