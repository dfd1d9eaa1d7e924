// SPDX-License-Identifier: MIT
// The Harris-Michael list (Michael, SPAA 2002) written with paper 003's smart pointers, over one
// head: the algorithm of guarded_hm_list (one head) and guarded_hm_hashmap (an array of them).
//
// The algorithm is that of ds/hm_list.hpp (detail/hm_bucket.hpp), the explicit-call form with a
// guard and three rotating hazard slots: erase marks the node's link (logical deletion), then
// unlinks it with a CAS on the predecessor's link; a search unlinks and retires the marked nodes
// it meets and goes on from the same predecessor, restarting from the head only when the
// predecessor's link changed under it. What differs there:
// - A search holds three guard_ptrs, made once per operation: `save` (the predecessor's node,
//   which owns the link `prev`), `cur` and `next`, made from the operation's region_guard (so
//   they borrow its operation, or under hp its hazard slots). Advancing rotates the three roles
//   among the guard_ptrs (pointer renames: no protection moves), so the search reads like the
//   algorithm, with no slot indices.
// - Validation is the algorithm's own: after acquiring cur's successor, the predecessor's link
//   must still be cur, unmarked; under hp that re-read is what makes the successor safe to follow.
// - The node a CAS unlinked is retired with reclaim() on the guard_ptr that holds it.
// - get(key) hands out the node it found in a guard_ptr made from the domain (value_ptr): the
//   value stays readable for as long as the caller holds it, across operations, even once the
//   key is erased (paper 003's long-lived guard_ptrs; under hp each one takes a hazard slot from
//   the thread's pool, which grows as needed).
#pragma once
#include <atomic>
#include <type_traits>
#include <utility>

#include "../../concepts.hpp"
#include "../../concurrent_ptr.hpp"
#include "container_api.hpp"
#include "marked_chain.hpp"

namespace reclaim::ds::detail {

template <class Key, class Value, scheme Scheme, class Compare>
class guarded_hm_bucket {
 public:
  using compare_type = Compare;
  struct node;
  using link = concurrent_ptr<node, 1>;  // the mark: the node that owns this link is deleted
  using head_type = link;
  using domain_type = typename Scheme::domain;

  struct node : Scheme::node_base, element<Key, Value> {
    template <class... KV>
    explicit node(KV&&... kv) : element<Key, Value>(std::forward<KV>(kv)...) {}
    link next;
  };

  // A map's value, held: while a value_ptr holds a node, the node is not freed (it may be erased
  // meanwhile; the value stays as it was). It belongs to the thread that got it, as a guard_ptr
  // does; empty when the key was absent. Under the region schemes holding one keeps the thread
  // inside an operation (so does a region_guard): hold values for as long as a task needs them,
  // not for ever.
  class value_ptr {
   public:
    explicit value_ptr(domain_type& domain) noexcept : held_(domain) {}
    const Value* get() const noexcept { return held_ ? &held_->value : nullptr; }
    const Value& operator*() const noexcept { return held_->value; }
    const Value* operator->() const noexcept { return &held_->value; }
    explicit operator bool() const noexcept { return static_cast<bool>(held_); }
    void reset() noexcept { held_.reset(); }

   private:
    friend guarded_hm_bucket;
    guard_ptr<node, Scheme, 1> held_;
  };

  // A lookup: contains (f is nullptr) or visit (f(const Value&) called while cur holds the node).
  // K is Key, or a key type that Compare compares with Key (heterogeneous lookup).
  template <class K, class F>
  static bool lookup(domain_type& d, link& head, const Compare& comp, const K& key, F&& f) {
    region_guard<Scheme> region(d);
    position pos(region);
    if (!search<K>(pos, head, comp, key)) return false;
    if constexpr (!std::is_null_pointer_v<std::remove_cvref_t<F>>)
      std::forward<F>(f)(std::as_const((*pos.cur)->value));
    return true;
  }

  static value_ptr get(domain_type& d, link& head, const Compare& comp, const Key& key) {
    value_ptr held(d);
    region_guard<Scheme> region(d);
    position pos(region);
    // The node found is held by the region's guard_ptr; take it into one made from the domain,
    // if prev still points to it unmarked (under hp: published in its own slot, and validated).
    while (search(pos, head, comp, key))
      if (held.held_.acquire_if_equal(*pos.prev, pos.cur->get(), std::memory_order_acquire))
        break;
    return held;
  }

  template <class K>
  static bool erase(domain_type& d, link& head, const Compare& comp, const K& key) {
    region_guard<Scheme> region(d);
    position pos(region);
    for (;;) {
      if (!search<K>(pos, head, comp, key)) return false;
      pointer next = pos.next->get();  // unmarked: a search returns only unmarked nodes
      // Logical deletion: mark cur's link. acq_rel: orders the mark after our reads of cur and
      // makes it visible to whoever unlinks cur.
      if (!(*pos.cur)->next.compare_exchange_strong(next, pointer(next.get(), 1),
                                                 std::memory_order_acq_rel,
                                                 std::memory_order_relaxed))
        continue;  // cur's link changed (a new successor, or another erase marked it)
      if (!unlink(pos)) search<K>(pos, head, comp, key);  // let a search unlink (and retire) it
      return true;
    }
  }

  template <class K, class... V>
  static bool emplace(domain_type& d, link& head, const Compare& comp, K&& key, V&&... value) {
    region_guard<Scheme> region(d);
    position pos(region);
    node* fresh = nullptr;
    for (;;) {
      // Once fresh exists it holds the key (perhaps moved from the caller's): search for it.
      if (search(pos, head, comp, fresh ? fresh->key : static_cast<const Key&>(key))) {
        delete fresh;  // never published
        return false;
      }
      if (!fresh) fresh = d.template create<node>(std::forward<K>(key), std::forward<V>(value)...);
      fresh->next.store(pos.cur->get(), std::memory_order_relaxed);
      pointer expected = pos.cur->get();
      // release: publishes the new node's fields; pairs with the acquire of whoever reads it.
      if (pos.prev->compare_exchange_strong(expected, fresh, std::memory_order_release,
                                            std::memory_order_relaxed))
        return true;
    }
  }

  // Quiescent.
  static void destroy_all(link& head) noexcept { delete_chain(head); }
  template <class F>
  static void for_each_element(const link& head, F f) {
    for_each_in_chain(head, [&f](const node& n) { f(static_cast<const element<Key, Value>&>(n)); });
  }
  static bool well_formed(const link& head, const Compare& comp) {
    return chain_well_formed(head, comp);
  }

 private:
  using pointer = typename link::pointer;
  using guard = guard_ptr<node, Scheme, 1>;

  // Where a search stopped: prev is the link to cur, save holds the node prev belongs to (empty
  // when prev is the head), cur the first node whose key is not less than the key searched (empty
  // at the end of the list) and next cur's successor. When a search returns, prev holds cur
  // unmarked and cur's link holds next unmarked (cur's own snapshot may carry the mark of the link
  // it was read from: compare cur->get()). save, cur and next are roles that a search rotates
  // among three guard_ptrs as it advances: renaming them costs nothing, where swapping what two
  // guard_ptrs hold would move their protections' fields at every node.
  struct position {
    explicit position(region_guard<Scheme>& r) : held{guard(r), guard(r), guard(r)} {}
    link* prev = nullptr;
    guard held[3];
    guard* save = &held[0];
    guard* cur = &held[1];
    guard* next = &held[2];
  };

  // Unlinks the marked cur from prev and retires it; false if prev no longer points to cur.
  // acq_rel: the release publishes next to searches that read the new link; the acquire orders
  // the retire after the unlink that made cur ours to retire.
  static bool unlink(link* prev, guard& cur, const guard& next) {
    pointer expected = cur.get();
    if (!prev->compare_exchange_strong(expected, next.get(), std::memory_order_acq_rel,
                                       std::memory_order_relaxed))
      return false;
    cur.reclaim();
    return true;
  }
  static bool unlink(position& pos) { return unlink(pos.prev, *pos.cur, *pos.next); }

  // Michael's Find: whether a node with `key` is in the list, and where it is or would be. c and
  // n are what cur and next hold, kept in registers (read back from the guard_ptrs, they would be
  // reloaded after every store to one of them).
  template <class K = Key>
  static bool search(position& pos, link& head, const Compare& comp, search_key<K> key) {
    guard *save = pos.save, *cur = pos.cur, *next = pos.next;  // the roles, in registers
    link* prev;
    bool found;
  try_again:
    prev = &head;
    save->reset();
    // acquire (here and below): pairs with the release CAS that linked the node.
    cur->acquire(head, std::memory_order_acquire);
    for (node* c = cur->get();;) {
      if (!c) {
        found = false;
        break;
      }
      next->acquire(c->next, std::memory_order_acquire);
      const pointer n = *next;
      // cur is still reachable from prev, unmarked: what makes the reads above valid (under hp,
      // next was not retired before its hazard was visible).
      if (prev->load(std::memory_order_acquire) != pointer(c)) goto try_again;
      if (!n.mark()) {
        const Key& ckey = c->key;  // a reference: a search copies nothing
        if (!comp(ckey, key)) {
          found = !comp(key, ckey);
          break;
        }
        prev = &c->next;
        std::swap(save, cur);  // save: prev's node
      } else if (!unlink(prev, *cur, *next)) {
        goto try_again;
      }
      std::swap(cur, next);  // cur: the successor; next: free for the next acquire
      c = n.get();
    }
    pos.prev = prev;
    pos.save = save;
    pos.cur = cur;
    pos.next = next;
    return found;
  }
};

}  // namespace reclaim::ds::detail
