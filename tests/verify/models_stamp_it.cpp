// SPDX-License-Identifier: MIT
// Stamp-it under the checker: the generic models on the scheme, and two of its own. The generic
// models have at most two threads inside a region at once (the list model's third thread enters
// too, but each does one short operation), so the stamp pool's removals seldom meet a third
// block. pool_model drives the pool directly, three threads entering and leaving twice each (their
// blocks reused, as a thread's record is); readers_model runs the scheme with two readers, each in
// two regions, while a third thread retires two nodes; parked_model has a reader parked in the
// pool between two regions while the writer retires, takes it out and frees.
#include <reclaim/schemes/stamp_it.hpp>

#include <memory>

#include "generic_models.hpp"

namespace reclaim_verify {

namespace {

using reclaim::detail::not_in_list;
using reclaim::detail::stamp_block;
using reclaim::detail::stamp_pool;
using reclaim::detail::stamp_t;

// Three threads push and remove their own block twice. Inside, the tail stamp is at most the
// thread's stamp (the pool's promise: no block in the pool is below it); at the end the pool is
// empty, every block fully removed, and at least one removal was the last one (the block with the
// lowest stamp of all is always the oldest in the pool when it leaves). A removal that gives up
// too early leaves its block in the prev list: the next removal that walks over it loops between
// it and head for ever (a livelock), and at the end the pool is not empty.
struct pool_model : model<pool_model, 3> {
  static constexpr unsigned threads = 3;
  stamp_pool pool;
  // Blocks are 4096-aligned: from the heap, as the scheme's thread records are.
  std::unique_ptr<stamp_block> blocks[threads] = {
      std::make_unique<stamp_block>(), std::make_unique<stamp_block>(),
      std::make_unique<stamp_block>()};
  rl::atomic<unsigned> lasts;

  void before() { lasts($).store(0, rl::mo_relaxed); }
  void thread(unsigned i) {
    stamp_block& mine = *blocks[i];
    for (int round = 0; round < 2; ++round) {
      const stamp_t s = pool.push(mine);
      RL_ASSERT((s & 3) == 0);
      RL_ASSERT(pool.tail_stamp() <= s);
      if (pool.remove(mine)) lasts($).fetch_add(1, rl::mo_relaxed);
    }
  }
  void after() {
    RL_ASSERT(pool.looks_empty());
    for (const auto& b : blocks) RL_ASSERT(b->stamp.load(std::memory_order_relaxed) & not_in_list);
    RL_ASSERT(lasts($).load(rl::mo_relaxed) >= 1);
  }
};

// Two readers, each in two regions (entering and leaving the pool twice), read the shared node
// while thread 2 swaps it twice, retiring each old node, and flushes. The readers' removals and
// the writer's meet in the pool; a node freed while a reader that entered before its retire is
// still inside is a read of freed memory or a race on its payload. At the end a barrier has freed
// all three nodes but the one still shared.
template <class Scheme>
struct readers_model : shared_node_model<readers_model<Scheme>, Scheme, 3> {
  static constexpr int newest = 3;

  void thread(unsigned i) {
    if (i < 2) {
      for (int round = 0; round < 2; ++round) this->read();
    } else {
      for (int value = 2; value <= 3; ++value) this->swap_and_retire(value);
      this->domain.flush();
    }
    thread_exits();
  }
  void after() { this->after_all_freed(2); }
};

// Thread 0 reads in one region and stays parked in the pool (its stamp kept) until thread 1 has
// swapped the node, retired it and flushed: the flush takes the parked reader out of the pool
// (evict_oldest()) and frees the node at once. Then the reader reads again: taken out, it must
// push again with a new stamp and the fence after it, or it may read the freed node (the progress
// flag orders nothing). Thread 1 swaps once more while the reader may be inside; at the end a
// barrier has freed both retired nodes.
template <class Scheme>
struct parked_model : shared_node_model<parked_model<Scheme>, Scheme> {
  static constexpr int newest = 3;
  progress_flag phase;  // 1: the reader is parked; 2: the writer freed the first node

  void read() {
    shared_node_model<parked_model<Scheme>, Scheme>::read();
    phase.set(1);
    phase.wait_until(2);
    shared_node_model<parked_model<Scheme>, Scheme>::read();
  }
  void write() {
    phase.wait_until(1);
    this->swap_retire_and_flush(2);
    RL_ASSERT(this->domain.stats().freed == 1);  // the parked reader held nothing
    phase.set(2);
    this->swap_retire_and_flush(3);
  }
  void after() { this->after_all_freed(2); }
};

}  // namespace

void add_stamp_it_models(registry& r) {
  using scheme = reclaim::stamp_it<>;
  add_generic_models<scheme>(r, "region", "stamp_it");
  r.add<pool_model>("region/pool/stamp_it", "stamp_it");
  r.add<readers_model<scheme>>("region/readers/stamp_it", "stamp_it");
  r.add<parked_model<scheme>>("region/parked/stamp_it", "stamp_it");

  r.mutants.push_back(
      {"stamp_remove_next_relaxed",
       "remove() marks its block's next link with relaxed reads, then reads the block it points "
       "to (the defect fixed here, reverted: that block may be read before its construction)",
       {"stamp_it"}});
  r.mutants.push_back(
      {"stamp_prev_mark_relaxed",
       "a removal reads its predecessor's marked prev link relaxed, so the stamp read after it may "
       "be the pending one; it then wrongly concludes that it was removed by helpers (the defect "
       "fixed here, reverted: a block is left in the prev list, later removals livelock)",
       {"stamp_it"}});
  r.mutants.push_back({"stamp_retire_without_fence",
                       "retire() reads head's stamp without the full fence that pairs with the "
                       "one after a push's fetch_add",
                       {"stamp_it"}});
  r.mutants.push_back({"stamp_free_one_step_early",
                       "a thread frees its own nodes up to one stamp step past the tail stamp",
                       {"stamp_it"}});
  r.mutants.push_back({"stamp_resume_ignores_eviction",
                       "a thread that left the pool parked resumes its old stamp even when another "
                       "thread took its block out meanwhile (no new stamp, no fence)",
                       {"stamp_it"}});
}

}  // namespace reclaim_verify
