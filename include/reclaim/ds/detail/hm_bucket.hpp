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

template <class Key, class Value, scheme Scheme, class Compare,
          hm_search Search = hm_search::resume_after_helping>
struct hm_bucket {
  using compare_type = Compare;
  using domain_type = typename Scheme::domain;
  using guard_type = typename Scheme::guard;
  static constexpr bool restarts = Search == hm_search::restart_after_helping;
  struct node;
  using link = marked_ptr<node>;
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
  template <class F>
  static bool lookup(domain_type& d, head_type& head, const Compare& comp, const Key& key, F&& f) {
    constexpr bool visits = !std::is_null_pointer_v<std::remove_cvref_t<F>>;
    guard_type g(d);
    for (;;) {
      RECLAIM_READ_PHASE(g);
      position pos = find(g, head, comp, key);
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

  static bool erase(domain_type& d, head_type& head, const Compare& comp, const Key& key) {
    guard_type g(d);
    for (;;) {
      RECLAIM_READ_PHASE(g);
      position pos = find(g, head, comp, key);
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
      if (unlink(g, pos.prev, pos.curr, pos.next)) return true;
      break;  // let a search unlink (and retire) it
    }
    for (;;) {
      RECLAIM_READ_PHASE(g);
      position pos = find(g, head, comp, key);
      if (!pos.help) return true;
      g.write_phase(pos.prev_node, pos.curr, pos.next);
      unlink(g, pos);
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

  // Michael's Find: prev, curr and next are protected in rotating slots. Always inlined: it is
  // most of every operation, and GCC 12 otherwise keeps it out of line in erase (6% more
  // instructions per operation under the hp family, measured with reclaim_tools instructions).
  [[gnu::always_inline]] static position find(guard_type& g, head_type& head,
                                              const Compare& comp, search_key<Key> key) {
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
};

// The bucket of hm_list and hm_hashmap, which compare as their read phases must
// (detail/read_phase_compare.hpp).
template <class Key, class Value, scheme Scheme, class Compare, hm_search Search>
using hm_read_phase_bucket =
    hm_bucket<Key, Value, Scheme, read_phase_compare<Compare, Scheme>, Search>;

}  // namespace reclaim::ds::detail
