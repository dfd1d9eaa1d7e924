// SPDX-License-Identifier: MIT
// The Harris-Michael list algorithm (Michael, SPAA 2002) over a list whose head is given: one
// implementation for hm_list (one head) and hm_hashmap (one head per bucket).
//
// A sorted list whose nodes are deleted in two steps: erase marks the node's next pointer (logical
// deletion), then unlinks it with a CAS on the predecessor. Searches help: a marked node met on
// the way is unlinked and retired by whoever unlinks it, and the search goes on from the same
// predecessor. A search restarts from the head only when the predecessor changed under it.
//
// Every read is validated by re-reading the predecessor's link (the algorithm does that for its own
// correctness), which is exactly what hazard pointers need: three slots, for the predecessor, the
// current node and its successor. Because searches resume from the predecessor after helping, its
// read phases do not restart from the root: NBR cannot protect it.
//
// hm_search::restart_after_helping (hm_list_restart, paper 000's experiment E4) changes one thing:
// a search that meets a marked node stops there and returns; the operation reserves the
// predecessor, the node and its successor (write phase), unlinks and retires the node, and searches
// again from the head in a new read phase. Every read phase then starts at the head and keeps
// nothing, which is what NBR needs; hazard pointers protect it exactly as before.
//
// The operations take the domain and the head's address and open their own guard (one operation,
// one guard), so that the restart point and the guard's end are in the same frame; the head is any
// core::atomic<link> that outlives the list's nodes, zero-initialized when empty. The list needs no
// sentinel: its end is the null link.
//
// Keys and values (detail/container_api.hpp): a node holds its element (the key, and the value of a
// map), compared with the caller's Compare by reference; a read phase copies nothing. A new node
// is created in the write phase and may take the caller's key by move, so every later search of
// that insert looks for the node's own copy. visit() calls f in the write phase that reserved the
// node.
//
// Values never change in their nodes (readers copy them without locks), so assign
// (insert_or_assign) and update replace the key's node by a new one: one CAS marks the old node
// deleted and links the new one after it (replace() has the argument). Searches keys of another
// type K where Compare compares K with Key (heterogeneous lookup): a read phase then copies nothing
// either, the key is the caller's.
#pragma once
#include <atomic>
#include <type_traits>
#include <utility>

#include "../../concepts.hpp"
#include "../../read_phase.hpp"
#include "../../core/marked_ptr.hpp"
#include "container_api.hpp"
#include "marked_chain.hpp"
#include "read_phase_compare.hpp"
#include "../../core/sync.hpp"

namespace reclaim::ds::detail {

// What a search does after unlinking a marked node: go on from the predecessor (Michael's Find) or
// start a new read phase at the head.
enum class hm_search { resume_after_helping, restart_after_helping };

// The search a scheme gets when the container's user names none: the restart where the scheme needs
// restartable read phases (nbr, nbr_plus), Michael's Find under every other scheme. So
// hm_list<K, S> and hm_hashmap<K, V, S> switch schemes by S alone, and every scheme but nbr's runs
// exactly the code it ran before the restart form existed.
template <class Scheme>
inline constexpr hm_search hm_search_for = (Scheme::needs & needs_restartable_read_phases) != 0
                                               ? hm_search::restart_after_helping
                                               : hm_search::resume_after_helping;

template <class Key, class Value, scheme Scheme, class Compare,
          hm_search Search = hm_search::resume_after_helping>
struct hm_bucket {
  using compare_type = Compare;
  using domain_type = typename Scheme::domain;
  using guard_type = typename Scheme::guard;
  static constexpr bool restarts = Search == hm_search::restart_after_helping;
  struct node;
  using link = marked_ptr<node, 1>;
  using head_type = core::atomic<link>;

  // Validated reads: three slots. Restartable read phases: only with restart_after_helping; the
  // containers' offers() say so, each naming its own restarting form.
  static constexpr unsigned slots_used = 3;

  struct node : Scheme::node_base, element<Key, Value> {
    template <class... KV>
    explicit node(KV&&... kv) : element<Key, Value>(std::forward<KV>(kv)...) {}
    core::atomic<link> next{};
  };

  // Each operation is a sequence of read phases (find) and write phases; under the resume policy
  // find helps inline and never asks the caller to.
  // A lookup: contains (f is nullptr: answered in the read phase) or visit (f(const Value&) called
  // in a write phase that reserved the node, since f may copy or allocate).
  // K is Key, or a key type that Compare compares with Key (heterogeneous lookup).
  template <class K, class F>
  static bool lookup(domain_type& d, head_type& head, const Compare& comp, const K& key, F&& f) {
    constexpr bool visits = !std::is_null_pointer_v<std::remove_cvref_t<F>>;
    guard_type g(d);
    for (;;) {
      RECLAIM_READ_PHASE(g);
      position pos = find<K>(g, head, comp, key);
      if (!pos.help && !(visits && pos.found)) return pos.found;
      g.write_phase(pos.prev_node, pos.curr, pos.next);
      if (pos.help) {
        unlink(g, pos);
        continue;
      }
      if constexpr (visits) f(std::as_const(pos.curr->value));
      return true;
    }
  }

  template <class K, class... V>
  static bool emplace(domain_type& d, head_type& head, const Compare& comp, K&& key,
                      V&&... value) {
    guard_type g(d);
    node* fresh = nullptr;  // set only in write phases, before the next restart point
    for (;;) {
      RECLAIM_READ_PHASE(g);
      // Once fresh exists it holds the key (perhaps moved from the caller's): search for it.
      const Key& wanted = fresh ? fresh->key : static_cast<const Key&>(key);
      position pos = find(g, head, comp, wanted);
      g.write_phase(pos.prev_node, pos.curr, pos.next);
      if (pos.help) {
        unlink(g, pos);
        continue;
      }
      if (pos.found) {
        delete fresh;  // never published
        return false;
      }
      if (!fresh) fresh = g.template create<node>(std::forward<K>(key), std::forward<V>(value)...);
      fresh->next.store(link(pos.curr), std::memory_order_relaxed);
      link expected(pos.curr);
      // release: publishes the new node's fields; pairs with the acquire in protect().
      if (pos.prev->compare_exchange_strong(expected, link(fresh), std::memory_order_release,
                                            std::memory_order_relaxed))
        return true;
    }
  }

  template <class K>
  static bool erase(domain_type& d, head_type& head, const Compare& comp, const K& key) {
    guard_type g(d);
    for (;;) {
      RECLAIM_READ_PHASE(g);
      position pos = find<K>(g, head, comp, key);
      g.write_phase(pos.prev_node, pos.curr, pos.next);
      if (pos.help) {
        unlink(g, pos);
        continue;
      }
      if (!pos.found) return false;
      link expected(pos.next);
      // Logical deletion: mark curr's link. acq_rel: orders the mark after our reads of curr and
      // makes it visible to whoever unlinks curr.
      if (!pos.curr->next.compare_exchange_strong(expected, link(pos.next, 1),
                                                  std::memory_order_acq_rel,
                                                  std::memory_order_relaxed))
        continue;
      if (!unlink(g, pos.prev, pos.curr, pos.next)) unlink_marked<K>(g, head, comp, key);
      return true;
    }
  }

  // Whether the bucket replaces nodes (assign, update): bucket_api offers insert_or_assign and
  // update on maps whose bucket does.
  static constexpr bool replaces = true;

  // insert_or_assign: inserts (key, value) if the key is absent, or else replaces its node by one
  // holding them (replace()); returns whether it inserted. The new node is made once, from a copy
  // of the key (the caller's key stays ours to search with once the node is published, when
  // another thread may free it), and serves every attempt, in either role.
  template <class V>
  static bool assign(domain_type& d, head_type& head, const Compare& comp, const Key& key,
                     V&& value) {
    guard_type g(d);
    node* fresh = nullptr;  // set only in write phases, before the next restart point
    for (;;) {
      RECLAIM_READ_PHASE(g);
      position pos = find(g, head, comp, key);
      g.write_phase(pos.prev_node, pos.curr, pos.next);
      if (pos.help) {
        unlink(g, pos);
        continue;
      }
      if (!fresh) fresh = g.template create<node>(key, std::forward<V>(value));
      if (pos.found) {
        if (!replace(pos, fresh)) continue;
        if (!unlink(g, pos.prev, pos.curr, fresh)) unlink_marked<Key>(g, head, comp, key);
        return false;
      }
      fresh->next.store(link(pos.curr), std::memory_order_relaxed);
      link expected(pos.curr);
      // release: publishes the new node's fields; pairs with the acquire in protect().
      if (pos.prev->compare_exchange_strong(expected, link(fresh), std::memory_order_release,
                                            std::memory_order_relaxed))
        return true;
    }
  }

  // update: replaces the node of a present key by one holding f(its value) (replace()); returns
  // whether the key was present. f runs in the write phase that reserved the node (it may
  // allocate), once per attempt: an attempt whose replacement lost to another operation on the
  // node frees its unpublished node and calls f again on what it finds then, so every update of a
  // key applies f to the value the previous one left.
  template <class K, class F>
  static bool update(domain_type& d, head_type& head, const Compare& comp, const K& key, F& f) {
    guard_type g(d);
    for (;;) {
      RECLAIM_READ_PHASE(g);
      position pos = find<K>(g, head, comp, key);
      g.write_phase(pos.prev_node, pos.curr, pos.next);
      if (pos.help) {
        unlink(g, pos);
        continue;
      }
      if (!pos.found) return false;
      // f is called before create() allocates: if it throws, nothing is left to free.
      node* fresh = g.template create<node>(pos.curr->key, f(std::as_const(pos.curr->value)));
      if (replace(pos, fresh)) {
        if (!unlink(g, pos.prev, pos.curr, fresh)) unlink_marked<K>(g, head, comp, key);
        return true;
      }
      delete fresh;  // never published
    }
  }

  // Quiescent helpers (detail/marked_chain.hpp): call only while no operation runs on this list.
  static void destroy_all(head_type& head) noexcept { delete_chain(head); }
  // Calls f(const element&) for every element, in key order.
  template <class F>
  static void for_each_element(const head_type& head, F f) {
    for_each_in_chain(head, [&f](const node& n) { f(static_cast<const element<Key, Value>&>(n)); });
  }
  static bool well_formed(const head_type& head, const Compare& comp) {
    return chain_well_formed(head, comp);
  }

  // A walk that any thread may run while others insert and erase (bucket_api's for_each): calls
  // f(const element&) on nodes in increasing key order, each while it is protected (under nbr in
  // the write phase that reserved it: f may allocate). Weakly consistent: a key present for the
  // whole walk is visited exactly once, one inserted or erased meanwhile at most once. Between two
  // visits the walk protects only the last two steps' nodes (at most three per guard), so it holds
  // back little garbage under the pointer schemes and nbr; an epoch scheme's guards hold the epoch
  // for the whole walk of a bucket.
  // Each step is a search, in a read phase, for the first unmarked node after the one visited last
  // (find_after()). Two guards take turns: a step's guard protects (reserves) the node it visits,
  // the other one still protects the node the step started from, whose link it reads. A guard's
  // next read phase clears only its own reservations, so under nbr the start node is still
  // reserved when that read phase begins; its hazard slots, under the hp family, are free again
  // once the other guard holds the visited node.
  static constexpr bool walks_concurrently = true;
  template <class F>
  static void walk(domain_type& d, head_type& head, const Compare& comp, F& f) {
    guard_type first(d);
    guard_type second(d);
    node* last = nullptr;
    for (bool turn = false;; turn = !turn) {
      node* n = walk_step(turn ? second : first, head, comp, last);
      if (!n) return;
      f(static_cast<const element<Key, Value>&>(*n));
      last = n;
    }
  }

 private:
  // Plain values only (trivially destructible, as a read phase requires).
  struct position {
    bool found;
    bool help;                // curr is marked: unlink it, then search again (restart policy only)
    core::atomic<link>* prev;  // the link that points to curr
    node* prev_node;          // the node prev belongs to (nullptr: the head)
    node* curr;               // first node with key >= the key searched (or nullptr)
    node* next;
  };
  static_assert(restart_safe<position>);

  // Helping: unlinks the marked curr from prev and retires it; false if prev no longer points to
  // curr. acq_rel: the release publishes next to searches that read the new link; the acquire
  // orders what follows after the unlink that made curr ours to retire.
  static bool unlink(guard_type& g, core::atomic<link>* prev, node* curr, node* next) {
    link expected(curr);
    if (!prev->compare_exchange_strong(expected, link(next), std::memory_order_acq_rel,
                                       std::memory_order_relaxed))
      return false;
    g.retire(curr);
    return true;
  }
  // The restart policy's helping write phase, on the reserved position.
  static void unlink(guard_type& g, const position& pos) { unlink(g, pos.prev, pos.curr, pos.next); }

  // Replaces the found node pos.curr (key k, unmarked link to pos.next) by fresh, which holds k too:
  // fresh's link is set to pos.next, then ONE CAS on curr's link, from pos.next unmarked to fresh
  // marked, is the linearization point of the replacement. It deletes curr logically, exactly as
  // erase's mark does, and in the same step links fresh after it, so the key is never absent:
  // - Every search that meets curr now sees it marked and unlinks it as after an erase (prev: curr
  //   -> fresh, the pointer in curr's marked link), under either search policy, and goes on to
  //   fresh, the first unmarked node with key k. Whoever's unlink succeeds retires curr, as usual.
  // - A concurrent erase, insert or replacement whose CAS on curr's link expected pos.next unmarked
  //   fails (the link is marked now and never changes again), searches again and meets fresh. If
  //   one of them won first, ours fails: the caller searches again.
  // - fresh cannot be unlinked (nor retired) while curr is still reachable: the only link to it is
  //   curr's marked one, and an unlink expects an unmarked link. So a search that protected fresh
  //   from curr's link and then saw prev still pointing to curr holds a node that was not retired
  //   when its protection was published: the hazard pointer argument for a marked node's successor
  //   (find()), unchanged. Era schemes read fresh's birth era, stamped by create().
  // - nbr: the write phase reserved what this dereferences and what the CASes expect: curr (its
  //   link, here), pos.next (the expected value: reserved, it cannot be freed and its address
  //   linked after curr again, so the CAS has no ABA) and prev's node (the unlink that follows);
  //   fresh is ours until published.
  // acq_rel: the release publishes fresh's key, value and link to whoever reads curr's link
  // (protect()'s acquire); the acquire orders the mark after our reads of curr, as erase's.
  static bool replace(const position& pos, node* fresh) {
    fresh->next.store(link(pos.next), std::memory_order_relaxed);
    link expected(pos.next);
    return pos.curr->next.compare_exchange_strong(expected, link(fresh, 1),
                                                  std::memory_order_acq_rel,
                                                  std::memory_order_relaxed);
  }

  // After an erase or a replacement whose unlink lost: searches until no marked node with the key
  // is reachable (under the resume policy one find unlinks it; under the restart policy each
  // marked node met is unlinked in its own write phase), so that none is left behind once the
  // operation returns. Its read phases restart here, in this frame: it ends the last one (a write
  // phase reserving nothing) before it returns, since a neutralization after the return would
  // jump to a frame that is gone.
  template <class K>
  static void unlink_marked(guard_type& g, head_type& head, const Compare& comp, const K& key) {
    for (;;) {
      RECLAIM_READ_PHASE(g);
      position pos = find<K>(g, head, comp, key);
      if (!pos.help) {
        g.write_phase();
        return;
      }
      g.write_phase(pos.prev_node, pos.curr, pos.next);
      unlink(g, pos);
    }
  }

  // Michael's Find: prev, curr and next are protected in rotating slots. Always inlined: it is
  // most of every operation, and GCC 12 otherwise keeps it out of line in erase (6% more
  // instructions per operation under the hp family, measured with reclaim_tools instructions).
  template <class K = Key>
  [[gnu::always_inline]] static position find(guard_type& g, head_type& head,
                                              const Compare& comp, search_key<K> key) {
    unsigned prev_slot = 0, curr_slot = 1, next_slot = 2;
  try_again:
    core::atomic<link>* prev = &head;
    node* prev_node = nullptr;
    node* curr = g.protect(*prev, curr_slot).get();
    for (;;) {
      if (!curr) return {false, false, prev, prev_node, nullptr, nullptr};
      link next = g.protect(curr->next, next_slot);
      const Key& ckey = curr->key;  // a reference: a read phase copies nothing
      // curr is still reachable from prev, unmarked: what makes the reads above valid.
      if (prev->load(std::memory_order_acquire) != link(curr)) goto try_again;
      if (!next.mark()) {
        if (!comp(ckey, key)) return {!comp(key, ckey), false, prev, prev_node, curr, next.get()};
        prev = &curr->next;
        prev_node = curr;
        // prev's node moves into the old curr slot, curr into the old next slot.
        unsigned freed_slot = prev_slot;
        prev_slot = curr_slot;
        curr_slot = next_slot;
        next_slot = freed_slot;
      } else {
        if constexpr (restarts) return {false, true, prev, prev_node, curr, next.get()};
        if (!unlink(g, prev, curr, next.get())) goto try_again;
        // next stays protected in next_slot and becomes curr: swap the two slots' roles.
        std::swap(curr_slot, next_slot);
      }
      curr = next.get();
    }
  }

  // A walk's step in guard g: the first unmarked node after `from` (the node visited last, which
  // the walk's other guard protects; nullptr: none yet), protected by g, or nullptr at the end.
  // Not inlined into walk(): the restart point is saved here, and the read phase ends here.
  [[gnu::noinline]] static node* walk_step(guard_type& g, head_type& head, const Compare& comp,
                                           node* from) {
    for (;;) {
      RECLAIM_READ_PHASE(g);
      position pos = find_after(g, head, comp, from);
      g.write_phase(pos.prev_node, pos.curr, pos.next);
      if (!pos.help) return pos.curr;
      unlink(g, pos);
    }
  }

  // find(), for the node after `from` instead of a key: starts at from's link while from is
  // unmarked, and from the head, skipping keys up to from's, once from is marked (erased or
  // replaced; its marked link may lead to nodes unlinked since, which no validation can vouch
  // for). From's link read unmarked is as safe a start as the head: an unmarked node is linked
  // (nodes are marked before they are unlinked), so what its link points to was reachable while
  // this read phase ran (nbr: it cannot be freed before this read phase is neutralized), and
  // re-reading that link unchanged validates it (hp family: the successor was not retired before
  // its hazard was visible). Every node returned has a key above from's, so no key is visited
  // twice; and a key present all along lies outside every from-to-curr gap, since from and curr
  // were adjacent, both linked, when the link was re-read.
  static position find_after(guard_type& g, head_type& head, const Compare& comp, node* from) {
    unsigned prev_slot = 0, curr_slot = 1, next_slot = 2;
  try_again:
    core::atomic<link>* prev = from ? &from->next : &head;
    node* prev_node = from;
    link first = g.protect(*prev, curr_slot);
    const bool skipping = first.mark();  // from is marked: search from the head
    if (skipping) {
      prev = &head;
      prev_node = nullptr;
      first = g.protect(head, curr_slot);
    }
    node* curr = first.get();
    for (;;) {
      if (!curr) return {false, false, prev, prev_node, nullptr, nullptr};
      link next = g.protect(curr->next, next_slot);
      // curr is still reachable from prev, unmarked: what makes the reads above valid.
      if (prev->load(std::memory_order_acquire) != link(curr)) goto try_again;
      if (!next.mark()) {
        if (!skipping || comp(from->key, curr->key))
          return {true, false, prev, prev_node, curr, next.get()};
        prev = &curr->next;
        prev_node = curr;
        unsigned freed_slot = prev_slot;  // rotated as in find()
        prev_slot = curr_slot;
        curr_slot = next_slot;
        next_slot = freed_slot;
      } else {
        if constexpr (restarts) return {false, true, prev, prev_node, curr, next.get()};
        if (!unlink(g, prev, curr, next.get())) goto try_again;
        std::swap(curr_slot, next_slot);
      }
      curr = next.get();
    }
  }
};

// The bucket of hm_list and hm_hashmap, which compare as their read phases must
// (detail/read_phase_compare.hpp).
template <class Key, class Value, scheme Scheme, class Compare, hm_search Search>
using hm_read_phase_bucket =
    hm_bucket<Key, Value, Scheme, read_phase_compare<Compare, Scheme>, Search>;

}  // namespace reclaim::ds::detail
