// SPDX-License-Identifier: MIT
// What every scheme's guard offers in the same way: allocation; retire with the default deleter,
// a function chosen at compile time or a deleter object; the phase markers that only
// neutralization-based schemes give a meaning to; and (debug builds) the check that a guard is used
// only by the thread that made it. A guard derives from guard_base<itself> and implements
// retire_hook(), which takes a node already tagged with its deleter; a scheme that stamps nodes at
// allocation hides create() with its own.
#pragma once
#include <cassert>
#include <thread>
#include <utility>

#include "retired.hpp"

namespace reclaim::core {

// An object that belongs to the thread that made it (a guard, a guard_ptr's protection): used from
// another thread, it would publish that thread's protections in the wrong record, or none at all.
// Debug builds check it; release builds pay nothing.
class thread_bound {
 protected:
#ifndef NDEBUG
  void check_owner() const noexcept {
    assert(owner_ == std::this_thread::get_id() &&
           "reclaim: guard or guard_ptr used from another thread than the one that made it");
  }
  // Objects that swap what they hold (a protection's slot, which is its record's thread's) swap
  // the threads they belong to with it.
  void swap_owner(thread_bound& other) noexcept { std::swap(owner_, other.owner_); }

 private:
  std::thread::id owner_ = std::this_thread::get_id();
#else
  void check_owner() const noexcept {}
  void swap_owner(thread_bound&) noexcept {}
#endif
};

// What a region lends (a reclaim::region_guard lends its operation, or under hp a hazard slot, to
// the guard_ptrs made from it) must be given back before the region ends: a loan follows what was
// lent from guard_ptr to guard_ptr as it moves, and the lender counts the loans out. Debug builds
// stop when a region ends with a loan out; release builds pay nothing.
class lender;
class loan {
 public:
  loan() noexcept = default;
#ifndef NDEBUG
  loan(loan&& other) noexcept : out_(std::exchange(other.out_, nullptr)) {}
  loan& operator=(loan&& other) noexcept {
    if (this != &other) {
      give_back();
      out_ = std::exchange(other.out_, nullptr);
    }
    return *this;
  }
  ~loan() { give_back(); }

 private:
  friend lender;
  explicit loan(unsigned& out) noexcept : out_(&out) { ++out; }
  void give_back() noexcept {
    if (out_) --*std::exchange(out_, nullptr);
  }
  unsigned* out_ = nullptr;
#endif
};

class lender {
 public:
  lender() noexcept = default;
  lender(const lender&) = delete;
  lender& operator=(const lender&) = delete;
#ifndef NDEBUG
  ~lender() {
    assert(out_ == 0 &&
           "reclaim: a guard_ptr made from a region_guard outlived it (make it from the domain)");
  }
  loan lend() noexcept { return loan(out_); }

 private:
  unsigned out_ = 0;
#else
  loan lend() noexcept { return {}; }
#endif
};

template <class Guard>
class guard_base : protected thread_bound {
 public:
  // A new node, made with new: schemes that stamp a header in their nodes (a birth era, a count)
  // hide this with their own, so a container that allocates through it serves every scheme.
  template <class T, class... Args>
  T* create(Args&&... args) const {
    return new T(std::forward<Args>(args)...);
  }

  // Hands an unlinked node to the scheme, which deletes it (delete node) once no thread can still
  // hold it: on this thread or another, now or later.
  template <class T>
  void retire(T* node) {
    check_owner();
    self().retire_hook(to_retired(node));
  }
  // Deleter: a function `void(T*)`, e.g. retire<&pool_free>(node).
  template <auto Deleter, class T>
  void retire(T* node) {
    check_owner();
    self().retire_hook(to_retired<Deleter>(node));
  }
  // Deleter: an object called as d(node) on whichever thread frees the node; one with state is
  // kept in the node, which derives from reclaim::deleter_slot<D> (core/retired.hpp).
  template <class T, class D>
  void retire(T* node, D&& deleter) {
    check_owner();
    self().retire_hook(to_retired(node, std::forward<D>(deleter)));
  }

  // The phase markers that only neutralization (nbr) gives a meaning to: nothing here, so that a
  // container that marks its phases costs nothing under the other schemes.
  void begin_read_phase() const noexcept {}
  template <class... Nodes>
  void write_phase(Nodes*...) const noexcept {}

 protected:
  // A guard is its thread's, for its scope: never copied.
  guard_base() = default;
  guard_base(const guard_base&) = delete;
  guard_base& operator=(const guard_base&) = delete;

 private:
  Guard& self() noexcept { return static_cast<Guard&>(*this); }
};

}  // namespace reclaim::core
