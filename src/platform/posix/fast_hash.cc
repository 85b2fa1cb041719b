#include "platform/fast_hash.h"

#include <xxhash.h>

#include <stdexcept>

namespace trtwatch {

struct FastHash::Context {
  XXH3_state_t* state = XXH3_createState();
  ~Context() { XXH3_freeState(state); }
};

namespace {

void Reset(XXH3_state_t* state) {
  // Fails only when out of memory: nothing can be served around that.
  if (state == nullptr || XXH3_128bits_reset(state) != XXH_OK) throw std::runtime_error("libxxhash cannot start a digest");
}

}  // namespace

FastHash::FastHash() : context_(std::make_unique<Context>()) { Reset(context_->state); }

FastHash::~FastHash() = default;

void FastHash::Update(std::string_view bytes) {
  if (!bytes.empty()) XXH3_128bits_update(context_->state, bytes.data(), bytes.size());
}

std::string FastHash::FinalHex() {
  XXH128_canonical_t canonical;  // big-endian bytes: the digest xxhsum -H2 prints
  XXH128_canonicalFromHash(&canonical, XXH3_128bits_digest(context_->state));
  Reset(context_->state);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(sizeof canonical.digest * 2);
  for (const unsigned char b : canonical.digest) {
    hex += kHex[b >> 4];
    hex += kHex[b & 15];
  }
  return hex;
}

std::string_view FastHash::Algorithm() { return "xxh3-128"; }

}  // namespace trtwatch
