// SPDX-License-Identifier: MIT
// The models every scheme runs, on its own code: a swapped pointer read under protection while the
// old node is retired (retire_model, barrier_model) or freed after a grace period (grace_model),
// and a Michael list (ds::hm_list, the library's container) read by one thread while two others
// erase (list_model).
#pragma once
#include <cstdint>
#include <source_location>

#include <reclaim/ds/hm_list.hpp>

#include "model.hpp"

namespace reclaim_verify {

template <class Scheme>
using atomic_node = reclaim::core::atomic<node<Scheme>*>;

// A progress flag, for the models that place one thread's steps after another's (interleavings
// random schedules almost never make). It is read and written relaxed, so that it orders nothing:
// a free and a read with no happens-before between them are still a race the checker reports. It
// is one of the library's atomics, and a waiter yields with core::yield_now(): every load of it is
// a point where a signal may arrive (a ping to answer while a reader waits: core/verify/relacy.hpp).
// Each access passes on its caller's source location, so that a report names the model's line.
class progress_flag {
  using here = std::source_location;

 public:
  bool reached(int p, here where = here::current()) const {
    return value_.load(std::memory_order_relaxed, where) >= p;
  }
  void set(int p, here where = here::current()) {
    value_.store(p, std::memory_order_relaxed, where);
  }
  void add(int n, here where = here::current()) {
    value_.fetch_add(n, std::memory_order_relaxed, where);
  }
  // Waits (yielding) until the flag reaches p.
  void wait_until(int p, here where = here::current()) const {
    while (!reached(p, where)) reclaim::core::yield_now(where);
  }

 private:
  reclaim::core::atomic<int> value_{0};
};

// A writer's step: a fresh node made under a guard is swapped into `shared`, and the old one is
// retired under the same guard.
template <class Scheme>
void replace_node(typename Scheme::domain& domain, atomic_node<Scheme>& shared, int value) {
  typename Scheme::guard g(domain);
  auto* fresh = g.template create<node<Scheme>>(value);
  g.retire(shared.exchange(fresh, std::memory_order_acq_rel));
}

// The end of a model that retired n nodes: a barrier has freed them all, and the stats add up.
template <class Domain>
void expect_all_freed(Domain& domain, std::uint64_t n) {
  domain.barrier();
  const reclaim::stats s = domain.stats();
  RL_ASSERT(s.retired == n && s.freed == n && s.pending == 0);
}

// What the models of one shared node have: the domain, the node, thread 0's read of it under a
// guard, and a writer's swap that retires the old node; the last node is retired at the end.
// Thread 1 runs the model's write(), thread 2 (if any) its bystander(); a model whose threads
// share the roles otherwise has its own thread(). Node 1 is the first shared; writers make nodes
// 2, 3, ... up to the model's `newest`, the payloads a reader may see.
template <class Model, class Scheme, unsigned Threads = 2>
struct shared_node_model : model<Model, Threads> {
  typename Scheme::domain domain;
  atomic_node<Scheme> shared;
  static constexpr int newest = 2;

  void before() {
    shared.store(domain.template create<node<Scheme>>(1), std::memory_order_release);
  }
  void thread(unsigned i) {
    if (i == 0)
      static_cast<Model&>(*this).read();
    else if (i == 1)
      static_cast<Model&>(*this).write();
    else if constexpr (Threads > 2)
      static_cast<Model&>(*this).bystander();
    thread_exits();
  }
  // A protected node's payload: one that some writer stored.
  static int read_node(node<Scheme>* p) {
    const int seen = p->read();
    RL_ASSERT(seen >= 1 && seen <= Model::newest);
    return seen;
  }
  void read() {
    typename Scheme::guard g(domain);
    if (node<Scheme>* p = g.protect(shared, 0)) read_node(p);
  }
  void swap_and_retire(int value = 2) { replace_node<Scheme>(domain, shared, value); }
  void swap_retire_and_flush(int value = 2) {
    swap_and_retire(value);
    domain.flush();
  }
  void flush_times(int n) {
    for (int k = 0; k < n; ++k) domain.flush();
  }
  // barrier_model's writer: barrier() frees what it retired before it returns.
  void swap_then_barrier() {
    swap_and_retire();
    domain.barrier();
    const reclaim::stats s = domain.stats();
    RL_ASSERT(s.freed == 1 && s.pending == 0);
  }
  // grace_model's writer: it unlinks the node, waits for a grace period and deletes it itself, as
  // a user of synchronize() does.
  void swap_then_synchronize() {
    node<Scheme>* old =
        shared.exchange(domain.template create<node<Scheme>>(2), std::memory_order_acq_rel);
    domain.synchronize();
    delete old;
  }
  void after() {
    domain.retire(shared.load(std::memory_order_relaxed));  // freed with the domain
    thread_exits();
  }
  // The end of a model that retired n nodes (expect_all_freed), then after()'s.
  void after_all_freed(std::uint64_t n) {
    expect_all_freed(domain, n);
    after();
  }
};

// Thread 1 swaps and retires, then flushes. At the end a barrier has freed everything retired:
// the stats add up.
template <class Scheme>
struct retire_model : shared_node_model<retire_model<Scheme>, Scheme> {
  void write() {
    this->swap_and_retire();
    // Each flush moves an epoch scheme on once if no thread holds it back: three can free the
    // node while thread 0 is still beginning its operation.
    this->flush_times(3);
  }
  void after() { this->after_all_freed(1); }
};

// A reader preempted for long, which random schedules almost never make (each of the writer's
// atomic accesses is a step the reader would have to lose): thread 0 holds its guard over the node
// until thread 1 has swapped it, retired it and flushed three times (nothing may be freed under
// the guard), then stays registered but idle while thread 1 flushes three times more (what it
// read must happen before the free: its end of the operation is a release that the reclaimer's
// pass or scan acquires). Thread 2 moves the clock once, knowing nothing of the swap: a reader
// that synchronizes only with it has not seen the unlink. The reader waits on a progress_flag
// (relaxed: it orders nothing, and a signal may arrive while the reader waits).
template <class Scheme>
struct slow_reader_model : shared_node_model<slow_reader_model<Scheme>, Scheme, 3> {
  progress_flag phase;  // thread 1's: 1 after the first flushes, 2 after the second

  void read() {
    {
      typename Scheme::guard g(this->domain);
      node<Scheme>* p = g.protect(this->shared, 0);
      const int seen = this->read_node(p);
      phase.wait_until(1);
      RL_ASSERT(p->read() == seen);
    }
    phase.wait_until(2);
  }
  void write() {
    this->swap_and_retire();
    this->flush_times(3);
    phase.set(1);
    this->flush_times(3);
    phase.set(2);
  }
  void bystander() { this->domain.flush(); }
};

// Thread 1 swaps and retires, then calls barrier(), which frees what it retired before it returns:
// the epoch (or the scan) runs as far as it can while thread 0 may still be beginning.
template <class Scheme>
struct barrier_model : shared_node_model<barrier_model<Scheme>, Scheme> {
  void write() { this->swap_then_barrier(); }
};

// Thread 1 unlinks the node, waits for a grace period and deletes it itself, as a user of
// synchronize() does.
template <class Scheme>
struct grace_model : shared_node_model<grace_model<Scheme>, Scheme> {
  void write() { this->swap_then_synchronize(); }
};

// A Michael list of keys 1 and 2: thread 0 looks both up (a traversal that validates each step
// under the validating schemes), threads 1 and 2 erase one each, so that a node is unlinked and
// retired while the reader may stand on it or on its predecessor. (nbr's list is the one whose
// read phases start at the head, ds::hm_list_restart.)
template <class Scheme, class List = reclaim::ds::hm_list<int, Scheme>>
struct list_model : model<list_model<Scheme, List>, 3> {
  typename Scheme::domain domain;
  std::optional<List> list;

  void before() {
    list.emplace(domain);
    list->insert(1);
    list->insert(2);
  }
  void thread(unsigned i) {
    if (i == 0) {
      (void)list->contains(2);
      (void)list->contains(1);
    } else {
      RL_ASSERT(list->erase(static_cast<int>(i)));
    }
    domain.flush();
    thread_exits();
  }
  void after() {
    RL_ASSERT(!list->contains(1) && !list->contains(2));
    list.reset();
    expect_all_freed(domain, 2);
    thread_exits();
  }
};

// The models of one scheme, named family/model/scheme.
template <class Scheme>
void add_generic_models(registry& r, const std::string& family, const std::string& scheme) {
  r.add<retire_model<Scheme>>(family + "/retire/" + scheme, scheme);
  r.add<slow_reader_model<Scheme>>(family + "/slow_reader/" + scheme, scheme);
  if constexpr (Scheme::domain::grace_periods) {
    r.add<barrier_model<Scheme>>(family + "/barrier/" + scheme, scheme);
    r.add<grace_model<Scheme>>(family + "/grace/" + scheme, scheme);
  }
  r.add<list_model<Scheme>>(family + "/list/" + scheme, scheme);
}

}  // namespace reclaim_verify
