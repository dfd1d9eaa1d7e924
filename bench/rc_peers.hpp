// SPDX-License-Identifier: MIT
// The standard library's shared pointers as the peers of issue 30's rc containers: what a C++
// engineer reaches for to share a pointer between threads. Under the lab names
//   std:atomic_shared_ptr   std::atomic<std::shared_ptr<T>> (libstdc++ guards it with a lock
//                           bit in the control block pointer: is_lock_free() is false)
//   std:atomic_load         std::atomic_load / std::atomic_store on a plain std::shared_ptr
//                           (libstdc++: a table of mutexes hashed by the shared_ptr's address)
// they run the shared-config workload's rc_config (config_workload.hpp: load to a shared_ptr,
// then dereference) through the same code as our cells, and std:atomic_shared_ptr also runs
// rc_stack's and persistent_map's code over std_family below (peers_std.cpp registers them).
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>

#include "config_workload.hpp"
#include "rc_containers.hpp"

namespace reclaim_bench::peers {

// How a std cell reads and writes its location: std::atomic<std::shared_ptr<T>>'s members, or
// the free functions on a plain shared_ptr (deprecated in C++20 for the former, which is why the
// calls sit in this one place, warning silenced).
template <class T>
struct std_atomic_shared_ptr {
  std::atomic<std::shared_ptr<T>> loc;
  std::shared_ptr<T> load() const { return loc.load(); }
  void store(std::shared_ptr<T> p) { loc.store(std::move(p)); }
};
template <class T>
struct std_atomic_load {
  std::shared_ptr<T> loc;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  std::shared_ptr<T> load() const { return std::atomic_load(&loc); }
  void store(std::shared_ptr<T> p) { std::atomic_store(&loc, std::move(p)); }
#pragma GCC diagnostic pop
};

// rc_config over a std location Loc (one of the two above): the cell config_workload.hpp expects.
// A std::shared_ptr frees at once when its last owner lets go, so settle() has nothing to wait
// for.
template <template <class> class Loc>
class std_config_cell {
 public:
  std_config_cell() = default;
  std_config_cell(const std_config_cell&) = delete;
  std_config_cell& operator=(const std_config_cell&) = delete;
  ~std_config_cell() { settle(); }

  void store(std::uint64_t version) { loc_.store(std::make_shared<config>(version, ledger_)); }
  template <class F>
  bool read(F&& use) {
    const std::shared_ptr<config> p = loc_.load();
    if (!p) return false;
    use(*p);
    return true;
  }
  bool settle() {
    loc_.store(nullptr);
    return true;
  }
  config_ledger& ledger() { return ledger_; }

 private:
  config_ledger ledger_;  // before loc_: the configs count into it until settle()
  Loc<config> loc_;
};

// The pointer family of include/reclaim/ds/detail/rc_family.hpp over std::shared_ptr and
// std::atomic<std::shared_ptr>: the containers written over a family (rc_stack, persistent_map)
// run the same code over it, so that the lab compares the pointers alone. A reader is a counted
// shared_ptr (std has no uncounted protected read).
struct std_family {
  struct domain_type {};
  static domain_type& default_domain() {
    static domain_type none;
    return none;
  }
  template <class N>
  using owner = std::shared_ptr<N>;
  template <class N>
  struct location {
    explicit location(domain_type&) {}
    location(const location&) = delete;
    location& operator=(const location&) = delete;
    std::atomic<std::shared_ptr<N>> loc;
  };
  // What replace() gets as `expected`: std's compare_exchange takes it by reference and writes
  // what it found back on failure, so the reader lends it its shared_ptr (mutable) instead of
  // paying a copy (an increment and a decrement) per attempt. After a failed replace() it holds
  // the location's current object, still protected by its count; the containers read anew then.
  template <class N>
  struct reader {
    mutable std::shared_ptr<N> p;
    N* get() const noexcept { return p.get(); }
    N* operator->() const noexcept { return p.get(); }
    explicit operator bool() const noexcept { return static_cast<bool>(p); }
  };

  template <class N, class... Args>
  static owner<N> make(domain_type&, Args&&... args) {
    return std::make_shared<N>(std::forward<Args>(args)...);
  }
  // acquire: pairs with replace()'s release, as rc_family's.
  template <class N>
  static reader<N> read(const location<N>& l) {
    return {l.loc.load(std::memory_order_acquire)};
  }
  template <class N>
  static bool replace(location<N>& l, const reader<N>& expected, owner<N> desired) {
    return l.loc.compare_exchange_strong(expected.p, std::move(desired),
                                         std::memory_order_acq_rel, std::memory_order_acquire);
  }
  template <class N>
  static owner<N> own(const reader<N>& r) {
    return r.p;
  }
};

}  // namespace reclaim_bench::peers
