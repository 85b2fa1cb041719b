#include "builds/artifacts/sha256.h"

#include <openssl/evp.h>

#include <stdexcept>

namespace trtwatch::builds {

struct Sha256::Context {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~Context() { EVP_MD_CTX_free(ctx); }
};

namespace {

void Init(EVP_MD_CTX* ctx) {
  // Fails only when out of memory or when the provider lacks SHA-256: neither can be served around.
  if (ctx == nullptr || EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("OpenSSL cannot start a SHA-256 digest");
  }
}

}  // namespace

Sha256::Sha256() : context_(std::make_unique<Context>()) { Init(context_->ctx); }

Sha256::~Sha256() = default;

void Sha256::Update(std::string_view bytes) {
  if (!bytes.empty()) EVP_DigestUpdate(context_->ctx, bytes.data(), bytes.size());
}

Sha256Digest Sha256::Final() {
  Sha256Digest digest{};
  unsigned int size = 0;
  EVP_DigestFinal_ex(context_->ctx, digest.data(), &size);
  Init(context_->ctx);
  return digest;
}

Sha256Digest Sha256Of(std::string_view bytes) {
  Sha256 sha;
  sha.Update(bytes);
  return sha.Final();
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

}  // namespace trtwatch::builds
