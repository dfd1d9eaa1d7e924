// harris_list: Harris's lock-free sorted list (Harris, DISC 2001), in the read/write-phase form of
// paper 000 (NBR, Algorithm 3).
//
// What it is. A sorted singly linked list with head and tail sentinels. erase marks the node's next
// pointer (logical deletion) and then tries to unlink it with one CAS on the predecessor. A search
// walks through marked nodes without stopping; it returns the last unmarked node before the key
// (left), what left pointed to when read (left_next), and the first unmarked node at or after the
// key (right). When left_next != right, everything between them is a chain of marked nodes, which
// the operation unlinks with one CAS on left's link; on any failure it searches again from the head.
// The thread whose CAS unlinks a node (the chain CAS, or erase's own CAS) retires it, once: a marked
// node's link never changes again, so no other CAS can bypass it a second time.
//
// Phases (NBR). Each search is a read phase that starts at the head and keeps nothing from earlier
// phases; the write phase reserves left, left_next and right (at most three, as the paper says).
// The chain's other nodes are not reserved: after our CAS unlinked them nobody else can retire them,
// so they cannot be freed while we walk the chain to retire them. left_next must be reserved: if it
// were freed and its memory reused for a node inserted right after left, the chain CAS would succeed
// and unlink a live node (ABA).
//
// Reclamation. Epoch schemes and NBR protect it. Hazard pointers and eras cannot: a search reads
// pointers out of marked nodes, whose links never change, so re-reading the source cannot show
// that the node read is still reachable; its whole chain may already be unlinked and freed. The
// paper's Table 1 says "yes" for HP on HL01 because Michael's variant (hm_list) fixes exactly this
// by unlinking marked nodes one at a time; this container keeps Harris's search.
//
// Progress: lock-free updates; contains() is a read-only search (it does not help unlink), so it is
// wait-free apart from the restarts NBR imposes. Differences from the paper: contains() does not
// unlink marked chains (Harris's Find does); erase's unlink CAS, when it fails, is followed by
// searches until the node is gone, as in the paper.
#pragma once
#include <atomic>
#include <cstdint>
#include <limits>
#include <string_view>

#include "../concepts.hpp"
#include "../core/marked_ptr.hpp"

namespace reclaim::ds {

// White-box access for tests (tests/container_test.cpp); the library never defines it.
struct harris_list_test_peer;

template <scheme Scheme>
class harris_list {
 public:
  static constexpr std::string_view name = "harris_list";
  using key_type = std::int64_t;
  using domain_type = typename Scheme::domain;
  using guard_type = typename Scheme::guard;
  // The sentinels' keys are never compared: every int64 is a valid key.
  static constexpr key_type min_key = std::numeric_limits<key_type>::min();
  static constexpr key_type max_key = std::numeric_limits<key_type>::max();
  static constexpr unsigned slots_used = 0;  // no validating scheme can protect it (offers())

  static constexpr support offers(needs n) {
    switch (n) {
      case needs_validated_reads:
        return {false,
                "searches read links out of marked nodes, which never change: re-reading one cannot "
                "prove the node it points to is still reachable (use hm_list)"};
      case needs_restartable_read_phases: return {true};
      default: return {true};
    }
  }

  explicit harris_list(domain_type& domain = Scheme::default_domain()) : domain_(domain) {
    static_assert(protects<Scheme, harris_list>);
    tail_ = new node(std::numeric_limits<key_type>::max(), nullptr);
    head_ = new node(std::numeric_limits<key_type>::min(), tail_);
  }
  ~harris_list() {
    for (node* n = head_; n;) {
      node* next = n->next.load(std::memory_order_relaxed).get();
      delete n;
      n = next;
    }
  }
  harris_list(const harris_list&) = delete;
  harris_list& operator=(const harris_list&) = delete;

  bool contains(key_type key) {
    guard_type g(domain_);
    RECLAIM_READ_PHASE(g);
    window w = search(g, key);
    return w.right != tail_ && w.right->key == key;
  }

  bool insert(key_type key) {
    guard_type g(domain_);
    node* fresh = nullptr;  // set only in write phases, before the next restart point
    for (;;) {
      RECLAIM_READ_PHASE(g);
      window w = search(g, key);
      g.write_phase(w.left, w.left_next, w.right);
      if (!settle(g, w)) continue;
      if (w.right != tail_ && w.right->key == key) {
        delete fresh;  // never published
        return false;
      }
      if (!fresh) fresh = g.template create<node>(key, w.right);
      fresh->next.store(link(w.right), std::memory_order_relaxed);
      link expected(w.right);
      // release: publishes the new node's fields; pairs with the acquire loads in search().
      if (w.left->next.compare_exchange_strong(expected, link(fresh), std::memory_order_release,
                                               std::memory_order_relaxed))
        return true;
    }
  }

  bool erase(key_type key) {
    guard_type g(domain_);
    for (;;) {
      RECLAIM_READ_PHASE(g);
      window w = search(g, key);
      g.write_phase(w.left, w.left_next, w.right);
      if (!settle(g, w)) continue;
      if (w.right == tail_ || w.right->key != key) return false;
      link right_next = w.right->next.load(std::memory_order_acquire);
      if (right_next.mark()) continue;  // erased by someone else since the search: look again
      // Logical deletion, the erase's linearization point. acq_rel: orders the mark after our
      // reads of right and makes it visible to whoever unlinks right.
      if (!w.right->next.compare_exchange_strong(right_next, link(right_next.get(), 1),
                                                 std::memory_order_acq_rel,
                                                 std::memory_order_relaxed))
        continue;
      link expected(w.right);
      // release: a search that reads the new link sees right_next's fields (pairs with the
      // acquire loads in search()).
      if (w.left->next.compare_exchange_strong(expected, link(right_next.get()),
                                               std::memory_order_release,
                                               std::memory_order_relaxed)) {
        g.retire(w.right);
        return true;
      }
      break;  // someone changed left's link: searches unlink (and retire) our node
    }
    // Harris: search for the key until no marked chain lies before it, so that the node this erase
    // marked is unlinked before it returns.
    for (;;) {
      RECLAIM_READ_PHASE(g);
      window w = search(g, key);
      g.write_phase(w.left, w.left_next, w.right);
      if (settle(g, w)) return true;
    }
  }

  // Quiescent traversals for validation: call only while no operation runs.
  std::size_t size() const {
    std::size_t n = 0;
    for_each_key([&](key_type) { ++n; });
    return n;
  }
  std::int64_t key_sum() const {
    std::int64_t s = 0;
    for_each_key([&](key_type k) { s += k; });
    return s;
  }
  // Keys strictly increasing, no marked node reachable, and the list ends at the tail.
  bool well_formed() const {
    bool first = true;
    key_type last = 0;
    node* n = head_->next.load(std::memory_order_acquire).get();
    for (; n && n != tail_;) {
      link next = n->next.load(std::memory_order_acquire);
      if ((!first && n->key <= last) || next.mark()) return false;
      first = false;
      last = n->key;
      n = next.get();
    }
    return n == tail_ && !head_->next.load(std::memory_order_acquire).mark();
  }

 private:
  friend struct harris_list_test_peer;

  struct node;
  using link = marked_ptr<node>;
  struct node : Scheme::node_base {
    node(key_type k, node* n) : key(k), next(link(n)) {}
    const key_type key;
    std::atomic<link> next;  // marked: this node is logically deleted, and the link is frozen
  };

  // What a search saw; every field is a plain pointer (trivially destructible, as the read phase
  // requires).
  struct window {
    node* left;       // the last unmarked node before the key (the head at least)
    node* left_next;  // left's link when it was read: right, or the first node of a marked chain
    node* right;      // the first unmarked node with a key >= the key searched, or the tail
  };
  static_assert(restart_safe<window>);

  // Harris's search, read-only: the read phase of every operation.
  window search(guard_type& g, key_type key) const {
    window w{head_, nullptr, nullptr};
    node* t = head_;
    link t_next = g.protect(head_->next, 0);
    do {
      if (!t_next.mark()) {
        w.left = t;
        w.left_next = t_next.get();
      }
      t = t_next.get();
      if (t == tail_) break;
      // acquire: pairs with the release CAS that linked t's successor (insert, or an unlink).
      t_next = g.protect(t->next, 0);
    } while (t_next.mark() || t->key < key);
    w.right = t;
    return w;
  }

  // Write phase, on the reserved window: makes left and right adjacent by unlinking the marked
  // chain between them, if any, and retiring its nodes. Returns false if the operation must search
  // again: the chain CAS failed, or right has been marked since the search.
  bool settle(guard_type& g, const window& w) {
    if (w.left_next != w.right) {
      link expected(w.left_next);
      // acq_rel: the release publishes right to searches that read the new link; the acquire
      // orders our walk of the chain below after the CAS that made the chain ours.
      if (!w.left->next.compare_exchange_strong(expected, link(w.right), std::memory_order_acq_rel,
                                                std::memory_order_relaxed))
        return false;
      // Read each successor before retiring its node: a retire may free what it is given.
      for (node* n = w.left_next; n != w.right;) {
        node* next = n->next.load(std::memory_order_relaxed).get();  // frozen by its mark
        g.retire(n);
        n = next;
      }
    }
    return w.right == tail_ || !w.right->next.load(std::memory_order_acquire).mark();
  }

  template <class F>
  void for_each_key(F f) const {
    for (node* n = head_->next.load(std::memory_order_acquire).get(); n != tail_;
         n = n->next.load(std::memory_order_acquire).get())
      f(n->key);
  }

  domain_type& domain_;
  node* head_;
  node* tail_;
};

}  // namespace reclaim::ds
