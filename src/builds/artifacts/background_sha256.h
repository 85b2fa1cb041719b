// BackgroundSha256: the SHA-256 of bytes given in pieces, computed on a thread of its
// own, so that the thread receiving the bytes (the service's event loop, during an
// upload) only copies them: hashing is a fifth of an upload's work, receiving and
// writing the rest, and they now run on two cores at once.
//
// Memory stays bounded: when kMaxPendingBytes wait to be hashed, Update waits for the
// hashing thread (which hashes ~1 GB/s, faster than a network delivers).
//
// Threading: Update and Final belong to one thread (the owner's); the hashing thread
// is private. Destroying the object without Final stops the thread.
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <string_view>
#include <thread>

#include "platform/sha256.h"
#include "core/mutex.h"

namespace trtwatch::builds {

class BackgroundSha256 {
 public:
  static constexpr size_t kMaxPendingBytes = size_t{4} << 20;

  BackgroundSha256();
  ~BackgroundSha256();
  BackgroundSha256(const BackgroundSha256&) = delete;
  BackgroundSha256& operator=(const BackgroundSha256&) = delete;

  void Update(std::string_view bytes);
  // The digest of everything given, once the hashing thread has caught up. Once only.
  Sha256Digest Final();

 private:
  void Run();
  void Stop();

  Mutex mu_;
  CondVar changed_;  // a piece was queued or taken, or closing_ was set
  std::deque<std::string> pending_ GUARDED_BY(mu_);
  size_t pending_bytes_ GUARDED_BY(mu_) = 0;
  bool closing_ GUARDED_BY(mu_) = false;
  // The hashing thread's alone until Stop joins it; then the owner's.
  Sha256 sha_;
  std::thread thread_;
};

}  // namespace trtwatch::builds
