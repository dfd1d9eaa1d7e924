// What every scheme's guard offers in the same way: allocation, retire with the default or a custom
// deleter, and the phase markers that only neutralization-based schemes give a meaning to. A guard
// derives from guard_base<itself> and implements retire_hook(), which takes a node already tagged
// with its deleter; a scheme that stamps nodes at allocation hides create() with its own.
#pragma once
#include <utility>

#include "retired.hpp"

namespace reclaim::core {

template <class Guard>
class guard_base {
 public:
  template <class T, class... Args>
  T* create(Args&&... args) const {
    return new T(std::forward<Args>(args)...);
  }

  template <class T>
  void retire(T* node) {
    self().retire_hook(to_retired(node));
  }
  // Deleter: a function `void(T*)`, e.g. retire<&pool_free>(node).
  template <auto Deleter, class T>
  void retire(T* node) {
    self().retire_hook(to_retired<Deleter>(node));
  }

  void begin_read_phase() const noexcept {}
  template <class... Nodes>
  void write_phase(Nodes*...) const noexcept {}

 private:
  Guard& self() noexcept { return static_cast<Guard&>(*this); }
};

}  // namespace reclaim::core
