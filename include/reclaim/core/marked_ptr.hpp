// SPDX-License-Identifier: MIT
// A pointer with a mark in its low bits, for algorithms that flag a node as logically deleted in the
// very word that links it (Harris 2001, Michael 2002): marked_ptr<T, 1> there. MarkBits defaults to
// 0, as concurrent_ptr<T> and guard_ptr<T, Scheme> do, so that `marked_ptr<T> p = link.load();`
// compiles for a concurrent_ptr<T>; a link with marks names its bits in all three.
#pragma once
#include <cassert>
#include <cstdint>

namespace reclaim {

// A T* and a mark of MarkBits bits in one word; T's alignment must leave the bits free.
template <class T, unsigned MarkBits = 0>
class marked_ptr {
 public:
  // The bits of the word that hold the mark.
  static constexpr std::uintptr_t mark_mask = (std::uintptr_t{1} << MarkBits) - 1;
  constexpr marked_ptr() noexcept = default;
  // p with `mark` in its low bits (at most mark_mask).
  constexpr marked_ptr(T* p, std::uintptr_t mark = 0) noexcept  // NOLINT: implicit from T* by design
      : bits_(reinterpret_cast<std::uintptr_t>(p) | mark) {
    static_assert(alignof(T) > mark_mask, "the pointee's alignment leaves no room for the mark bits");
    assert(mark <= mark_mask);
  }

  // The pointer, mark cleared; the mark alone; the pointer's member access; whether the pointer
  // (not the mark) is non-null.
  T* get() const noexcept { return reinterpret_cast<T*>(bits_ & ~mark_mask); }
  std::uintptr_t mark() const noexcept { return bits_ & mark_mask; }
  T* operator->() const noexcept { return get(); }
  explicit operator bool() const noexcept { return get() != nullptr; }

  // Equal when both pointer and mark are.
  friend bool operator==(marked_ptr, marked_ptr) noexcept = default;

 private:
  std::uintptr_t bits_ = 0;
};

}  // namespace reclaim
