// The guard of every scheme whose only need from a container is the start and end of each operation
// (a region): debra, ebr, ner, qsbr, rcu. The domain provides begin(record) -> record&, end(record)
// and retire(record, node), and befriends region_guard<Domain>; protect() is a plain acquire load.
#pragma once
#include <atomic>

#include "guard_base.hpp"

namespace reclaim::core {

template <class Domain>
class region_guard : public guard_base<region_guard<Domain>> {
 public:
  static constexpr bool validates = false;

  explicit region_guard(Domain& d) : domain_(d), record_(d.begin(d.threads_.local())) {}
  ~region_guard() {
    this->check_owner();
    domain_.end(record_);
  }
  region_guard(const region_guard&) = delete;
  region_guard& operator=(const region_guard&) = delete;

  // acquire: pairs with the release store or CAS that published the node.
  template <class P>
  P protect(const std::atomic<P>& src, unsigned /*slot*/) const noexcept {
    this->check_owner();
    return src.load(std::memory_order_acquire);
  }

 private:
  friend class guard_base<region_guard>;
  void retire_hook(retired_hook* node) { domain_.retire(record_, node); }

  Domain& domain_;
  typename Domain::record& record_;
};

}  // namespace reclaim::core
