#include "platform/fast_hash.h"

#include "platform/sha256.h"

namespace trtwatch {

// MinGW has no libxxhash: SHA-256 (BCrypt) does the same check, more slowly.
struct FastHash::Context {
  Sha256 sha;
};

FastHash::FastHash() : context_(std::make_unique<Context>()) {}

FastHash::~FastHash() = default;

void FastHash::Update(std::string_view bytes) { context_->sha.Update(bytes); }

std::string FastHash::FinalHex() { return HexOf(context_->sha.Final()); }

std::string_view FastHash::Algorithm() { return "sha-256"; }

}  // namespace trtwatch
