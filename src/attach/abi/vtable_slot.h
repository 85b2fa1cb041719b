// The virtual-table slot a pointer to a virtual member function names, by the Itanium
// C++ ABI (Linux on x86-64 and AArch64): the pointer holds 1 + the slot's byte offset;
// ARM's variant holds the offset and flags virtual in the adjustment. The attach
// library patches slots by it, and the ABI tests check the declarations with it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace trtwatch::attach {

template <class MemberFunction>
int SlotOf(MemberFunction function) {
  struct Raw {
    uintptr_t ptr;
    ptrdiff_t adj;
  } raw{};
  static_assert(sizeof(function) == sizeof(raw));
  std::memcpy(&raw, &function, sizeof(raw));
#if defined(__aarch64__) || defined(__arm__)
  return static_cast<int>(raw.ptr / sizeof(void*));
#else
  return static_cast<int>((raw.ptr - 1) / sizeof(void*));
#endif
}

}  // namespace trtwatch::attach
