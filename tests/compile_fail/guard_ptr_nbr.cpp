// SPDX-License-Identifier: MIT
// Must not compile: nbr cannot serve guard_ptr or region_guard. Code that uses them the usual way
// (a region, guard_ptrs made from it and from the domain, acquire, reclaim, a guarded container)
// meets one error, whose message names the container calls that replace them (ctest
// smart_ptr.nbr_is_a_compile_error checks the message and that it is the only error).
#include <reclaim/reclaim.hpp>

#include <atomic>

using scheme = reclaim::nbr<>;

struct node : scheme::node_base {
  long value = 0;
};

int main() {
  reclaim::concurrent_ptr<node> head(scheme::default_domain().create<node>());
  long seen = 0;
  {
    reclaim::region_guard<scheme> region;
    reclaim::guard_ptr<node, scheme> held(region);
    held.acquire(head, std::memory_order_acquire);
    seen = held->value;
    reclaim::guard_ptr<node, scheme> other;
    if (other.acquire_if_equal(head, held, std::memory_order_acquire)) other.reclaim();
  }
  reclaim::ds::guarded_hm_hashmap<long, long, scheme> map;
  map.insert(1, 2);
  return map.get(1) && seen == 0 ? 0 : 1;
}
