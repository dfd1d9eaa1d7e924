// SPDX-License-Identifier: MIT
// LLX and SCX: load-link and store-conditional over several nodes (Brown, Ellen, Ruppert, PODC
// 2013), with Brown's weak descriptors (DISC 2017): one reusable descriptor per thread instead of
// one allocated per SCX, so that descriptors need no reclamation at all.
//
// What it gives a lock-free tree. LLX(r) returns a snapshot of node r (here: a tag that says which
// SCX last froze r; the caller then reads r's mutable fields, which cannot change without r's tag
// changing) or says that r is finalized (removed for good), or that an SCX is under way on r.
// SCX(V, R, field, old, new) atomically, relative to every other SCX: checks that no node of V
// changed since this thread's LLX of it, marks the nodes of R finalized, and changes one field of a
// node of V from old to new. It freezes the nodes of V one by one (a CAS of each node's `info` from
// the tag its LLX saw to this SCX's tag); anyone who meets a frozen node helps the SCX to its end,
// so that a thread stalled in the middle of an SCX blocks no one (lock-free).
//
// Weak descriptors. A node's `info` holds a tag: a thread index (16 bits) and that thread's SCX
// sequence number (48 bits). Each thread owns one descriptor per llx_scx object, indexed by its
// thread index, and rewrites it for its next SCX: the sequence number is even while the owner fills
// the fields in, odd (and named by the tags) once the SCX is published. A helper copies the fields
// and keeps the copy only if the sequence number did not move (a seqlock): a descriptor that moved
// on belongs to a finished SCX, whose outcome LLX no longer needs, since a node that SCX finalized
// is marked. State changes (committed, aborted, all frozen) are CASes on the word that holds the
// sequence number, so a helper's late write to a reused descriptor fails. Sequence numbers do not
// repeat before 2^47 SCXs of one thread index, which no helper sleeps through; so a tag never comes
// back to a node, and the freezing CAS has no ABA.
//
// Thread indices are process-wide small integers (core::thread_registry records, reused after a
// thread exits), so that a tag fits a word with a sequence number that does not wrap; at most 65536
// threads may run SCXs at once (an SCX beyond that throws std::length_error).
//
// What a container must do (and the reasons reclamation stays safe):
//   - list V top-down: every node of V after the first is a child of an earlier one. A helper then
//     touches node i only after it saw nodes 0..i-1 frozen for this SCX, when node i cannot have
//     been removed (its parent was frozen), so every node a helper touches was unremoved while the
//     SCX was under way: epoch schemes protect it for as long as the helper's operation lasts.
//   - retire the nodes an SCX removed only after it committed, and never reinstall a node: `old`
//     then cannot come back to `field` while a late helper still holds it (no ABA on the field).
//   - under neutralization (nbr), help in a write phase that reserves what help() dereferences:
//     plan() reads the descriptor in the read phase (it is never freed), the write phase reserves
//     plan.nodes and plan.expected, and help() checks after the reservations are published that the
//     SCX is still under way; only then were those nodes unremoved after the reservations became
//     visible, so no reclaimer frees them.
// Nodes derive from llx_scx_fields (their `info` and `marked` words). A node created by the
// container starts with info = 0, the tag of no SCX.
#pragma once
#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstdint>
#include <memory>
#include <stdexcept>

#include "../../core/registry.hpp"
#include "../../core/sync.hpp"

namespace reclaim::ds::detail {

// What LLX and SCX need in every node they operate on.
struct llx_scx_fields {
  core::atomic<std::uint64_t> info{0};  // the tag of the last SCX that froze the node (0: none)
  core::atomic<bool> marked{false};     // finalized: removed from the structure by a committed SCX
};

// A small integer per live thread, process-wide: threads take the lowest free one on their first
// SCX and give it back when they exit (core/registry.hpp's thread-exit machinery), so indices stay
// below the number of threads alive at once.
namespace thread_index_detail {
struct record : core::record_base {
  static constexpr unsigned orphan_batches = 0;  // holds no garbage
  static inline std::atomic<std::uint32_t> created{0};
  // Records are never freed and keep their index: reused, they give it to the next thread.
  const std::uint32_t index = created.fetch_add(1, std::memory_order_relaxed);
};
inline constexpr std::uint32_t unassigned = ~std::uint32_t{0};
// The fast path: a plain TLS read. Trivially constructible, so it has no lazy-initialisation guard.
RECLAIM_THREAD_LOCAL(std::uint32_t, mine, unassigned);

struct owner {
  // Runs on the exiting thread (core::registry_base::detach): a use after this point, from a
  // later thread-exit destructor, registers the thread again.
  void detach(record&) noexcept { mine = unassigned; }
};
inline core::thread_registry<record, owner>& registry() {
  static owner o;
  static auto* r = new core::thread_registry<record, owner>(o);  // never destroyed: threads may
  return *r;                                                      // exit after main
}
[[gnu::noinline]] inline std::uint32_t take() {
  mine = registry().local().index;
  return mine;
}
}  // namespace thread_index_detail

inline std::uint32_t thread_index() {
  const std::uint32_t i = thread_index_detail::mine;
  return i != thread_index_detail::unassigned ? i : thread_index_detail::take();
}

// LLX and SCX over nodes of type Node (derived from llx_scx_fields) whose mutable fields are
// core::atomic<Node*>; MaxNodes bounds |V|.
template <class Node, unsigned MaxNodes>
class llx_scx {
 public:
  using tag_type = std::uint64_t;
  static constexpr unsigned max_nodes = MaxNodes;
  static constexpr std::uint32_t max_threads = 1u << 16;

  enum class llx_status {
    snapshot,   // r is unfrozen; `tag` goes to scx_args::add
    finalized,  // r was removed by a committed SCX
    retry,      // r changed while we looked: search again
    busy,       // an SCX (`tag`) is under way on r: help it (plan, reserve, help), search again
  };
  struct llx_result {
    llx_status status;
    tag_type tag;
  };

  // The nodes an SCX depends on, in the order of V (top-down), each with its LLX's tag and whether
  // the SCX finalizes it (R).
  struct scx_args {
    unsigned count = 0;
    std::uint32_t finalize_mask = 0;
    Node* nodes[MaxNodes] = {};
    tag_type seen[MaxNodes] = {};
    void add(Node* n, tag_type llx_tag, bool finalize) noexcept {
      assert(count < MaxNodes);
      nodes[count] = n;
      seen[count] = llx_tag;
      if (finalize) finalize_mask |= 1u << count;
      ++count;
    }
  };

  // What a helper needs: a copy of an SCX's descriptor, taken while the SCX was under way.
  struct help_plan {
    tag_type tag = 0;
    scx_args args;
    core::atomic<Node*>* field = nullptr;
    Node* expected = nullptr;
    Node* desired = nullptr;
  };

  llx_scx() = default;
  ~llx_scx() {
    for (auto& c : chunks_) delete[] c.load(std::memory_order_relaxed);
  }
  llx_scx(const llx_scx&) = delete;
  llx_scx& operator=(const llx_scx&) = delete;

  // LLX(r), without copying r's fields: after a snapshot the caller reads what it needs of r; any
  // change to those fields changes r's info first, so the SCX that depends on this tag fails.
  llx_result llx(const Node* r) const noexcept {
    // acquire (all four): pair with the release CASes and stores of help(); a state seen committed
    // carries the marks set before it, and the fields read after a snapshot are at least that new.
    const bool marked_before = r->marked.load(std::memory_order_acquire);
    const tag_type tag = r->info.load(std::memory_order_acquire);
    const state s = state_of(tag);
    if (s != state::in_progress && !r->marked.load(std::memory_order_acquire) &&
        r->info.load(std::memory_order_acquire) == tag)
      return {llx_status::snapshot, tag};
    if (marked_before) return {llx_status::finalized, tag};
    return {s == state::in_progress ? llx_status::busy : llx_status::retry, tag};
  }

  // SCX by this thread: true if it committed. The caller created `desired` (and whatever it points
  // to); on false nothing was published, so it may delete them. May throw std::bad_alloc (the
  // thread's first SCX on this object allocates its descriptor) or std::length_error.
  bool scx(const scx_args& a, core::atomic<Node*>& field, Node* expected, Node* desired) {
    const std::uint32_t index = thread_index();
    descriptor& d = descriptor_of(index);
    // Only the owner moves the sequence number. Even: being filled; helpers' copies taken from
    // now on fail their check.
    const std::uint64_t filling = seq_of(d.mutables.load(std::memory_order_relaxed)) + 1;
    // relaxed, then the release fence: the seqlock writer; a reader that sees any field written
    // below also sees the even number (its fence and second load).
    d.mutables.store(pack(filling, state::in_progress, false), std::memory_order_relaxed);
    core::thread_fence(std::memory_order_release);
    d.count.store(a.count, std::memory_order_relaxed);
    d.finalize_mask.store(a.finalize_mask, std::memory_order_relaxed);
    for (unsigned i = 0; i < a.count; ++i) {
      d.nodes[i].store(a.nodes[i], std::memory_order_relaxed);
      d.seen[i].store(a.seen[i], std::memory_order_relaxed);
    }
    d.field.store(&field, std::memory_order_relaxed);
    d.expected.store(expected, std::memory_order_relaxed);
    d.desired.store(desired, std::memory_order_relaxed);
    // release: publishes the fields to helpers that find the tag (their acquire load in plan()).
    d.mutables.store(pack(filling + 1, state::in_progress, false), std::memory_order_release);
    help_plan own{make_tag(index, filling + 1), a, &field, expected, desired};
    return help(own) == state::committed;
  }

  // In a read phase: a copy of the SCX named by `tag` if it is still under way (false otherwise:
  // nothing to help).
  bool plan(tag_type tag, help_plan& p) const noexcept {
    if (seq_of_tag(tag) == 0) return false;
    const descriptor& d = descriptor_at(index_of(tag));
    // acquire: pairs with the release store in scx(); the fields below are the published ones
    // unless the sequence number moved, which the second load sees (after the acquire fence).
    const std::uint64_t m = d.mutables.load(std::memory_order_acquire);
    if (seq_of(m) != seq_of_tag(tag) || state_in(m) != state::in_progress) return false;
    p.tag = tag;
    p.args.count = std::min(d.count.load(std::memory_order_relaxed), MaxNodes);
    p.args.finalize_mask = d.finalize_mask.load(std::memory_order_relaxed);
    for (unsigned i = 0; i < p.args.count; ++i) {
      p.args.nodes[i] = d.nodes[i].load(std::memory_order_relaxed);
      p.args.seen[i] = d.seen[i].load(std::memory_order_relaxed);
    }
    for (unsigned i = p.args.count; i < MaxNodes; ++i) p.args.nodes[i] = nullptr;
    p.field = d.field.load(std::memory_order_relaxed);
    p.expected = d.expected.load(std::memory_order_relaxed);
    p.desired = d.desired.load(std::memory_order_relaxed);
    core::thread_fence(std::memory_order_acquire);
    return seq_of(d.mutables.load(std::memory_order_relaxed)) == seq_of_tag(tag);
  }

  // In the write phase that reserved p.args.nodes and p.expected: helps the SCX to its end if it is
  // still under way now (after the reservations became visible: see the header).
  void help_if_under_way(const help_plan& p) {
    const descriptor& d = descriptor_at(index_of(p.tag));
    // seq_cst: ordered after the reservations (nbr's write phase ends with a seq_cst RMW).
    const std::uint64_t m = d.mutables.load(std::memory_order_seq_cst);
    if (seq_of(m) != seq_of_tag(p.tag) || state_in(m) != state::in_progress) return;
    help(p);
  }

  // Quiescent: whether the SCX named by tag is under way (a well-formed structure has none).
  bool under_way(tag_type tag) const noexcept { return state_of(tag) == state::in_progress; }

 private:
  enum class state : std::uint64_t { in_progress = 0, committed = 1, aborted = 2 };

  // mutables: sequence number << 3 | all_frozen << 2 | state.
  static constexpr std::uint64_t pack(std::uint64_t seq, state s, bool all_frozen) noexcept {
    return seq << 3 | std::uint64_t{all_frozen} << 2 | static_cast<std::uint64_t>(s);
  }
  static constexpr std::uint64_t seq_of(std::uint64_t m) noexcept { return m >> 3; }
  static constexpr bool all_frozen(std::uint64_t m) noexcept { return (m >> 2) & 1; }
  static constexpr state state_in(std::uint64_t m) noexcept { return static_cast<state>(m & 3); }

  // tag: sequence number << 16 | thread index. 0 (sequence number 0) names no SCX.
  static constexpr tag_type make_tag(std::uint32_t index, std::uint64_t seq) noexcept {
    return seq << 16 | index;
  }
  static constexpr std::uint32_t index_of(tag_type t) noexcept { return t & 0xFFFF; }
  static constexpr std::uint64_t seq_of_tag(tag_type t) noexcept { return t >> 16; }

  struct alignas(64) descriptor {
    core::atomic<std::uint64_t> mutables{0};
    core::atomic<unsigned> count{0};
    core::atomic<std::uint32_t> finalize_mask{0};
    core::atomic<Node*> nodes[MaxNodes] = {};
    core::atomic<tag_type> seen[MaxNodes] = {};
    core::atomic<core::atomic<Node*>*> field{nullptr};
    core::atomic<Node*> expected{nullptr};
    core::atomic<Node*> desired{nullptr};
  };

  // The state of the SCX a tag names; a descriptor that moved on finished that SCX (committed or
  // aborted: LLX tells finalized nodes by their mark).
  state state_of(tag_type tag) const noexcept {
    if (seq_of_tag(tag) == 0) return state::committed;
    // acquire: pairs with the release CASes of help(): a committed state carries the marks.
    const std::uint64_t m = descriptor_at(index_of(tag)).mutables.load(std::memory_order_acquire);
    if (seq_of(m) != seq_of_tag(tag)) return state::committed;
    return state_in(m);
  }

  // Freezes, marks, changes the field, commits; or aborts. By the owner and by helpers alike.
  state help(const help_plan& p) {
    descriptor& d = descriptor_at(index_of(p.tag));
    for (unsigned i = 0; i < p.args.count; ++i) {
      tag_type expected = p.args.seen[i];
      // acq_rel: the release publishes the freeze to LLXs; the acquire orders the rest of the
      // helping after the node's previous SCX.
      if (p.args.nodes[i]->info.compare_exchange_strong(expected, p.tag, std::memory_order_acq_rel,
                                                        std::memory_order_acquire) ||
          expected == p.tag)
        continue;
      // Node i changed since the owner's LLX: abort, unless every node was already frozen (then
      // another helper got further and the SCX commits).
      return abort_unless_all_frozen(d, p.tag);
    }
    // Committed here means "will commit": the marks, the field and the state follow (again, if
    // another helper did them already: each step is idempotent).
    if (const state s = set_all_frozen(d, p.tag); s != state::committed) return s;
    for (unsigned i = 0; i < p.args.count; ++i) {
      // release: visible before the commit below (and to LLXs that read the state with acquire).
      if (p.args.finalize_mask >> i & 1)
        p.args.nodes[i]->marked.store(true, std::memory_order_release);
    }
    Node* expected = p.expected;
    // release: publishes the new nodes' fields; pairs with the acquire loads of searches.
    p.field->compare_exchange_strong(expected, p.desired, std::memory_order_release,
                                     std::memory_order_relaxed);
    finish(d, p.tag, state::committed);
    return state::committed;
  }

  static state abort_unless_all_frozen(descriptor& d, tag_type tag) noexcept {
    std::uint64_t m = d.mutables.load(std::memory_order_acquire);
    for (;;) {
      if (seq_of(m) != seq_of_tag(tag)) return state::aborted;  // finished; outcome not needed
      if (all_frozen(m)) return state::committed;
      if (state_in(m) != state::in_progress) return state_in(m);
      // acq_rel: pairs with the acquire loads of the state in llx() and state_of().
      if (d.mutables.compare_exchange_weak(m, pack(seq_of(m), state::aborted, false),
                                           std::memory_order_acq_rel, std::memory_order_acquire))
        return state::aborted;
    }
  }

  // Sets the all-frozen bit of the SCX under way (from then on it cannot abort) and returns
  // committed, or returns the outcome another helper already reached; aborted also when the
  // descriptor moved on (only a helper sees that, and it no longer matters to it).
  static state set_all_frozen(descriptor& d, tag_type tag) noexcept {
    std::uint64_t m = d.mutables.load(std::memory_order_acquire);
    for (;;) {
      if (seq_of(m) != seq_of_tag(tag)) return state::aborted;
      if (state_in(m) != state::in_progress) return state_in(m);
      if (all_frozen(m)) return state::committed;
      // acq_rel: once set, no helper can abort the SCX (abort_unless_all_frozen reads it).
      if (d.mutables.compare_exchange_weak(m, pack(seq_of(m), state::in_progress, true),
                                           std::memory_order_acq_rel, std::memory_order_acquire))
        return state::committed;
    }
  }

  static void finish(descriptor& d, tag_type tag, state s) noexcept {
    std::uint64_t m = d.mutables.load(std::memory_order_relaxed);
    while (seq_of(m) == seq_of_tag(tag) && state_in(m) == state::in_progress) {
      // release: the marks and the field change happen before a state read as committed.
      if (d.mutables.compare_exchange_weak(m, pack(seq_of(m), s, all_frozen(m)),
                                           std::memory_order_release, std::memory_order_relaxed))
        return;
    }
  }

  // Descriptors in chunks allocated on first use, so that an object's cost follows the threads
  // that run SCXs on it.
  static constexpr std::uint32_t chunk_size = 64;
  static constexpr std::uint32_t chunk_count = max_threads / chunk_size;

  descriptor& descriptor_of(std::uint32_t index) {
    if (index >= max_threads) [[unlikely]]
      throw std::length_error("reclaim: more than 65536 threads run SCXs at once on one tree");
    core::atomic<descriptor*>& slot = chunks_[index / chunk_size];
    // acquire: pairs with the release CAS below (another thread's chunk construction).
    descriptor* chunk = slot.load(std::memory_order_acquire);
    if (!chunk) [[unlikely]] {
      auto fresh = std::make_unique<descriptor[]>(chunk_size);
      // acq_rel: publishes the chunk; on failure, acquires the winner's.
      if (slot.compare_exchange_strong(chunk, fresh.get(), std::memory_order_acq_rel,
                                       std::memory_order_acquire))
        chunk = fresh.release();
    }
    return chunk[index % chunk_size];
  }
  // A descriptor a published tag names: its chunk exists (its owner's scx() allocated it).
  descriptor& descriptor_at(std::uint32_t index) const noexcept {
    return chunks_[index / chunk_size].load(std::memory_order_acquire)[index % chunk_size];
  }

  mutable core::atomic<descriptor*> chunks_[chunk_count] = {};
};

}  // namespace reclaim::ds::detail
