// SPDX-License-Identifier: MIT
// Quiescent helpers over a sorted chain of nodes linked by marked pointers (the Harris-Michael
// lists, detail/hm_bucket.hpp and guarded_hm_list.hpp): call them only while no operation runs on
// the chain. `head` is the chain's first link, a core::atomic<marked_ptr<node, 1>> or a
// concurrent_ptr<node, 1>, and each node's `next` is a link of the same kind.
#pragma once
#include <atomic>
#include "../../core/sync.hpp"

namespace reclaim::ds::detail {

// Deletes every node still linked (retired nodes belong to the scheme).
template <class Head>
void delete_chain(Head& head) noexcept {
  for (auto* n = head.load(std::memory_order_relaxed).get(); n;) {
    auto* next = n->next.load(std::memory_order_relaxed).get();
    delete n;
    n = next;
  }
}

// Calls f(node) for every node, in chain order.
template <class Head, class F>
void for_each_in_chain(const Head& head, F f) {
  for (auto* n = head.load(std::memory_order_acquire).get(); n;
       n = n->next.load(std::memory_order_acquire).get())
    f(*n);
}

// Keys strictly increasing by `comp` and no marked node reachable.
template <class Head, class Compare>
bool chain_well_formed(const Head& head, const Compare& comp) {
  decltype(head.load().get()) last = nullptr;
  for (auto* n = head.load(std::memory_order_acquire).get(); n;) {
    auto next = n->next.load(std::memory_order_acquire);
    if ((last && !comp(last->key, n->key)) || next.mark()) return false;
    last = n;
    n = next.get();
  }
  return true;
}

}  // namespace reclaim::ds::detail
