// guarded_hm_list: the Harris-Michael lock-free list (Michael, SPAA 2002) written with paper 003's
// smart pointers (Stamp-it, Pöter and Träff, section 2): links are concurrent_ptrs with one mark
// bit, the nodes a search dereferences are held by guard_ptrs, and each operation opens a
// region_guard.
//
// The algorithm is that of ds/hm_list.hpp (detail/hm_bucket.hpp), the explicit-call form with a
// guard and three rotating hazard slots: erase marks the node's link (logical deletion), then
// unlinks it with a CAS on the predecessor's link; a search unlinks and retires the marked nodes
// it meets and goes on from the same predecessor, restarting from the head only when the
// predecessor's link changed under it. What differs here:
// - A search holds three guard_ptrs, made once per operation: `save` (the predecessor's node,
//   which owns the link `prev`), `cur` and `next`, made from the operation's region_guard (so
//   they borrow its operation, or under hp its hazard slots). Advancing rotates the three roles
//   among the guard_ptrs (pointer renames: no protection moves), so the search reads like the
//   algorithm, with no slot indices.
// - Validation is the algorithm's own: after acquiring cur's successor, the predecessor's link
//   must still be cur, unmarked; under hp that re-read is what makes the successor safe to follow.
// - The node a CAS unlinked is retired with reclaim() on the guard_ptr that holds it.
// - nbr and nbr_plus cannot serve it (offers() says why): a guard_ptr outlives any read phase.
//
// `guarded_hm_list<Key, Scheme, Compare>` is a set, `guarded_hm_list_map<Key, Value, Scheme,
// Compare>` a map, with hm_list's interface (detail/container_api.hpp). The lab runs both forms
// to measure what the interface costs (docs/results.md).
#pragma once
#include <atomic>
#include <functional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "../concepts.hpp"
#include "../concurrent_ptr.hpp"
#include "detail/container_api.hpp"
#include "detail/marked_chain.hpp"

namespace reclaim::ds {

template <class Key, class Value, scheme Scheme, class Compare = std::less<Key>>
class basic_guarded_hm_list
    : public detail::container_api<basic_guarded_hm_list<Key, Value, Scheme, Compare>, Key,
                                   Value> {
  using api = detail::container_api<basic_guarded_hm_list, Key, Value>;
  friend api;
  struct node;
  using link = concurrent_ptr<node, 1>;  // the mark: the node that owns this link is deleted
  using pointer = typename link::pointer;
  using guard = guard_ptr<node, Scheme, 1>;

 public:
  static constexpr std::string_view name = api::is_map ? "guarded_hm_list_map" : "guarded_hm_list";
  using scheme_type = Scheme;
  using domain_type = typename Scheme::domain;
  using key_compare = Compare;

  static constexpr support offers(needs n) {
    switch (n) {
      case needs_restartable_read_phases:
        return {false, "written with guard_ptr, which neutralization cannot serve"};
      default: return {true};  // validated reads: the predecessor's link is re-read
    }
  }

  explicit basic_guarded_hm_list(domain_type& domain = Scheme::default_domain(),
                                 const Compare& comp = Compare())
      : domain_(domain), comp_(comp) {
    static_assert(protects<Scheme, basic_guarded_hm_list>);
  }
  ~basic_guarded_hm_list() { detail::delete_chain(head_); }
  basic_guarded_hm_list(const basic_guarded_hm_list&) = delete;
  basic_guarded_hm_list& operator=(const basic_guarded_hm_list&) = delete;

  bool contains(const Key& key) {
    region_guard<Scheme> region(domain_);
    position pos(region);
    return search(pos, key);
  }

  // Map: calls f(const Value&) with the key's value, if present, while the node is held; the
  // reference must not escape f. Returns whether the key was present.
  template <class F>
    requires api::is_map
  bool visit(const Key& key, F&& f) {
    region_guard<Scheme> region(domain_);
    position pos(region);
    if (!search(pos, key)) return false;
    std::forward<F>(f)(std::as_const((*pos.cur)->value));
    return true;
  }

  bool erase(const Key& key) {
    region_guard<Scheme> region(domain_);
    position pos(region);
    for (;;) {
      if (!search(pos, key)) return false;
      pointer next = pos.next->get();  // unmarked: a search returns only unmarked nodes
      // Logical deletion: mark cur's link. acq_rel: orders the mark after our reads of cur and
      // makes it visible to whoever unlinks cur.
      if (!(*pos.cur)->next.compare_exchange_strong(next, pointer(next.get(), 1),
                                                 std::memory_order_acq_rel,
                                                 std::memory_order_relaxed))
        continue;  // cur's link changed (a new successor, or another erase marked it)
      if (!unlink(pos)) search(pos, key);  // the link changed: let a search unlink (and retire) it
      return true;
    }
  }

  // Quiescent (size(), for_each() and key_sum() come from container_api): keys strictly increasing
  // and no marked node reachable.
  bool well_formed() const { return detail::chain_well_formed(head_, comp_); }

 private:
  struct node : Scheme::node_base, detail::element<Key, Value> {
    template <class... KV>
    explicit node(KV&&... kv) : detail::element<Key, Value>(std::forward<KV>(kv)...) {}
    link next;
  };

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

  template <class K, class... V>
  bool emplace(K&& key, V&&... value) {
    region_guard<Scheme> region(domain_);
    position pos(region);
    node* fresh = nullptr;
    for (;;) {
      // Once fresh exists it holds the key (perhaps moved from the caller's): search for it.
      if (search(pos, fresh ? fresh->key : static_cast<const Key&>(key))) {
        delete fresh;  // never published
        return false;
      }
      if (!fresh) fresh = new node(std::forward<K>(key), std::forward<V>(value)...);
      fresh->next.store(pos.cur->get(), std::memory_order_relaxed);
      pointer expected = pos.cur->get();
      // release: publishes the new node's fields; pairs with the acquire of whoever reads it.
      if (pos.prev->compare_exchange_strong(expected, fresh, std::memory_order_release,
                                            std::memory_order_relaxed))
        return true;
    }
  }

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
  bool search(position& pos, detail::search_key<Key> key) {
    guard *save = pos.save, *cur = pos.cur, *next = pos.next;  // the roles, in registers
    link* prev;
    bool found;
  try_again:
    prev = &head_;
    save->reset();
    // acquire (here and below): pairs with the release CAS that linked the node.
    cur->acquire(head_, std::memory_order_acquire);
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
        if (!comp_(ckey, key)) {
          found = !comp_(key, ckey);
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

  template <class F>
  void for_each_element(F f) const {
    detail::for_each_in_chain(
        head_, [&f](const node& n) { f(static_cast<const detail::element<Key, Value>&>(n)); });
  }

  domain_type& domain_;
  [[no_unique_address]] Compare comp_;
  link head_;
};

// A set of keys ordered by Compare.
template <class Key, scheme Scheme, class Compare = std::less<Key>>
using guarded_hm_list = basic_guarded_hm_list<Key, void, Scheme, Compare>;
// A map from keys ordered by Compare to values fixed at insertion.
template <class Key, class Value, scheme Scheme, class Compare = std::less<Key>>
using guarded_hm_list_map = basic_guarded_hm_list<Key, Value, Scheme, Compare>;

}  // namespace reclaim::ds
