// SPDX-License-Identifier: MIT
// The Harris-Michael list and hash table (Michael, SPAA 2002) over a peer library's reclamation
// API, for the peers that ship no such container (liburcu: peers_urcu.cpp; Concurrency Kit:
// peers_ck.cpp). The algorithm is step for step the one of our hm_list and hm_hashmap
// (include/reclaim/ds/detail/hm_bucket.hpp, Michael's Find with searches that resume from the
// predecessor after helping), with the same memory orders, the same three rotating hazard slots
// and the same table (2^14 buckets, Fibonacci hashing), so that a ratio of ours to theirs compares
// the reclamation, not two containers. What the containers leave out is ours alone: maps, assign
// and update, heterogeneous keys, NBR's read phases, and the walk.
//
// A reclaimer R gives:
//   R::hook      what the library links a retired node by (an rcu_head, a ck_epoch_entry, a
//                ck_hp_hazard): the first member of every node, so that its callback, which gets
//                the hook's address, has the node's
//   R::guard     one operation, RAII, default-constructed (a read-side critical section, an epoch
//                section, the thread's hazard record), with
//                  link protect(const std::atomic<link>& src, unsigned slot)   a validated read
//                  void retire(hm_node<R::hook>* n)                             n is unlinked
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>

#include <reclaim/core/marked_ptr.hpp>
#include <reclaim/ds/detail/container_api.hpp>

#include "peers.hpp"

namespace reclaim_bench::peers {

template <class Hook>
struct hm_node {
  explicit hm_node(std::int64_t k) : key(k) {}
  Hook hook{};  // first: see above
  const std::int64_t key;
  std::atomic<reclaim::marked_ptr<hm_node, 1>> next{};
};

// The algorithm over one head: hm_bucket's insert, erase, contains and find.
template <class R>
class hm_chain {
 public:
  using node = hm_node<typename R::hook>;
  using link = reclaim::marked_ptr<node, 1>;
  using head_type = std::atomic<link>;
  using guard = typename R::guard;

  static bool contains(head_type& head, std::int64_t key) {
    guard g;
    return find(g, head, key).found;
  }

  static bool insert(head_type& head, std::int64_t key) {
    guard g;
    node* fresh = nullptr;
    for (;;) {
      const position pos = find(g, head, key);
      if (pos.found) {
        delete fresh;  // never published
        return false;
      }
      if (!fresh) fresh = new node(key);
      fresh->next.store(link(pos.curr), std::memory_order_relaxed);
      link expected(pos.curr);
      // release: publishes the new node's fields; pairs with the acquire in protect().
      if (pos.prev->compare_exchange_strong(expected, link(fresh), std::memory_order_release,
                                            std::memory_order_relaxed))
        return true;
    }
  }

  static bool erase(head_type& head, std::int64_t key) {
    guard g;
    for (;;) {
      const position pos = find(g, head, key);
      if (!pos.found) return false;
      link expected(pos.next);
      // Logical deletion. acq_rel: orders the mark after our reads of curr and makes it visible
      // to whoever unlinks curr.
      if (!pos.curr->next.compare_exchange_strong(expected, link(pos.next, 1),
                                                  std::memory_order_acq_rel,
                                                  std::memory_order_relaxed))
        continue;
      // An unlink that lost leaves curr to a search: this one unlinks it before we return.
      if (!unlink(g, pos.prev, pos.curr, pos.next)) find(g, head, key);
      return true;
    }
  }

  // Quiescent (no operation running): the keys in order, checked as hm_bucket's well_formed does
  // (strictly ascending, none marked), into s; in_bucket(key) says whether the key belongs here.
  template <class InBucket>
  static void scan(const head_type& head, key_scan& s, InBucket in_bucket) {
    const node* last = nullptr;
    for (const node* n = head.load(std::memory_order_acquire).get(); n;) {
      const link next = n->next.load(std::memory_order_acquire);
      if ((last && last->key >= n->key) || next.mark() || !in_bucket(n->key))
        s.well_formed = false;
      ++s.size;
      s.key_sum += n->key;
      last = n;
      n = next.get();
    }
  }
  static void destroy_all(head_type& head) noexcept {
    for (node* n = head.load(std::memory_order_relaxed).get(); n;) {
      node* next = n->next.load(std::memory_order_relaxed).get();
      delete n;
      n = next;
    }
  }

 private:
  struct position {
    bool found;
    head_type* prev;  // the link that points to curr
    node* curr;       // first node with key >= the key searched (or nullptr)
    node* next;
  };

  // Unlinks the marked curr from prev and retires it; false if prev no longer points to curr.
  // acq_rel: the release publishes next to searches that read the new link; the acquire orders the
  // retire after the unlink that made curr ours.
  static bool unlink(guard& g, head_type* prev, node* curr, node* next) {
    link expected(curr);
    if (!prev->compare_exchange_strong(expected, link(next), std::memory_order_acq_rel,
                                       std::memory_order_relaxed))
      return false;
    g.retire(curr);
    return true;
  }

  // Michael's Find, as hm_bucket's: prev, curr and next protected in rotating slots, every read
  // validated by re-reading prev's link, marked nodes unlinked on the way.
  [[gnu::always_inline]] static position find(guard& g, head_type& head, std::int64_t key) {
    unsigned prev_slot = 0, curr_slot = 1, next_slot = 2;
  try_again:
    head_type* prev = &head;
    node* curr = g.protect(*prev, curr_slot).get();
    for (;;) {
      if (!curr) return {false, prev, nullptr, nullptr};
      const link next = g.protect(curr->next, next_slot);
      const std::int64_t& ckey = curr->key;  // a reference, as hm_bucket's: read when compared
      // curr is still reachable from prev, unmarked: what makes the reads above valid.
      if (prev->load(std::memory_order_acquire) != link(curr)) goto try_again;
      if (!next.mark()) {
        if (ckey >= key) return {ckey == key, prev, curr, next.get()};
        prev = &curr->next;
        // prev's node moves into the old curr slot, curr into the old next slot.
        const unsigned freed_slot = prev_slot;
        prev_slot = curr_slot;
        curr_slot = next_slot;
        next_slot = freed_slot;
      } else {
        if (!unlink(g, prev, curr, next.get())) goto try_again;
        std::swap(curr_slot, next_slot);  // next stays protected and becomes curr
      }
      curr = next.get();
    }
  }
};

// hm_list (Buckets = 1) and hm_hashmap's set form (Buckets = 2^14, as ours), in our containers'
// interface; destroyed quiescent, freeing what is still linked (retired nodes are the library's).
template <class R, unsigned BucketBits>
class hm_table {
 public:
  using key_type = std::int64_t;
  hm_table() : heads_(std::make_unique<head_type[]>(std::size_t{1} << BucketBits)) {}
  ~hm_table() {
    for (std::size_t b = 0; b < (std::size_t{1} << BucketBits); ++b) chain::destroy_all(heads_[b]);
  }
  hm_table(const hm_table&) = delete;
  hm_table& operator=(const hm_table&) = delete;

  bool insert(key_type k) { return chain::insert(head(k), k); }
  bool erase(key_type k) { return chain::erase(head(k), k); }
  bool contains(key_type k) { return chain::contains(head(k), k); }
  std::size_t unsafe_size() { return static_cast<std::size_t>(scan().size); }
  std::int64_t unsafe_key_sum() { return scan().key_sum; }
  bool unsafe_well_formed() { return scan().well_formed; }

 private:
  using chain = hm_chain<R>;
  using head_type = typename chain::head_type;
  static std::size_t bucket_of(key_type k) {
    // Our hm_hashmap's bucket: std::hash of an integer is the integer.
    return reclaim::ds::detail::fibonacci_bucket(static_cast<std::uint64_t>(k), BucketBits);
  }
  head_type& head(key_type k) { return heads_[bucket_of(k)]; }
  key_scan scan() {
    key_scan s;
    for (std::size_t b = 0; b < (std::size_t{1} << BucketBits); ++b)
      chain::scan(heads_[b], s, [b](key_type k) { return bucket_of(k) == b; });
    return s;
  }
  std::unique_ptr<head_type[]> heads_;  // zero: empty
};

template <class R>
using hm_list_of = hm_table<R, 0>;
template <class R>
using hm_hashmap_of = hm_table<R, 14>;

}  // namespace reclaim_bench::peers
