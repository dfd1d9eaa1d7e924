// SPDX-License-Identifier: MIT
// none: the baseline that never frees while the domain lives.
//
// Use it to measure what a structure costs without reclamation; never in production. Every
// per-operation call compiles to nothing: the guard is empty and protect() is a plain acquire load.
// Retired nodes are kept on a per-thread list (one store each) only so that the domain can free them
// when it is destroyed, which keeps leak checkers quiet and the lab's memory numbers honest: garbage
// grows without bound, and that is the point of the baseline.
#pragma once
#include <atomic>

#include "../concepts.hpp"
#include "../core/domain.hpp"
#include "../core/guard_base.hpp"
#include "../free/batch.hpp"
#include "../core/sync.hpp"

namespace reclaim {

struct none : core::scheme_base<none> {
  // What it is (concepts.hpp): the baseline that frees nothing while its domain lives, so its
  // garbage is unbounded, and it needs nothing of a container.
  static constexpr std::string_view name = "none";
  static constexpr reclaim::family family = reclaim::family::none;
  static constexpr bool bounds_garbage = false;
  static constexpr unsigned needs = needs_nothing;

  class domain;
  class guard;
  class protection;
};

namespace detail {
struct none_record : core::thread_record<batch_free> {
  core::retired_list leaked;
  void destroy_garbage() noexcept { leaked.destroy_all(); }
};
}  // namespace detail

// The shared state of none: the thread records, each keeping what it retired until the domain is
// destroyed, which frees it all (core/domain.hpp).
class none::domain : public core::domain_base<none::domain, detail::none_record> {
  using record = detail::none_record;
  using base = core::domain_base<domain, record>;

 public:
  // Its scheme's guard.
  using guard_type = none::guard;
  // Operations leave no trace (the guard touches nothing) and nothing is freed while the domain
  // lives: there is no synchronize() or barrier() to offer; flush() frees nothing.
  static constexpr bool grace_periods = false;

  ~domain() { shutdown(); }

 private:
  friend class none::guard;
  friend class none::protection;
  friend base;

  // Keeps a retired node until the domain is destroyed.
  void keep(core::retired_hook* hook) {
    auto& r = threads_.local();
    r.leaked.push(hook);
    r.count_retired(gauge_);
  }

  void on_thread_exit(record& r) noexcept { orphan(r, std::move(r.leaked)); }
  void flush_local(record&) noexcept {}
};

// Touches no per-thread state until it retires, so that an operation costs nothing; it takes no
// part in the nesting depth either (there is nothing to protect).
class none::guard : public core::guard_base<none::guard> {
 public:
  static constexpr bool validates = false;

  explicit guard(domain& d = none::default_domain()) noexcept : domain_(d) {}

  // acquire: pairs with the release store that published the node.
  template <class P>
  P protect(const core::atomic<P>& src, unsigned /*slot*/) const noexcept {
    check_owner();
    return src.load(std::memory_order_acquire);
  }

 private:
  friend class core::guard_base<guard>;
  void retire_hook(core::retired_hook* hook) { domain_.keep(hook); }
  domain& domain_;
};

// What a reclaim::guard_ptr holds: nothing (no node is freed while the domain lives), only the
// domain its reclaim() retires into.
class none::protection {
 public:
  static constexpr bool holds_region = false;

  // What a reclaim::region_guard holds: the domain, nothing to lend.
  class region {
   public:
    explicit region(domain& d) noexcept : domain_(d) {}

   private:
    friend protection;
    domain& domain_;
  };

  // Empty: without a domain, for d, or for the region's domain; the domain its reclaim() retires
  // into is all it keeps.
  protection() noexcept = default;
  explicit protection(domain& d) noexcept : domain_(&d) {}
  explicit protection(region& r) noexcept : domain_(&r.domain_) {}

  // `order`: pairs with the release store or CAS that published the node.
  template <class P>
  P protect(const core::atomic<P>& src, std::memory_order order) const noexcept {
    return src.load(order);
  }
  template <class P>
  bool try_protect(P& expected, const core::atomic<P>& src, std::memory_order order) const noexcept {
    P now = src.load(order);
    if (now == expected) return true;
    expected = now;
    return false;
  }
  void reset_protection() const noexcept {}
  void retire(core::retired_hook* hook) { domain_->keep(hook); }

 private:
  domain* domain_ = nullptr;
};

}  // namespace reclaim
