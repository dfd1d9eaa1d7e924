// The models every scheme runs, on its own code: a swapped pointer read under protection while the
// old node is retired (retire_model, barrier_model) or freed after a grace period (grace_model),
// and a Michael list (ds::hm_list, the library's container) read by one thread while two others
// erase (list_model).
#pragma once
#include <reclaim/ds/hm_list.hpp>

#include "model.hpp"

namespace reclaim_verify {

template <class Scheme>
using atomic_node = reclaim::core::atomic<node<Scheme>*>;

// What the models of one shared node have: the domain, the node, thread 0's read of it under a
// guard, and a writer's swap that retires the old node; the last node is retired at the end.
// Thread 1 runs the model's write().
template <class Model, class Scheme>
struct shared_node_model : model<Model, 2> {
  typename Scheme::domain domain;
  atomic_node<Scheme> shared;

  void before() {
    shared.store(domain.template create<node<Scheme>>(1), std::memory_order_release);
  }
  void thread(unsigned i) {
    if (i == 0)
      read();
    else
      static_cast<Model&>(*this).write();
    thread_exits();
  }
  void read() {
    typename Scheme::guard g(domain);
    if (node<Scheme>* p = g.protect(shared, 0)) {
      const int seen = p->read();
      RL_ASSERT(seen == 1 || seen == 2);
    }
  }
  void swap_and_retire() {
    typename Scheme::guard g(domain);
    auto* fresh = g.template create<node<Scheme>>(2);
    g.retire(shared.exchange(fresh, std::memory_order_acq_rel));
  }
  void after() {
    domain.retire(shared.load(std::memory_order_relaxed));  // freed with the domain
    thread_exits();
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
    for (int n = 0; n < 3; ++n) this->domain.flush();
  }
  void after() {
    this->domain.barrier();
    const reclaim::stats s = this->domain.stats();
    RL_ASSERT(s.retired == 1 && s.freed == 1 && s.pending == 0);
    shared_node_model<retire_model, Scheme>::after();
  }
};

// Thread 1 swaps and retires, then calls barrier(), which frees what it retired before it returns:
// the epoch (or the scan) runs as far as it can while thread 0 may still be beginning.
template <class Scheme>
struct barrier_model : shared_node_model<barrier_model<Scheme>, Scheme> {
  void write() {
    this->swap_and_retire();
    this->domain.barrier();
    const reclaim::stats s = this->domain.stats();
    RL_ASSERT(s.freed == 1 && s.pending == 0);
  }
};

// Thread 1 unlinks the node, waits for a grace period and deletes it itself, as a user of
// synchronize() does.
template <class Scheme>
struct grace_model : shared_node_model<grace_model<Scheme>, Scheme> {
  void write() {
    node<Scheme>* old = this->shared.exchange(this->domain.template create<node<Scheme>>(2),
                                              std::memory_order_acq_rel);
    this->domain.synchronize();
    delete old;
  }
};

// A Michael list of keys 1 and 2: thread 0 looks both up (a traversal that validates each step
// under the validating schemes), threads 1 and 2 erase one each, so that a node is unlinked and
// retired while the reader may stand on it or on its predecessor.
template <class Scheme>
struct list_model : model<list_model<Scheme>, 3> {
  typename Scheme::domain domain;
  std::optional<reclaim::ds::hm_list<int, Scheme>> list;

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
    domain.barrier();
    const reclaim::stats s = domain.stats();
    RL_ASSERT(s.retired == 2 && s.freed == 2 && s.pending == 0);
    thread_exits();
  }
};

// The models of one scheme, named family/model/scheme.
template <class Scheme>
void add_generic_models(registry& r, const std::string& family, const std::string& scheme) {
  r.add<retire_model<Scheme>>(family + "/retire/" + scheme, scheme);
  if constexpr (Scheme::domain::grace_periods) {
    r.add<barrier_model<Scheme>>(family + "/barrier/" + scheme, scheme);
    r.add<grace_model<Scheme>>(family + "/grace/" + scheme, scheme);
  }
  r.add<list_model<Scheme>>(family + "/list/" + scheme, scheme);
}

}  // namespace reclaim_verify
