// SPDX-License-Identifier: MIT
// lfrc (lock-free reference counting, schemes/lfrc.hpp) under the checker: the generic models on
// lfrc's own code, and a model of its type-stable memory (a reclaimed node's block made into a new
// node while a stale reader still counts it).
//
// What differs from the other schemes. An lfrc node lives in a block whose header (in front of the
// node) holds its count, and a block is never given back to the allocator: a reclaimed node's block
// goes to a free list (the reclaiming thread's cache, the domain's stacks, the process's stacks;
// schemes/detail/lfrc_memory.hpp) because a stale reader may still increment its count. So the
// checker cannot see a read of a reclaimed node as an access to freed heap memory. It sees it
// through the payload instead (node<Scheme> in model.hpp): the node's destructor overwrites the
// rl::var, so a read that may overlap it is a data race, and the var's own destructor clears its
// signature, so a read after it is reported as an access to freed memory (Relacy checks the
// signature on every load), whether or not the block has been made into a node again since. A
// node never reclaimed leaves its var alive: a var leak at the end of the run.
//
// The process's stacks are made once per process in normal builds and never freed. Under the
// checker every run has its own heap and atomics, so lfrc_memory.hpp lets the model make them:
// process_stacks below makes them before the run's domain and, after the domain is gone (its
// destructor puts every free block there), frees every block and the stacks, so that the run ends
// with nothing of the checker's heap left.
//
// The generic models fit lfrc otherwise:
// grace_periods is true (synchronize() and barrier() wait for the operations open when they begin,
// after which every node retired before is reclaimed),
// the stats mean what they mean elsewhere (retired, freed = reclaimed: destroyed, its block on a
// free list, pending = the difference), and the grace model's `delete old` is what a user of lfrc
// writes: lfrc's node_base declares the node's operator delete, which puts the block on the
// process's stacks.
#include <new>

#include <reclaim/schemes/lfrc.hpp>

#include "generic_models.hpp"

namespace reclaim_verify {

using lfrc = reclaim::lfrc<>;

// The process's free-block stacks for one simulated run (see the top).
struct process_stacks {
  process_stacks() { reclaim::detail::lfrc::verify_process_blocks = new block_stacks; }
  ~process_stacks() {
    block_stacks*& stacks = reclaim::detail::lfrc::verify_process_blocks;
    stacks->take_all([](std::size_t, block_header* chain) {
      while (block_header* h = chain) {
        chain = h->next.load(std::memory_order_relaxed);
        h->~block_header();  // its atomics are the run's
        ::operator delete(h);
      }
    });
    delete stacks;
    stacks = nullptr;
  }

 private:
  using block_stacks = reclaim::detail::lfrc::block_stacks;
  using block_header = reclaim::detail::lfrc::block_header;
};

// The base of every model of lfrc, the generic ones included (this specialises model.hpp's for
// them): the run's process stacks are made before the model's members (its domain) and freed after
// them.
template <template <class> class Model, unsigned Threads>
struct model<Model<lfrc>, Threads> : rl::test_suite<Model<lfrc>, Threads>, process_stacks {
  model() { reclaim::core::verify::forget_threads(); }
};

// Type-stable memory. Thread 1 replaces the shared node twice, retiring each old one: node 1 is
// reclaimed by the retire if no one counts it, and node 3 is then made in its block (the
// retirer's cache gives it back first), so thread 0's protect may count and validate a block that
// was node 1 when it read the pointer and is node 3 now (ABA, which lfrc allows: the node it holds
// is the one linked), or count a free block, or a revived one, and release it after. At the end,
// with no thread holding anything, both retired nodes have been reclaimed without a barrier (lfrc
// reclaims at the last release), and the stats say so.
template <class Scheme>
struct reuse_model : shared_node_model<reuse_model<Scheme>, Scheme> {
  static constexpr int newest = 3;

  void write() {
    this->swap_and_retire(2);
    this->swap_and_retire(3);
  }
  void after() {
    const reclaim::stats s = this->domain.stats();  // no barrier: reclaimed at the last release
    RL_ASSERT(s.retired == 2 && s.freed == 2 && s.pending == 0);
    // The last node is reclaimed at once when retired: no one counts it.
    shared_node_model<reuse_model, Scheme>::after();
  }
};

void add_lfrc_models(registry& r) {
  add_generic_models<lfrc>(r, "lfrc", "lfrc");
  r.add<reuse_model<lfrc>>("lfrc/reuse/lfrc", "lfrc");
  r.mutants.push_back({"lfrc_no_validation",
                       "protect() counts the node it read and returns it without checking that "
                       "the source still holds it",
                       {"lfrc"}});
  r.mutants.push_back({"lfrc_release_relaxed",
                       "a count is dropped with a relaxed decrement instead of a release",
                       {"lfrc"}});
}

}  // namespace reclaim_verify
