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
#include "../core/guard_base.hpp"
#include "../core/record.hpp"
#include "../free/batch.hpp"

namespace reclaim {

struct none {
  static constexpr std::string_view name = "none";
  static constexpr reclaim::family family = reclaim::family::none;
  static constexpr bool bounds_garbage = false;
  static constexpr unsigned needs = needs_nothing;

  using node_base = core::retired_hook;
  class domain;
  class guard;
  static domain& default_domain();
};

class none::domain {
  struct record : core::thread_record<batch_free> {
    explicit record(domain&) {}
    core::retired_list leaked;
  };

 public:
  domain() = default;
  ~domain() {
    threads_.close();
    threads_.for_each([](record& r) { r.leaked.destroy_all(); });
    orphans_.take_all().destroy_all();
  }

  reclaim::stats stats() const { return core::collect_stats(threads_, gauge_); }

 private:
  friend class none::guard;
  friend class core::thread_registry<record, domain>;

  void detach(record& r) noexcept {
    r.depth = 0;
    r.pending.flush(gauge_);
    orphans_.give(std::move(r.leaked));
  }

  core::thread_registry<record, domain> threads_{*this};
  core::orphanage orphans_;
  core::pending_gauge gauge_;
};

class none::guard : public core::guard_base<none::guard> {
 public:
  static constexpr bool validates = false;

  explicit guard(domain& d = default_domain()) noexcept : domain_(d) {}
  guard(const guard&) = delete;
  guard& operator=(const guard&) = delete;

  // acquire: pairs with the release store that published the node.
  template <class P>
  P protect(const std::atomic<P>& src, unsigned /*slot*/) const noexcept {
    return src.load(std::memory_order_acquire);
  }
 private:
  friend class core::guard_base<guard>;
  void retire_hook(core::retired_hook* hook) {
    auto& r = domain_.threads_.local();
    r.leaked.push(hook);
    r.count_retired(domain_.gauge_);
  }
  domain& domain_;
};

inline none::domain& none::default_domain() {
  static domain d;
  return d;
}

}  // namespace reclaim
