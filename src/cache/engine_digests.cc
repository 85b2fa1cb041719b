#include "cache/engine_digests.h"

namespace trtwatch::cache {

EngineHasher::EngineHasher() {
  sha256_.emplace();
  fast_.emplace();
}

EngineHasher::EngineHasher(const EngineDigests& recorded) : recorded_(recorded) {
  if (!recorded.fast.empty() && recorded.fast_algorithm == FastHash::Algorithm()) {
    fast_.emplace();
  } else {
    sha256_.emplace();  // stored before the fast hash was kept, or by another platform's
  }
}

void EngineHasher::Update(std::string_view bytes) {
  if (sha256_) sha256_->Update(bytes);
  if (fast_) fast_->Update(bytes);
}

EngineDigests EngineHasher::Final() {
  EngineDigests digests;
  if (sha256_) digests.sha256 = HexOf(sha256_->Final());
  if (fast_) {
    digests.fast = fast_->FinalHex();
    digests.fast_algorithm = std::string(FastHash::Algorithm());
  }
  return digests;
}

std::string EngineHasher::Mismatch(uint64_t size, uint64_t recorded_size) {
  if (size != recorded_size) {
    return "its engine has " + std::to_string(size) + " bytes, not the " + std::to_string(recorded_size) + " stored";
  }
  if (!recorded_) return "";
  if (fast_) {
    return fast_->FinalHex() == recorded_->fast ? "" : "its engine's bytes are not the ones stored (" +
                                                          recorded_->fast_algorithm + " differs)";
  }
  return HexOf(sha256_->Final()) == recorded_->sha256 ? "" : "its engine's bytes are not the ones stored (SHA-256 differs)";
}

}  // namespace trtwatch::cache
