// SPDX-License-Identifier: MIT
// lfrc: lock-free reference counting (Valois, PhD thesis 1995, with the correction of Michael and
// Scott, 1995), as paper 003 (Stamp-it, Pöter and Träff) compares it with the other schemes.
//
// What it is. Every node has a reference count in a header in front of it. A reader that follows
// a link increments the count of the node it read, then re-reads the link: if the link still
// holds the node, the node was reachable after the increment and cannot be reclaimed until the
// reader decrements (when it moves on, or its guard ends). Retiring a node sets a flag; the node
// is reclaimed (its destructor runs) as soon as it is retired and its count is zero, by whichever
// of the retirer and the last reader gets there: both try to move the count word from "retired,
// zero" to "retired, claimed" with one CAS, and one wins (Michael and Scott's correction of
// Valois, whose decrement-and-test let both reclaim). So garbage is freed at once: a retired node
// waits only for the threads that hold it, which makes lfrc the baseline of paper 003's
// reclamation-efficiency figures. References are held by threads only (a guard's slots, a
// guard_ptr); links do not count, so cycles do not matter.
//
// The price. A reader increments and decrements a shared counter on every node it visits: two
// RMWs on a line other readers of the same node write too, which makes lists slow (paper 003
// leaves LFRC out of its List figure). And a count must stay a count while any thread may still
// increment it through a stale pointer, so nodes live in type-stable memory: a reclaimed node's
// block goes to the domain's free list (detail/lfrc_memory.hpp), from which the domain's create()
// makes new nodes, and no block is ever returned to the system allocator (lfrc nodes declare
// their own operator new and delete, so `new node` and `delete node` work as usual). "LFRC is not
// a general reclamation scheme" (paper 003): memory freed is memory for nodes only.
//
// When to use it. When memory must be reclaimed promptly and a stalled thread must not hold more
// than what it references, and reads are few; the free list suits structures whose node sizes
// stay the same. Garbage is bounded: a thread holds at most its guards' slots and its guard_ptrs.
//
// Needs from a container: what hp needs (every dereferenced pointer protected and validated by
// re-reading its source, K >= the slots an operation uses), and nodes allocated one by one: a
// node a read may reach must have the header in front of it, so embedded sentinels cannot be
// read through lfrc (lazy_list, harris_list and dgt_bst say so at compile time). Nodes derive
// from lfrc<>::node_base with that base first (at offset 0; debug builds check at retire), and a
// deleter given to retire() must end with `delete node` (the memory goes back to the free list).
// Progress: protect() is lock-free (it retries while the source changes); release and retire are
// wait-free apart from the destructor of a node they reclaim.
// Out of memory: a retire takes its node and never throws (domain.retire() throws std::bad_alloc
// only before taking it, when the calling thread registers or a nested guard needs its level's
// first block of slots), and reclaiming a node, a thread's exit and a domain's destruction never
// allocate what they cannot do without: a free block goes to a stack of its size, made with a
// nothrow allocation, or failing that to the process's stack of that size, made when the size's
// first block was allocated (detail/lfrc_memory.hpp). Only create() and new may throw.
// Differences from the papers: Valois counts link references too and frees through the count
// alone; here a node's unlinking is told by retire(), as in paper 003's implementation, so links
// cost nothing and cycles cannot leak. The free list is per domain (each thread's cache, then the
// domain's stacks), backed by a process-wide one, instead of one global list.
#pragma once
#include <atomic>
#include <cassert>
#include <cstddef>
#include <new>
#include <string_view>
#include <type_traits>
#include <utility>

#include "../concepts.hpp"
#include "../core/domain.hpp"
#include "../core/guard_base.hpp"
#include "../core/guard_slots.hpp"
#include "../core/marked_ptr.hpp"
#include "../core/policy.hpp"
#include "../core/slot_guard.hpp"
#include "../free/batch.hpp"
#include "../policies.hpp"
#include "detail/lfrc_memory.hpp"
#include "../core/sync.hpp"

namespace reclaim {

template <class... Policies>
struct lfrc : core::scheme_base<lfrc<Policies...>> {
  // Its one policy, as given in Policies... or by default: slots<K> (4), the nodes a guard counts
  // at once.
  static constexpr unsigned slot_count = core::policy_value<slots<4>, Policies...>;
  static_assert((core::known_kinds<slots_kind>::template contains<Policies> && ...),
                "lfrc takes slots<K>");

  // What it is (concepts.hpp): reference counting, whose garbage is bounded, which needs validated
  // reads and nodes allocated on their own (the count lives in a header in front of each).
  static constexpr std::string_view name = "lfrc";
  static constexpr reclaim::family family = reclaim::family::reference_counting;
  static constexpr bool bounds_garbage = true;  // what the threads hold, no more
  static constexpr unsigned needs = needs_validated_reads | needs_allocated_nodes;

  // The retire link, and the allocation functions that put every node in type-stable memory.
  struct node_base : core::retired_hook {
    static void* operator new(std::size_t size) { return detail::lfrc::allocate_node(size); }
    static void operator delete(void* node, std::size_t size) noexcept {
      detail::lfrc::deallocate_node(node, size);
    }
    // An over-aligned node cannot live behind a 16-byte header.
    static void* operator new(std::size_t, std::align_val_t) = delete;
  };
  struct slot_hooks;
  class domain;
  using guard = core::slot_guard<slot_hooks>;
  using protection = core::slot_protection<slot_hooks>;
};

namespace detail {
template <unsigned K>
struct lfrc_record : core::thread_record<batch_free> {
  // Owner only: the nodes the record's guards count, a block of K per nesting level, and those its
  // protections (guard_ptrs) count. A null slot counts nothing.
  core::slot_block<const void*, K> held;
  core::slot_pool<const void*, 8> owned;
  lfrc::block_cache cache;  // free blocks, by size

  void destroy_garbage() noexcept {}  // a retired node is reclaimed by its last release
};
}  // namespace detail

// One lfrc instance's shared state: the thread records with the nodes they count, and its free
// blocks (core/domain.hpp). default_domain() is the one containers use unless given another.
template <class... Policies>
class lfrc<Policies...>::domain
    : public core::domain_base<domain, detail::lfrc_record<slot_count>> {
  using record = detail::lfrc_record<slot_count>;
  using block = core::slot_block<const void*, slot_count>;
  using base = core::domain_base<domain, record>;
  using slot = core::atomic<const void*>;
  using header = detail::lfrc::block_header;

 public:
  // Its scheme's guard, and it offers synchronize() and barrier() (concepts.hpp's grace_periods).
  using guard_type = lfrc::guard;
  static constexpr bool grace_periods = true;
  using base::retire;  // domain.retire(node[, deleter]) from any thread

  // Every record's cache and the domain's stacks go to the process's stacks: the blocks stay
  // blocks (a stale pointer of another domain's thread may still count one).
  ~domain() {
    this->shutdown();
    auto& process = detail::lfrc::process_blocks();
    this->threads_.for_each([&](record& r) { r.cache.spill_all(process); });
    free_.take_all([&](std::size_t size, header* chain) {
      header* last = chain;
      while (header* n = last->next.load(std::memory_order_relaxed)) last = n;
      detail::lfrc::push_blocks(process, size, chain, last);
    });
  }

  // A node T(args...) in a block of this domain's free list (or a fresh one), from any thread.
  template <class T, class... Args>
  T* create(Args&&... args) {
    return make<T>(this->threads_.local(), std::forward<Args>(args)...);
  }

 private:
  friend struct lfrc::slot_hooks;
  template <class, class, class>
  friend struct core::slot_hooks_base;
  friend base;

  static constexpr std::uint64_t retired = detail::lfrc::retired, claimed = detail::lfrc::claimed,
                                 count_one = detail::lfrc::count_one;

  template <class P>
  static const void* node_of(P p) noexcept {
    if constexpr (std::is_pointer_v<P>)
      return p;
    else
      return p.get();  // a marked_ptr: the count is the node's, whatever the mark
  }
  static header* header_of(const void* node) noexcept { return detail::lfrc::header_of(node); }
  static core::retired_hook* hook_of(const void* node) noexcept {
    return static_cast<node_base*>(const_cast<void*>(node));  // node_base is at offset 0
  }

  template <class T, class... Args>
  T* make(record& r, Args&&... args) {
    static_assert(std::is_base_of_v<node_base, T>, "reclaim: lfrc nodes derive from node_base");
    const std::size_t size = detail::lfrc::size_class(sizeof(T));
    void* memory = r.cache.pop(size);
    if (!memory) memory = r.cache.adopt(size, free_.take(size), free_);
    if (!memory) memory = r.cache.adopt(size, detail::lfrc::process_blocks().take(size), free_);
    if (!memory) memory = detail::lfrc::fresh_block(size);
    try {
      return ::new (memory) T(std::forward<Args>(args)...);
    } catch (...) {
      r.cache.push(size, detail::lfrc::retire_block(memory, size), free_);
      throw;
    }
  }

  // The node src holds, counted in `held` (which may count another: it is released after), once a
  // re-read of src after the increment still finds it.
  template <class P>
  P acquire(record& r, slot& held, const core::atomic<P>& src, std::memory_order order) {
    // `order` (acquire for guards): pairs with the release store or CAS that published the node.
    P p = src.load(order);
    for (;;) {
      const void* node = node_of(p);
      if (node == held.load(std::memory_order_relaxed)) return p;  // counted already
      if (node) count(node);
      // After the fence that follows the increment (count()): with the retirer's fence
      // (retire()), either the retirer sees our count or we see its unlink here
      // (store-buffering). seq_cst: a plain load on x86.
      const P again = src.load(std::memory_order_seq_cst);
      if (again == p || RECLAIM_MUTATED(lfrc_no_validation)) {
        replace(r, held, node);
        return p;
      }
      if (node) release(r, node);
      p = again;
    }
  }

  // The same, but only if src holds `expected`: `held` counts it then; otherwise it counts what
  // it counted before. Returns what src holds. Never loops.
  template <class P>
  P try_acquire(record& r, slot& held, const P& expected, const core::atomic<P>& src,
                std::memory_order order) {
    const void* node = node_of(expected);
    const bool counted = node != held.load(std::memory_order_relaxed) && node;
    if (counted) count(node);
    const P now = src.load(node ? std::memory_order_seq_cst : order);  // seq_cst: as acquire()
    if (now == expected)
      replace(r, held, node);
    else if (counted)
      release(r, node);
    return now;
  }

  // The increment, then a full fence before the validating re-read (acquire()): the locked RMW
  // itself on x86-64, a fence elsewhere (core::fence_after_rmw()). Against the retirer's fence F
  // (retire()): if ours comes first in S, the retirer's RMW on the count sees our increment; if F
  // does, our re-read sees the unlink. Likewise against synchronize()'s fence, for the operation's
  // depth stored before (core/domain.hpp, wait_for_open_guards()). The increment needs no order
  // of its own: it was seq_cst, which in C++ orders nothing else (the grace model found the depth
  // unordered: docs/verification.md), and with the fence relaxed is enough.
  static void count(const void* node) noexcept {
    header_of(node)->refs.fetch_add(count_one, std::memory_order_relaxed);
    core::fence_after_rmw();
  }

  // `held` counts `node` from now on (whose count was taken); what it counted before is released.
  void replace(record& r, slot& held, const void* node) noexcept {
    const void* old = held.load(std::memory_order_relaxed);
    if (old == node) return;
    held.store(node, std::memory_order_relaxed);
    if (old) release(r, old);
  }

  // Drops a count; if that was the last one of a retired node, reclaims it (with the CAS that
  // the retirer may also try).
  void release(record& r, const void* node) noexcept {
    header* h = header_of(node);
    // release: our reads of the node happen before its reclamation (the claimer's acquire CAS
    // reads this RMW's release sequence).
    const std::uint64_t was = h->refs.fetch_sub(
        count_one, RECLAIM_MUTATED(lfrc_release_relaxed) ? std::memory_order_relaxed
                                                         : std::memory_order_release);
    if (was == count_one + retired) claim_and_reclaim(r, h, node);
  }

  void retire(record& r, core::retired_hook* hook) noexcept {
    header* h = header_of(hook);
    assert(h->next.load(std::memory_order_relaxed) == detail::lfrc::live_mark &&
           "reclaim: lfrc: retiring something that is not a live lfrc node (node_base must be "
           "the node's first base, and the node made by new or create())");
    // Full fence: pairs with the fence after a reader's increment (count()): either our RMW
    // below sees the reader's count, or the reader's re-read sees the unlink that came before
    // (store-buffering; the unlink itself need not be seq_cst).
    core::thread_fence(std::memory_order_seq_cst);
    // acq_rel: the release publishes the node's deleter (set by retire's caller) to the claimer.
    const std::uint64_t was = h->refs.fetch_or(retired, std::memory_order_acq_rel);
    assert(!(was & retired) && "reclaim: node retired twice");
    r.count_retired(this->gauge_);
    if (was < count_one) claim_and_reclaim(r, h, hook);
  }

  void claim_and_reclaim(record& r, header* h, const void* node) noexcept {
    std::uint64_t expected = retired;
    // acquire: pairs with every holder's release decrement and with the retirer's fetch_or: they
    // happen before the destructor.
    if (!h->refs.compare_exchange_strong(expected, retired | claimed, std::memory_order_acquire,
                                         std::memory_order_relaxed))
      return;  // a stale reader counted it meanwhile: its release reclaims it
    core::retired_hook* hook = hook_of(node);
    {
      core::sampled_timer timer(r.ctr.free_ns, r.ctr.frees_untimed);
      // The node's operator delete, inside its deleter, puts the block in our cache.
      detail::lfrc::reclaiming_into = {&r.cache, &free_};
      hook->destroy(hook);
      detail::lfrc::reclaiming_into = {};
    }
    r.count_freed(1);
  }

  // A guard opens on r: its block of slots (the record's, or when nested the block of its level,
  // allocated the first time a thread nests that deep).
  block& open(record& r) {
    const unsigned level = r.enter();
    if (level == 0) [[likely]]
      return r.held;
    try {
      return r.held.at(level, [] {});
    } catch (...) {
      r.leave();
      throw;
    }
  }
  void close(record& r, block& b) noexcept {
    for (slot& s : b.slots) replace(r, s, nullptr);
    r.leave();
  }

  // An operation here is an outermost guard, or a guard_ptr holding a node (which counts as one:
  // protection). A node retired before the call is held only by operations that began before it
  // (a later one cannot reach it: its validating re-read follows the unlink), so once those have
  // ended every such node has been reclaimed: barrier() is synchronize().
  bool wait_for_grace_period(record&, core::deadline d) const {
    return this->wait_for_open_guards(d);
  }
  bool barrier_locked(record&, core::deadline d) const { return this->wait_for_open_guards(d); }
  static void take_garbage(record&, typename base::gathered&) noexcept {}
  void flush_local(record&) noexcept {}  // nothing waits: a node is reclaimed by its last release

  // Thread exit (possibly inside guards, or with guard_ptrs leaked): every count it holds is
  // released (reclaiming what it held last), and its free blocks go to the domain's stacks.
  void on_thread_exit(record& r) noexcept {
    r.held.for_each_owned([&](block& b) {
      for (slot& s : b.slots) replace(r, s, nullptr);
    });
    r.owned.for_each_owned([&](auto& b) {
      for (slot& s : b.slots) replace(r, s, nullptr);
    });
    r.cache.spill_all(free_);
  }

  detail::lfrc::block_stacks free_;  // the domain's free list beyond its records' caches
};

// lfrc's part of its guard and of its owned protection (lfrc::protection, what a
// reclaim::guard_ptr holds; core/slot_guard.hpp): a slot counts the node it holds. A protection's
// slot comes from the thread's pool on the first acquire and goes back when it is destroyed; while
// it counts a node, the thread is inside an operation (its record's depth), so that synchronize()
// and barrier() wait for it. A region's guard lends its slots first; a lent slot's count is
// released when its protection ends (the region's guard would release it only when it ends).
template <class... Policies>
struct lfrc<Policies...>::slot_hooks
    : core::slot_hooks_base<lfrc, typename domain::block, typename domain::slot> {
  using base = typename slot_hooks::slot_hooks_base;
  using typename base::record, typename base::slot;
  static constexpr core::slot_hold holds = core::slot_hold::while_counting;
  static constexpr bool clears_lent_slot = true;

  // Counts the node src holds in the slot, once a re-read of src shows it still there (the domain's
  // acquire()); try_protect() only if src holds `expected`, without looping.
  template <class P>
  static P protect(domain& d, record& r, slot& held, const core::atomic<P>& src,
                   std::memory_order order) {
    return d.acquire(r, held, src, order);
  }
  template <class P>
  static P try_protect(domain& d, record& r, slot& held, const P& expected,
                       const core::atomic<P>& src, std::memory_order order) {
    return d.try_acquire(r, held, expected, src, order);
  }
  // From the domain's free list.
  template <class T, class... Args>
  static T* create(domain& d, record& r, Args&&... args) {
    return d.template make<T>(r, std::forward<Args>(args)...);
  }

  // A protection's own slot, from the record's pool.
  static slot& take(domain&, record& r) { return r.owned.take([] {}); }
  // Out of line: a protection's destructor then inlines into the operation that made it.
  [[gnu::noinline]] static void give_back(domain& d, record& r, slot& held) noexcept {
    d.replace(r, held, nullptr);
    r.owned.give_back(held);
  }
  static void clear(domain& d, record& r, slot& held) noexcept { d.replace(r, held, nullptr); }
  static void activate(domain&, record& r) noexcept { (void)r.enter(); }
  static void deactivate(record& r) noexcept { (void)r.leave(); }

  // Never throws.
  static void retire(domain& d, record& r, core::retired_hook* node) noexcept {
    d.retire(r, node);
  }
};

}  // namespace reclaim
