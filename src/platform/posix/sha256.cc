#include "platform/sha256.h"

#include <openssl/evp.h>

#include <stdexcept>

namespace trtwatch {

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

}  // namespace trtwatch
