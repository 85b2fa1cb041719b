#include "platform/sha256.h"

#include <windows.h>
#include <bcrypt.h>

#include <stdexcept>

namespace trtwatch {

// BCrypt's reusable hash object: Finish resets it for the next digest.
struct Sha256::Context {
  BCRYPT_ALG_HANDLE algorithm = nullptr;
  BCRYPT_HASH_HANDLE hash = nullptr;
  ~Context() {
    if (hash != nullptr) BCryptDestroyHash(hash);
    if (algorithm != nullptr) BCryptCloseAlgorithmProvider(algorithm, 0);
  }
};

Sha256::Sha256() : context_(std::make_unique<Context>()) {
  // Fails only when out of memory or without the system's SHA-256 provider.
  if (BCryptOpenAlgorithmProvider(&context_->algorithm, BCRYPT_SHA256_ALGORITHM, nullptr,
                                  BCRYPT_HASH_REUSABLE_FLAG) < 0 ||
      BCryptCreateHash(context_->algorithm, &context_->hash, nullptr, 0, nullptr, 0, BCRYPT_HASH_REUSABLE_FLAG) < 0) {
    throw std::runtime_error("Windows' BCrypt cannot start a SHA-256 digest");
  }
}

Sha256::~Sha256() = default;

void Sha256::Update(std::string_view bytes) {
  // BCryptHashData takes a ULONG length: large pieces go in parts.
  constexpr size_t kMaxPiece = 1u << 30;
  while (!bytes.empty()) {
    const size_t piece = bytes.size() < kMaxPiece ? bytes.size() : kMaxPiece;
    BCryptHashData(context_->hash, reinterpret_cast<PUCHAR>(const_cast<char*>(bytes.data())),
                   static_cast<ULONG>(piece), 0);
    bytes.remove_prefix(piece);
  }
}

Sha256Digest Sha256::Final() {
  Sha256Digest digest{};
  BCryptFinishHash(context_->hash, digest.data(), static_cast<ULONG>(digest.size()), 0);
  return digest;
}

}  // namespace trtwatch
