// SPDX-License-Identifier: MIT
// Models for the schemes that protect by eras and count batches (tests/verify/models_era.cpp,
// models_batch.cpp), mostly run with advance_every<1> so that every create() moves the clock.
// Under a scheme's defaults the clock never moves in a model (64 allocations per advance): every
// node is born and retired in one era, and only the Dekker pattern of a published era against a
// retirer's fence is checked. Here a reader's era goes stale while it reads (it republishes and
// reads again), and nodes are born in different eras.
//
// All but swap_twice place their threads with progress flags (progress_flag, generic_models.hpp:
// relaxed, they order nothing, so a free and a read with no happens-before between them are still
// a race the checker reports), for the interleavings random schedules almost never make: a writer
// that runs its whole retire inside the reader's protect() (racing_model), a reader that holds its
// node across two retires (held_model), a reader stopped between its load and its era's
// publication (late_publication_model, an injected pause), a retire era read stale
// (stale_retire_era_model).
#pragma once
#include "generic_models.hpp"

namespace reclaim_verify {

// Thread 0 reads the shared node under a guard; threads 1 and 2 each create a node (a clock
// advance), swap it in, retire the old one and flush. Node 2, born in a later era than node 1 and
// retired while the reader may hold it, is what a reader whose era is stale (published before the
// clock passed node 2's birth) must not keep reading once it is freed. At the end a barrier has
// freed both nodes retired.
template <class Scheme>
struct swap_twice_model : shared_node_model<swap_twice_model<Scheme>, Scheme, 3> {
  static constexpr int newest = 3;

  void write() { this->swap_retire_and_flush(2); }
  void bystander() { this->swap_retire_and_flush(3); }
  void after() { this->after_all_freed(2); }
};

// The writer starts when the reader is about to protect: thread 1 swaps node 1 for node 2 (a
// clock advance), then node 2 for node 3 (another), retiring each and flushing, while thread 0's
// protect() may be between its load of the source and its publication, or between a publication
// and its next load. A protect that returns a pointer it loaded before its era covered it is
// caught here: the retire that frees that node has to fit in those few steps of the reader's.
template <class Scheme>
struct racing_model : shared_node_model<racing_model<Scheme>, Scheme> {
  static constexpr int newest = 3;
  progress_flag started;

  void read() {
    typename Scheme::guard g(this->domain);
    started.set(1);
    if (node<Scheme>* p = g.protect(this->shared, 0)) this->read_node(p);
  }
  void write() {
    started.wait_until(1);
    for (int v = 2; v <= 3; ++v) this->swap_retire_and_flush(v);
  }
  void after() { this->after_all_freed(2); }
};

// The reader holds its node while the writer retires it and then a second node, each flushed (a
// batch each: under hyaline the second is pushed over the first on the reader's slot, which then
// counts the reader), and reads it again before its guard ends; then the writer flushes once more
// after the reader is done. Nothing the reader holds may be freed before its guard ends, and what
// it read must happen before the free.
template <class Scheme>
struct held_model : shared_node_model<held_model<Scheme>, Scheme> {
  static constexpr int newest = 3;
  progress_flag progress;  // 1: the reader holds its node; 2: both retired; 3: the reader left

  void read() {
    {
      typename Scheme::guard g(this->domain);
      node<Scheme>* p = g.protect(this->shared, 0);
      const int seen = this->read_node(p);
      progress.set(1);
      progress.wait_until(2);
      RL_ASSERT(p->read() == seen);
    }
    progress.set(3);
  }
  void write() {
    progress.wait_until(1);
    for (int v = 2; v <= 3; ++v) this->swap_retire_and_flush(v);
    progress.set(2);
    progress.wait_until(3);
    this->domain.flush();
  }
  void after() { this->after_all_freed(2); }
};

// A reader preempted inside protect() between its load of the source and its publication of the
// clock's era (injected: it stops before the clock read that follows the load), while the writer
// retires and flushes the node it loaded: a node born after the era the reader already holds, so
// no reservation covers it and the writer's scan or seal frees it. protect() must not return that
// pointer (it loads again under the new era). Thread 0 holds era E0 from a first protect (node 1);
// thread 1 swaps node 1 for node 2 (born later) and flushes; thread 0 protects again, in the same
// slot, and may load node 2; the pause keeps it before its clock read until thread 1 has swapped
// node 2 for node 3, retired it and flushed. The pause is set by thread 0 itself after its first
// protect, so that it matches the second protect's clock read, not the first's. Schemes without a
// clock (hyaline) run it without the pause.
template <class Scheme>
struct late_publication_model : shared_node_model<late_publication_model<Scheme>, Scheme> {
  static constexpr int newest = 3;
  // 1: the reader holds node 1; 2: node 1 swapped out; 3: node 2 retired and flushed.
  progress_flag progress;

  void read() {
    typename Scheme::guard g(this->domain);
    node<Scheme>* p = g.protect(this->shared, 0);
    RL_ASSERT(p->read() == 1);
    progress.set(1);
    progress.wait_until(2);
    reclaim::core::verify::pause = {{0, "era_clock::now", [this] { return progress.reached(3); }}};
    this->read_node(g.protect(this->shared, 0));
  }
  void write() {
    progress.wait_until(1);
    for (int v = 2; v <= 3; ++v) {
      this->swap_retire_and_flush(v);
      progress.set(v);
    }
  }
  void after() { this->after_all_freed(2); }
};

// The retire era read stale: thread 1 makes node 2 (a clock advance), swaps it in for node 1 and
// retires node 1, reading the retire era E; then thread 2 advances the clock to E + 1; then thread
// 0 protects the source (publishing E + 1) and holds what it read while thread 1 flushes (its
// scan). Placed with relaxed flags (no happens-before). The retirer's full fence between the
// unlink and the clock read puts the unlink before thread 0's publication in S, so that thread 0
// loads node 2; without it thread 0 may load node 1, whose interval [birth, E] misses E + 1, and
// the scan frees it under the reader.
template <class Scheme>
struct stale_retire_era_model : shared_node_model<stale_retire_era_model<Scheme>, Scheme, 3> {
  // 1: node 1 retired; 2: the clock advanced; 3: the reader holds its node; 4: flushed.
  progress_flag progress;

  void read() {
    progress.wait_until(2);
    typename Scheme::guard g(this->domain);
    node<Scheme>* p = g.protect(this->shared, 0);
    const int seen = this->read_node(p);
    progress.set(3);
    progress.wait_until(4);
    RL_ASSERT(p->read() == seen);
  }
  void write() {
    this->swap_and_retire(2);
    progress.set(1);
    progress.wait_until(3);
    this->domain.flush();
    progress.set(4);
  }
  void bystander() {
    progress.wait_until(1);
    delete this->domain.template create<node<Scheme>>(0);
    progress.set(2);
  }
  void after() { this->after_all_freed(1); }
};

// The fast-clock models of a scheme, registered under the scheme's name (its faults run them
// too) and named family/model/label.
template <class Scheme>
void add_fast_clock_models(registry& r, const std::string& family, const std::string& scheme,
                           const std::string& label) {
  r.add<retire_model<Scheme>>(family + "/retire/" + label, scheme);
  r.add<swap_twice_model<Scheme>>(family + "/swap_twice/" + label, scheme);
  r.add<racing_model<Scheme>>(family + "/racing/" + label, scheme);
  r.add<held_model<Scheme>>(family + "/held/" + label, scheme);
  r.add<late_publication_model<Scheme>>(family + "/late_publication/" + label, scheme);
}

}  // namespace reclaim_verify
