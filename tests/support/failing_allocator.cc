#include "support/failing_allocator.h"

#include <cstdlib>
#include <new>

namespace {
thread_local bool t_fail = false;
thread_local int t_refused = 0;
}  // namespace

namespace trtwatch::testing {
FailAllocationsOnThisThread::FailAllocationsOnThisThread() {
  t_fail = true;
  t_refused = 0;
}
FailAllocationsOnThisThread::~FailAllocationsOnThisThread() { t_fail = false; }
int FailAllocationsOnThisThread::refused() { return t_refused; }
#ifdef TRTWATCH_RUNTIME_OWNS_OPERATOR_NEW
bool FailAllocationsOnThisThread::available() { return false; }
#else
bool FailAllocationsOnThisThread::available() { return true; }
#endif
}  // namespace trtwatch::testing

#ifndef TRTWATCH_RUNTIME_OWNS_OPERATOR_NEW
namespace {
void* Allocate(std::size_t size) {
  if (t_fail) {
    ++t_refused;
    throw std::bad_alloc();
  }
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
}  // namespace

// The replaceable global allocation functions, all of the unaligned ones (so that no
// block is allocated by one allocator and freed by another). The aligned forms are
// left to the library: they come in matching pairs there.
void* operator new(std::size_t size) { return Allocate(size); }
void* operator new[](std::size_t size) { return Allocate(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return Allocate(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept { return operator new(size, tag); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
#endif
