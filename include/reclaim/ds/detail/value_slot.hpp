// SPDX-License-Identifier: MIT
// Storage for one value of a pool container (treiber_stack, ms_queue) whose lifetime the container
// manages instead of the node's: a value is constructed when its node is made, moved out and
// destroyed by the one thread that wins the node, and never touched again, so the node that is
// freed later, by whichever thread reclaims it, holds nothing to destroy. (An ms_queue node keeps
// its storage empty while it is the dummy: its value has gone to the thread that made it one.)
#pragma once
#include <cstddef>
#include <memory>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>

namespace reclaim::ds::detail {

template <class T>
class value_slot {
  // The winner moves the value out after its CAS has unlinked the node, where there is no way
  // back: a move that threw would lose the value with the node already gone.
  static_assert(std::is_nothrow_move_constructible_v<T>,
                "values of a pool container must be nothrow move constructible");

 public:
  value_slot() noexcept = default;  // empty
  template <class... Args>
  explicit value_slot(std::in_place_t, Args&&... args) {
    std::construct_at(get(), std::forward<Args>(args)...);
  }
  value_slot(const value_slot&) = delete;
  value_slot& operator=(const value_slot&) = delete;
  // Trivial: whoever empties the slot destroys the value (take(), destroy()).

  // Moves the value out and destroys what is left of it: the slot is empty afterwards.
  std::optional<T> take() noexcept {
    std::optional<T> out(std::move(*get()));
    destroy();
    return out;
  }
  void destroy() noexcept { std::destroy_at(get()); }

 private:
  T* get() noexcept { return std::launder(reinterpret_cast<T*>(bytes_)); }

  alignas(T) std::byte bytes_[sizeof(T)];
};

}  // namespace reclaim::ds::detail
