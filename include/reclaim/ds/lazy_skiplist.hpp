// SPDX-License-Identifier: MIT
// lazy_skiplist: the optimistic skiplist of Herlihy, Lev, Luchangco and Shavit ("A simple
// optimistic skiplist algorithm", SIROCCO 2007).
//
// What it is. A sorted skiplist: every node has a tower of links, one per level it is linked at,
// and a search goes down from the highest level, moving right while the next key is smaller. Each
// node has a lock, a `marked` flag (logically deleted) and a `fully_linked` flag (linked at every
// level of its tower). A key is in the set when a fully linked, unmarked node holds it. Searches
// take no locks. insert searches once, locks the predecessor on every level of the new tower
// (bottom up, each node once), validates that each is unmarked and still followed by a node whose
// key is above the new one, links the new node bottom up and sets fully_linked. erase locks the
// node, marks it, locks its predecessors, validates that each still points to it and unlinks it
// top down, then retires it. Node heights are random: P(height >= k) = 4^-(k-1), at most
// MaxHeight (12 by default: expected O(log n) searches up to about 16M keys).
//
// Reclamation. With pointer schemes (guard::validates) a search protects each node it moves to and
// then checks that the node it came from is unmarked: an unmarked node is linked at every level it
// was reached on (nodes are marked before they are unlinked), so the protected node was still
// linked, hence not retired, when the protection was confirmed. A marked predecessor sends the
// search back to the head, as Dice et al. (paper 004) do; contains() is then lock-free rather
// than wait-free. Epoch schemes skip that check and keep the original wait-free search.
// An update keeps its predecessors protected until it has locked them: under hp each one holds a
// hazard slot until the guard ends (a slot per level of the tower, plus the node being looked at,
// the one before it and the node that ended the level above: slots_used = MaxHeight + 2, which
// hp<> with its 4 slots does not have). Successors need no
// protection: validation reads each one again from its locked, unmarked predecessor, and a node
// linked there cannot be unlinked, hence not retired, while that lock is held. (The original
// compares with the successor found by the search instead, which under manual reclamation could
// be a new node at a freed node's address: comparing keys instead needs no such assumption.)
//
// Phases (NBR, paper 000 section 5.2). Each search is a read phase from the head; the write phase
// reserves the predecessors the update will lock (and the node an erase unlinks): up to
// MaxHeight + 1 reservations, more than nbr<>'s 8. An erase
// that finds its predecessors changed after marking its node searches again, keeping the node's
// lock across that read phase: no one else can retire a node we marked, and the lock is released
// by hand, not by an object a restart would skip. A map's visit() reserves the node before f.
//
// Sizing. The skiplist runs on its scheme sized for it (schemes/sized_for.hpp): hp<>,
// crystalline_w<> and the other slot schemes with slots<MaxHeight + 2>, nbr<> and nbr_plus<> with
// slots<MaxHeight + 1>, every other scheme as it is; so lazy_skiplist<Key, hp<>> works as
// written, and switching schemes stays one template argument. Its domain_type is the sized
// scheme's domain (hp<reclaim::slots<14>>::domain for hp<>): the default constructor takes that
// scheme's default domain, and a domain of the unsized scheme is refused by a static_assert that
// says what to pass.
//
// Keys and values. `lazy_skiplist<Key, Scheme, Compare>` is a set, `lazy_skiplist_map<Key, Value,
// Scheme, Compare>` a map (detail/container_api.hpp). The head is a link-only tower inside the
// skiplist object, and a level ends at a null link: no sentinel holds a key. A node is allocated
// as a tower of exactly its height (tower<H>, through the scheme's create()) and retired as one.
//
// Progress: contains() is wait-free under epoch schemes and NBR (apart from its restarts),
// lock-free under pointer schemes; insert and erase are lock-based and retry optimistically; an
// insert that finds its key being inserted waits until that node is fully linked, and one that
// finds it being erased waits for the eraser's lock (the original searches again at once).
// Differences from the paper: validation compares keys, not successor pointers (above); a search
// skips a level's first node when it is the node that ended the level above (its key is known),
// which under hp saves a protection per level; searches for updates stop at the highest level that
// holds the key (an insert that finds it needs no predecessors, an erase needs them only below).
#pragma once
#include <atomic>
#include <bit>
#include <cassert>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>

#include "../concepts.hpp"
#include "../read_phase.hpp"
#include "../schemes/sized_for.hpp"
#include "detail/container_api.hpp"
#include "detail/lifetime_check.hpp"
#include "detail/lookup_api.hpp"
#include "detail/spinlock.hpp"
#include "../core/sync.hpp"

namespace reclaim::ds {
namespace detail {

// The scheme a skiplist of MaxHeight levels runs on: Scheme with the slots_used and
// reservations_used below where its defaults hold fewer (sized_for, with the counts spelled out:
// the class cannot name itself complete in its own base clause).
template <class Scheme, unsigned MaxHeight>
using skiplist_scheme = sized_to<Scheme, MaxHeight + 2, MaxHeight + 1>;

}  // namespace detail

// The lazy skiplist of Herlihy, Lev, Luchangco and Shavit, towers of up to MaxHeight levels, a set
// (Value = void) or a map ordered by Compare, on Scheme sized for it (sized_for): used as
// lazy_skiplist and lazy_skiplist_map (below).
template <class Key, class Value, scheme Scheme, class Compare = std::less<Key>,
          unsigned MaxHeight = 12>
class basic_lazy_skiplist
    : public detail::lookup_api<basic_lazy_skiplist<Key, Value, Scheme, Compare, MaxHeight>,
                                Key, Value, detail::skiplist_scheme<Scheme, MaxHeight>, Compare> {
  using api = detail::lookup_api<basic_lazy_skiplist, Key, Value,
                                 detail::skiplist_scheme<Scheme, MaxHeight>, Compare>;
  friend api;
  friend typename api::container;
  using api::domain_, api::life_, api::comp_;
  static_assert(MaxHeight >= 1 && MaxHeight <= 30, "a tower has 1 to 30 levels");

 public:
  // Its name in the lab and in messages.
  static constexpr std::string_view name = api::is_map ? "lazy_skiplist_map" : "lazy_skiplist";
  // scheme_type is Scheme sized for the skiplist, domain_type its domain.
  using typename api::scheme_type, typename api::domain_type, typename api::guard_type;
  static constexpr unsigned max_height = MaxHeight;
  // Hazard slots at once: a predecessor per level of the tower (the last one is the node before
  // the key on level 0), the node being looked at, and the node that ended the level above.
  static constexpr unsigned slots_used = MaxHeight + 2;
  // Reservations of an erase's write phase: its node and a predecessor per level.
  static constexpr unsigned reservations_used = MaxHeight + 1;

  // Validated reads: a search restarts when the predecessor is marked. Restartable read phases:
  // every search is one, from the head.
  static constexpr support offers(needs) { return {true}; }

  explicit basic_lazy_skiplist(domain_type& domain = scheme_type::default_domain(),
                               const Compare& comp = Compare())
      : api(domain, comp) {
    // The base clause's counts are slots_used and reservations_used.
    static_assert(std::same_as<scheme_type, sized_for<Scheme, basic_lazy_skiplist>>);
    // Only a scheme that sized_for cannot size (one of the user's own, without slots<K>) fails.
    static_assert(has_slots<scheme_type, basic_lazy_skiplist>() && has_reservations(),
                  "lazy_skiplist and lazy_skiplist_map protect up to MaxHeight + 2 nodes at once "
                  "and reserve up to MaxHeight + 1, and reclaim::sized_for could not give this "
                  "scheme that many: give it the slots itself (slots<14> and slots<13> for the "
                  "default MaxHeight of 12)");
  }
  // A domain of another scheme than scheme_type, such as the unsized scheme's (hp<>::domain where
  // the skiplist runs on hp<reclaim::slots<14>>): one error that says what to pass, rather than
  // a list of constructors that do not match. Derived domains still take the constructor above.
  template <class Domain>
    requires(!std::is_convertible_v<Domain&, domain_type&> &&
             !std::is_base_of_v<basic_lazy_skiplist, std::remove_cv_t<Domain>>)
  explicit basic_lazy_skiplist(Domain&, const Compare& comp = Compare())
      : basic_lazy_skiplist(scheme_type::default_domain(), comp) {
    static_assert(std::is_same_v<Domain, domain_type>,
                  "lazy_skiplist runs on its scheme sized for it (reclaim::sized_for<Scheme, "
                  "lazy_skiplist<...>>: hp<> and crystalline_w<> with slots<14>, nbr<> and "
                  "nbr_plus<> with slots<13>), so it takes that scheme's domain: pass a "
                  "decltype(container)::domain_type (for example "
                  "reclaim::hp<reclaim::slots<14>>::domain under hp<>), or no domain for that "
                  "scheme's default one");
  }
  // Quiescent: frees the nodes left (retired ones are the domain's).
  ~basic_lazy_skiplist() {
    life_.before_destruction(domain_);
    for (link_node* n = head_.links[0].load(std::memory_order_relaxed); n;) {
      link_node* next = n->next[0].load(std::memory_order_relaxed);
      destroy(as_node(n));
      n = next;
    }
  }

  // Removes key (and its value): marks its node under its lock, then unlinks it from every level
  // under its predecessors' locks and retires it. Returns whether it was present.
  bool erase(const Key& key) {
    detail::lifetime_check::operation op(life_);
    guard_type g(domain_);
    node* victim = nullptr;  // once set: locked and marked by us, so no one else retires it
    position p;
    for (;;) {
      RECLAIM_READ_PHASE(g);
      // false: the node found left a level below its top while we went down, so it is being
      // erased. Never for our victim, which stays linked on every level until we unlink it.
      const bool linked = search<mode::erase>(g, key, 0, p);
      if (!victim) {
        node* found = p.found;
        // Only a fully linked node found at its top level may be erased (the original's
        // okToDelete); one still being inserted is not in the set yet.
        if (!linked || !found || !found->fully_linked.load(std::memory_order_acquire) ||
            found->height != p.found_level + 1 || found->marked.load(std::memory_order_acquire))
          return false;
        reserve(g, p.preds, found->height, found);
        found->lock.lock();
        if (found->marked.load(std::memory_order_relaxed)) {  // erased since we looked
          found->lock.unlock();
          return false;
        }
        // release: a search that sees the mark sees the node's last links; pairs with the acquire
        // loads in search() and present().
        found->marked.store(true, std::memory_order_release);
        victim = found;
      } else {
        assert(linked && p.found == victim);
        reserve(g, p.preds, victim->height, victim);
      }
      const unsigned height = victim->height;
      {
        pred_locks locks(p.preds, height);
        if (!preds_point_to(p.preds, height, victim)) continue;  // search again, victim locked
        // Top down: while a level is being unlinked, the levels below still lead to the node.
        for (unsigned level = height; level-- > 0;) {
          link_node* succ = victim->next[level].load(std::memory_order_relaxed);
          // release: a search that follows the new link sees succ's fields; pairs with protect().
          p.preds[level]->next[level].store(succ, std::memory_order_release);
        }
      }
      victim->lock.unlock();
      retire(g, victim);  // as its tower: its deleter destroys the key and value
      return this->erased();
    }
  }

  // Quiescent (unsafe_size(), unsafe_for_each() and unsafe_key_sum() come from container_api): on
  // every level keys strictly increase, every node is unmarked and fully linked and reached only on
  // levels of its tower, and the nodes of each level are exactly those of the level below whose
  // tower reaches it.
  bool unsafe_well_formed() const {
    std::size_t count[MaxHeight] = {};
    for (const link_node* n = first(0); n; n = n->next[0].load(std::memory_order_acquire)) {
      if (n->height < 1 || n->height > MaxHeight || n->marked.load(std::memory_order_relaxed) ||
          !n->fully_linked.load(std::memory_order_relaxed))
        return false;
      for (unsigned level = 0; level < n->height; ++level) ++count[level];
    }
    for (unsigned level = 0; level < MaxHeight; ++level) {
      std::size_t seen = 0;
      const link_node* below = level > 0 ? first(level - 1) : nullptr;
      const node* last = nullptr;
      for (const link_node* n = first(level); n;
           n = n->next[level].load(std::memory_order_acquire)) {
        if (n->height <= level || (last && !comp_(last->key, as_node(n)->key))) return false;
        if (level > 0) {  // n is on the level below, at or after where that walk stands
          while (below && below != n)
            below = below->next[level - 1].load(std::memory_order_acquire);
          if (!below) return false;
        }
        last = as_node(n);
        ++seen;
      }
      if (seen != count[level]) return false;
    }
    return true;
  }

 private:
  // Whether the guard reserves reservations_used nodes in a write phase (only nbr's reserve).
  static constexpr bool has_reservations() {
    if constexpr (neutralizable_guard<guard_type>)
      return guard_type::reservation_count >= reservations_used;
    else
      return true;
  }
  // What every node has, the head included: a tower of links, the flags and the lock. `next`
  // points at the links, which follow the node in its tower.
  struct link_node : scheme_type::node_base {
    link_node(core::atomic<link_node*>* links, unsigned h)
        : next(links), height(static_cast<std::uint8_t>(h)) {}
    core::atomic<link_node*>* const next;
    const std::uint8_t height;
    core::atomic<bool> marked{false};
    core::atomic<bool> fully_linked{false};
    detail::spinlock lock;
  };
  struct node : link_node, detail::element<Key, Value> {
    template <class... KV>
    node(core::atomic<link_node*>* links, unsigned h, KV&&... kv)
        : link_node(links, h), detail::element<Key, Value>(std::forward<KV>(kv)...) {}
  };
  // A node of height H, allocated, retired and freed as this most derived type.
  template <unsigned H>
  struct tower final : node {
    template <class... KV>
    explicit tower(KV&&... kv) : node(links, H, std::forward<KV>(kv)...) {}
    core::atomic<link_node*> links[H] = {};
  };
  struct head_tower : link_node {
    head_tower() : link_node(links, MaxHeight) {}
    core::atomic<link_node*> links[MaxHeight] = {};
  };

  static node* as_node(link_node* n) noexcept { return static_cast<node*>(n); }
  static const node* as_node(const link_node* n) noexcept { return static_cast<const node*>(n); }

  // Calls f(std::integral_constant<unsigned, H>) for the node's height H.
  template <class F>
  static decltype(auto) with_height(unsigned height, F&& f) {
    return [&]<unsigned... I>(std::integer_sequence<unsigned, I...>) {
      using result = decltype(f(std::integral_constant<unsigned, 1>{}));
      if constexpr (std::is_void_v<result>) {
        (void)((height == I + 1 ? (f(std::integral_constant<unsigned, I + 1>{}), true) : false) ||
               ...);
      } else {
        result r{};
        (void)((height == I + 1 ? (r = f(std::integral_constant<unsigned, I + 1>{}), true)
                                : false) ||
               ...);
        return r;
      }
    }(std::make_integer_sequence<unsigned, MaxHeight>{});
  }
  static void destroy(node* n) {
    with_height(n->height, [n](auto h) { delete static_cast<tower<decltype(h)::value>*>(n); });
  }
  static void retire(guard_type& g, node* n) {
    with_height(n->height, [&](auto h) { g.retire(static_cast<tower<decltype(h)::value>*>(n)); });
  }

  // A random height: P(height >= k) = 4^-(k-1) (two more zero bits of a per-thread xorshift
  // stream per level), at most MaxHeight.
  static unsigned random_height() noexcept {
    // Seeded from the variable's own address, which differs between threads.
    thread_local std::uint64_t state =
        (reinterpret_cast<std::uintptr_t>(&state) | 1) * 0x9E3779B97F4A7C15ull;
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    const unsigned zeros = static_cast<unsigned>(std::countr_zero(state | (1ull << 62)));
    return std::min(MaxHeight, 1 + zeros / 2);
  }

  // Whether n's key is in the set: its insert completed and no erase marked it.
  static bool present(const node* n) {
    // acquire: pairs with the release stores of fully_linked in emplace() and marked in erase().
    return n->fully_linked.load(std::memory_order_acquire) &&
           !n->marked.load(std::memory_order_acquire);
  }
  // lookup_api's hooks: the node holding key, present, found in the read phase g holds, or
  // nullptr.
  [[gnu::always_inline]] node* lookup(guard_type& g, const Key& key) {
    position p;
    search<mode::lookup>(g, key, 0, p);
    return p.found && present(p.found) ? p.found : nullptr;
  }
  static const auto& value_of(const node* n) noexcept { return n->value; }

  enum class mode {
    lookup,  // stop where the key is first found; keep no predecessors
    insert,  // stop where the key is first found; keep the predecessors of the new tower
    erase,   // go down to level 0 past the key's node; keep the predecessors from its top level
  };

  // Where a search ended.
  struct position {
    // For the levels whose predecessors the search kept (an insert's new tower, an erase's node's
    // tower): the last node before the key (the head or a node), protected until the guard ends.
    link_node* preds[MaxHeight];
    node* found;  // the node holding the key on the highest level that has it, protected
    unsigned found_level;
  };
  static_assert(restart_safe<position>);

  // The guard's hazard slots as the search hands them out (only validating guards use them).
  struct slot_set {
    static constexpr unsigned none = ~0u;
    std::uint64_t free = (std::uint64_t{1} << slots_used) - 1;
    unsigned take() noexcept {
      const unsigned s = static_cast<unsigned>(std::countr_zero(free));
      free &= free - 1;
      return s;
    }
    void give(unsigned s) noexcept {
      if (s != none) free |= std::uint64_t{1} << s;
    }
  };

  // Searches for key from the top level down; `height` is an insert's new tower height. Returns
  // false only for an erase whose node left a level below its top while the search went down:
  // that node is being erased.
  template <mode Mode>
  bool search(guard_type& g, detail::search_key<Key> key, unsigned height, position& p) {
    constexpr bool validates = guard_type::validates;
    for (;;) {  // a restart begins here, at the head
      slot_set slots;
      link_node* pred = &head_;
      unsigned pred_slot = slot_set::none;  // the head needs no protection
      bool pred_kept = true;
      link_node* above = nullptr;  // where the level above stopped: its key is not below `key`
      unsigned above_slot = slot_set::none;
      p.found = nullptr;
      bool restart = false;
      for (unsigned level = MaxHeight; level-- > 0;) {
        link_node* curr;
        unsigned curr_slot = slot_set::none;
        for (;;) {
          // Only a node not seen yet is protected: null ends the level, and `above` is known.
          curr = pred->next[level].load(validates ? std::memory_order_relaxed
                                                  : std::memory_order_acquire);
          if (curr == nullptr || curr == above) break;
          if constexpr (validates) {
            curr_slot = slots.take();
            curr = g.protect(pred->next[level], curr_slot);
            if (pred != &head_ && pred->marked.load(std::memory_order_acquire)) {
              restart = true;  // curr may already be unlinked: start over from the head
              break;
            }
            if (curr == nullptr || curr == above) {
              slots.give(curr_slot);
              curr_slot = slot_set::none;
              break;
            }
          }
          if (!comp_(as_node(curr)->key, key)) break;
          if (!pred_kept) slots.give(pred_slot);
          pred = curr;
          pred_slot = curr_slot;
          pred_kept = false;
        }
        if (restart) break;
        if (curr != above) {  // a new node ended this level
          const bool equal = curr && !comp_(key, as_node(curr)->key);
          if (equal) {
            p.found = as_node(curr);  // protected in curr_slot, which nothing takes any more
            p.found_level = level;
            // An erase goes on down: it needs the predecessors from here, and the node stays
            // `above` on every level below.
            if constexpr (Mode != mode::erase) return true;
          } else if (p.found) {
            return false;  // the erase's node is not on this level any more: it is being erased
          }
          slots.give(above_slot);
          above = curr;
          above_slot = curr_slot;
        }
        if constexpr (Mode != mode::lookup) {
          // An insert keeps the levels of its new tower, an erase those of the node it found.
          if (Mode == mode::insert ? level < height : p.found != nullptr) {
            p.preds[level] = pred;
            pred_kept = true;
          }
        }
      }
      if (!restart) return true;
    }
  }

  // Reserves, for NBR's write phase, the predecessors on `height` levels and `extra` (write_phase
  // takes its nodes as a pack, so the pack is picked by the height).
  static void reserve(guard_type& g, link_node* const* preds, unsigned height, node* extra) {
    if constexpr (neutralizable_guard<guard_type>) {
      with_height(height, [&](auto h) {
        [&]<unsigned... I>(std::integer_sequence<unsigned, I...>) {
          g.write_phase(static_cast<link_node*>(extra), preds[I]...);
        }(std::make_integer_sequence<unsigned, decltype(h)::value>{});
      });
    }
  }

  // The predecessors' locks on `height` levels, taken from level 0 up, each node once (nodes are
  // locked in decreasing key order by every operation: an erase locks its node first).
  class pred_locks {
   public:
    pred_locks(link_node* const* preds, unsigned height) noexcept : preds_(preds), height_(height) {
      for (unsigned level = 0; level < height_; ++level)
        if (level == 0 || preds_[level] != preds_[level - 1]) preds_[level]->lock.lock();
    }
    ~pred_locks() {
      for (unsigned level = 0; level < height_; ++level)
        if (level == 0 || preds_[level] != preds_[level - 1]) preds_[level]->lock.unlock();
    }
    pred_locks(const pred_locks&) = delete;
    pred_locks& operator=(const pred_locks&) = delete;

   private:
    link_node* const* preds_;
    unsigned height_;
  };

  // Under the predecessors' locks: each is unmarked and links to `victim` on its level.
  static bool preds_point_to(link_node* const* preds, unsigned height, const node* victim) {
    for (unsigned level = 0; level < height; ++level)
      if (preds[level]->marked.load(std::memory_order_relaxed) ||
          preds[level]->next[level].load(std::memory_order_relaxed) != victim)
        return false;
    return true;
  }

  template <class K, class... V>
  bool emplace(K&& key, V&&... value) {
    detail::lifetime_check::operation op(life_);
    guard_type g(domain_);
    const unsigned height = random_height();
    position p;
    link_node* succs[MaxHeight];
    for (;;) {
      RECLAIM_READ_PHASE(g);
      search<mode::insert>(g, key, height, p);
      if (node* found = p.found) {
        if (found->marked.load(std::memory_order_acquire)) {
          // Being erased: its eraser holds its lock until it has unlinked it. Wait for that lock
          // (which yields the processor, so a descheduled eraser gets to finish: searching again
          // at once kept 64 threads on 2 cores busy for seconds), outside the read phase, then
          // search again. acquire/release: the spinlock's, pairing with erase()'s unlock.
          g.write_phase(found);
          found->lock.lock();
          found->lock.unlock();
          continue;
        }
        // Present, or being inserted: its insert completes before we answer (the original's
        // wait), outside the read phase, since waiting may yield the processor.
        g.write_phase(found);
        for (unsigned spins = 0; !found->fully_linked.load(std::memory_order_acquire); ++spins) {
          if (spins < 64)
            RECLAIM_CPU_RELAX();
          else
            core::yield_now();
        }
        return false;
      }
      reserve(g, p.preds, height, nullptr);
      pred_locks locks(p.preds, height);
      if (!valid_position(p.preds, height, key, succs)) continue;
      // The key and value are copied (or moved) here, in the write phase, once: we return next.
      node* fresh = with_height(height, [&](auto h) -> node* {
        return g.template create<tower<decltype(h)::value>>(std::forward<K>(key),
                                                             std::forward<V>(value)...);
      });
      for (unsigned level = 0; level < height; ++level)
        fresh->next[level].store(succs[level], std::memory_order_relaxed);
      for (unsigned level = 0; level < height; ++level) {
        // release: publishes the new node's fields and links; pairs with the acquire in search().
        p.preds[level]->next[level].store(fresh, std::memory_order_release);
      }
      // release: the node is in the set from here; pairs with the acquire in present().
      fresh->fully_linked.store(true, std::memory_order_release);
      return true;
    }
  }

  // Under the predecessors' locks: on every level the predecessor is unmarked and its successor
  // (stored in succs) is null or an unmarked node with a key above `key`. The successor is read
  // from the locked predecessor, so it cannot be unlinked, nor retired, while we look at it.
  bool valid_position(link_node* const* preds, unsigned height, const Key& key,
                      link_node** succs) const {
    for (unsigned level = 0; level < height; ++level) {
      if (preds[level]->marked.load(std::memory_order_relaxed)) return false;
      link_node* succ = preds[level]->next[level].load(std::memory_order_relaxed);
      if (succ && (succ->marked.load(std::memory_order_acquire) ||
                   !comp_(key, as_node(succ)->key)))
        return false;
      succs[level] = succ;
    }
    return true;
  }

  const link_node* first(unsigned level) const {
    return head_.links[level].load(std::memory_order_acquire);
  }

  template <class F>
  void for_each_element(F f) const {
    for (const link_node* n = first(0); n; n = n->next[0].load(std::memory_order_acquire))
      f(*as_node(n));
  }

  head_tower head_;
};

// A set of keys ordered by Compare, on Scheme sized for it.
template <class Key, scheme Scheme, class Compare = std::less<Key>, unsigned MaxHeight = 12>
using lazy_skiplist = basic_lazy_skiplist<Key, void, Scheme, Compare, MaxHeight>;
// A map from keys ordered by Compare to values fixed at insertion, on Scheme sized for it.
template <class Key, class Value, scheme Scheme, class Compare = std::less<Key>,
          unsigned MaxHeight = 12>
using lazy_skiplist_map = basic_lazy_skiplist<Key, Value, Scheme, Compare, MaxHeight>;

}  // namespace reclaim::ds
