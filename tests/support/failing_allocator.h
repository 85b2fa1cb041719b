// Makes operator new fail (std::bad_alloc) on the calling thread while a scope is
// alive. Linked only into the core test binary, which replaces the global operator new.
#pragma once

namespace trtwatch::testing {

class FailAllocationsOnThisThread {
 public:
  FailAllocationsOnThisThread();
  ~FailAllocationsOnThisThread();
  FailAllocationsOnThisThread(const FailAllocationsOnThisThread&) = delete;
  FailAllocationsOnThisThread& operator=(const FailAllocationsOnThisThread&) = delete;

  // Allocations refused so far in this scope.
  static int refused();
};

}  // namespace trtwatch::testing
