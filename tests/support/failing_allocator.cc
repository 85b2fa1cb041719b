#include "support/failing_allocator.h"

#include <cstdlib>
#include <new>

namespace {
thread_local bool t_fail = false;
thread_local int t_refused = 0;

// Whether this allocation is refused: while a scope on this thread asks for it.
bool Refused() {
  if (!t_fail) return false;
  ++t_refused;
  return true;
}
}  // namespace

namespace trtwatch::testing {
FailAllocationsOnThisThread::FailAllocationsOnThisThread() {
  t_fail = true;
  t_refused = 0;
}
FailAllocationsOnThisThread::~FailAllocationsOnThisThread() { t_fail = false; }
int FailAllocationsOnThisThread::refused() { return t_refused; }
}  // namespace trtwatch::testing

#ifdef TRTWATCH_WRAP_OPERATOR_NEW
// Where a sanitizer's runtime defines operator new itself (clang's ThreadSanitizer,
// linked whole into the program), the linker sends this program's calls to these
// wrappers instead (-Wl,--wrap, tests/CMakeLists.txt); what they let through is the
// runtime's own allocation, freed by its own operator delete.
extern "C" {
void* __real__Znwm(std::size_t size);
void* __real__Znam(std::size_t size);
void* __real__ZnwmRKSt9nothrow_t(std::size_t size, const std::nothrow_t& tag) noexcept;
void* __real__ZnamRKSt9nothrow_t(std::size_t size, const std::nothrow_t& tag) noexcept;

void* __wrap__Znwm(std::size_t size) {
  if (Refused()) throw std::bad_alloc();
  return __real__Znwm(size);
}
void* __wrap__Znam(std::size_t size) {
  if (Refused()) throw std::bad_alloc();
  return __real__Znam(size);
}
void* __wrap__ZnwmRKSt9nothrow_t(std::size_t size, const std::nothrow_t& tag) noexcept {
  return Refused() ? nullptr : __real__ZnwmRKSt9nothrow_t(size, tag);
}
void* __wrap__ZnamRKSt9nothrow_t(std::size_t size, const std::nothrow_t& tag) noexcept {
  return Refused() ? nullptr : __real__ZnamRKSt9nothrow_t(size, tag);
}
}
#else
namespace {
void* Allocate(std::size_t size) {
  if (Refused()) throw std::bad_alloc();
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
