#include "builds/artifacts/background_sha256.h"

#include <utility>

namespace trtwatch::builds {

BackgroundSha256::BackgroundSha256() : thread_([this] { Run(); }) {}

BackgroundSha256::~BackgroundSha256() { Stop(); }

void BackgroundSha256::Update(std::string_view bytes) {
  if (bytes.empty()) return;
  MutexLock lock(&mu_);
  while (pending_bytes_ >= kMaxPendingBytes) changed_.Wait(&mu_);
  pending_.emplace_back(bytes);
  pending_bytes_ += bytes.size();
  changed_.SignalAll();
}

Sha256Digest BackgroundSha256::Final() {
  Stop();  // the thread hashes what is queued before it ends
  return sha_.Final();
}

void BackgroundSha256::Stop() {
  {
    MutexLock lock(&mu_);
    closing_ = true;
    changed_.SignalAll();
  }
  if (thread_.joinable()) thread_.join();
}

void BackgroundSha256::Run() {
  for (;;) {
    std::string piece;
    {
      MutexLock lock(&mu_);
      while (pending_.empty() && !closing_) changed_.Wait(&mu_);
      if (pending_.empty()) return;  // closing, and everything hashed
      piece = std::move(pending_.front());
      pending_.pop_front();
    }
    sha_.Update(piece);
    MutexLock lock(&mu_);
    pending_bytes_ -= piece.size();
    changed_.SignalAll();
  }
}

}  // namespace trtwatch::builds
