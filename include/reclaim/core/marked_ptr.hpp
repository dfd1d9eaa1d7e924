// A pointer with a mark in its low bits, for algorithms that flag a node as logically deleted in the
// very word that links it (Harris 2001, Michael 2002).
#pragma once
#include <cassert>
#include <cstdint>

namespace reclaim {

template <class T, unsigned MarkBits = 1>
class marked_ptr {
 public:
  static constexpr std::uintptr_t mark_mask = (std::uintptr_t{1} << MarkBits) - 1;
  constexpr marked_ptr() noexcept = default;
  constexpr marked_ptr(T* p, std::uintptr_t mark = 0) noexcept  // NOLINT: implicit from T* by design
      : bits_(reinterpret_cast<std::uintptr_t>(p) | mark) {
    static_assert(alignof(T) > mark_mask, "the pointee's alignment leaves no room for the mark bits");
    assert(mark <= mark_mask);
  }

  T* get() const noexcept { return reinterpret_cast<T*>(bits_ & ~mark_mask); }
  std::uintptr_t mark() const noexcept { return bits_ & mark_mask; }
  T* operator->() const noexcept { return get(); }
  explicit operator bool() const noexcept { return get() != nullptr; }

  friend bool operator==(marked_ptr, marked_ptr) noexcept = default;

 private:
  std::uintptr_t bits_ = 0;
};

}  // namespace reclaim
