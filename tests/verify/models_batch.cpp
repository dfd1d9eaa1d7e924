// SPDX-License-Identifier: MIT
// The batch-counting schemes under the checker: Hyaline (plain and robust) and Crystalline.
//
// The generic models run each scheme with its defaults (the clock of the robust variants and of
// Crystalline never moves there: one era); the fast-clock models (clock_models.hpp) move it at
// every create(). helping_model drives crystalline_w's slow path: requests, helpers, holds and
// the freeze (detail/crystalline_helping.hpp).
#include <reclaim/schemes/crystalline.hpp>
#include <reclaim/schemes/hyaline.hpp>

#include "clock_models.hpp"

namespace reclaim_verify {

namespace {

// A node whose link is the source of a protect(): what a helper reads inside the requester's
// parent node.
template <class Scheme>
struct link_node : Scheme::node_base {
  link_node(int value, link_node* to) {
    payload($) = value;
    next.store(to, std::memory_order_relaxed);
  }
  ~link_node() { payload($) = -1; }
  int read() { return payload($); }
  rl::var<int> payload;
  reclaim::core::atomic<link_node*> next;
};

// What helping_model and claimed_helper_model share: shared -> A (1) -> B (2), and thread 1's
// step, which swaps C (3) in for A, retires A and B and flushes. At the end a barrier has freed A
// and B.
template <class Model, class Scheme>
struct link_model : model<Model, 3> {
  using link = link_node<Scheme>;
  typename Scheme::domain domain;
  reclaim::core::atomic<link*> shared;

  void before() {
    link* b = domain.template create<link>(2, nullptr);
    shared.store(domain.template create<link>(1, b), std::memory_order_release);
  }
  void unlink_and_retire() {
    {
      typename Scheme::guard g(domain);
      link* a = shared.exchange(g.template create<link>(3, nullptr), std::memory_order_acq_rel);
      g.retire(a->next.load(std::memory_order_relaxed));  // ours alone: unlinked with A
      g.retire(a);
    }
    domain.flush();
  }
  void after() {
    // No helper reads a source any more (every container's destructor does this first).
    domain.wait_for_source_readers();
    expect_all_freed(domain, 2);
    domain.retire(shared.load(std::memory_order_relaxed));  // freed with the domain
    thread_exits();
  }
};

// crystalline_w's helping (detail/crystalline_helping.hpp), made to run. Under fast_path<0> every
// protect() whose slot's era differs from the clock goes to the slow path at once (a slot's first
// protect always does: its era is none), so each of the reader's reads is a request; under
// advance_every<1> every create() advances the clock, and a thread about to advance it first
// answers the pending requests (help_requests()). So the threads that create are helpers.
//
// shared -> A (1) -> B (2). Thread 0 protects A in slot 0, then A->next in slot 1: that request's
// source lies in A, which only the reader's slot 0 keeps. Thread 1 creates C (helping, advancing),
// swaps it in for A, retires A and B and flushes (seals them, padded). Thread 2 creates and
// deletes two nodes (helping, advancing twice). A helper that confirmed the request pending may
// still load A->next after the reader took its answer, returned and closed its guard: the
// requester claims such helpers and freezes its active reservations (slot 0's, covering A) under a
// hold until the last one unregisters, so A's batch is not freed under the helper's load. Without
// the freeze (fault crystalline_w_no_freeze) the guard's close releases slot 0, the last decrement
// frees A, and the helper's load touches freed memory. Checks: the payloads read, that the helper's
// load of a freed A is reported, and at the end every retired node freed.
template <class Scheme>
struct helping_model : link_model<helping_model<Scheme>, Scheme> {
  using link = link_node<Scheme>;

  void thread(unsigned i) {
    if (i == 0) {
      typename Scheme::guard g(this->domain);
      if (link* a = g.protect(this->shared, 0)) {
        const int seen = a->read();
        RL_ASSERT(seen == 1 || seen == 3);
        if (link* b = g.protect(a->next, 1)) RL_ASSERT(b->read() == 2);
      }
    } else if (i == 1) {
      this->unlink_and_retire();
    } else {
      for (int n = 0; n < 2; ++n) delete this->domain.template create<link>(0, nullptr);
    }
    thread_exits();
  }
};

// helping_model's failure, placed: a helper of the reader's second request (A->next) is stopped
// before its load of the source (injected: before the first access of detail::load_source() that
// thread 2 makes after the reader's first protect() returned) until the reader has taken its
// answer, claimed the helpers, swapped its slots, read B and closed its guard, and the writer has
// sealed A and B. Thread 2 creates and deletes nodes (helping before each clock advance) until the
// reader is done, so that its help finds the request pending. The claim must freeze slot 0's
// reservation, which covers A, until the helper unregisters: A is not freed under its load.
template <class Scheme>
struct claimed_helper_model : link_model<claimed_helper_model<Scheme>, Scheme> {
  using link = link_node<Scheme>;
  progress_flag reader;  // 1: A protected; 2: the guard closed
  progress_flag writer;  // 1: A and B retired and flushed

  void thread(unsigned i) {
    if (i == 0) {
      {
        typename Scheme::guard g(this->domain);
        link* a = g.protect(this->shared, 0);
        const int seen = a->read();
        RL_ASSERT(seen == 1 || seen == 3);
        reclaim::core::verify::pause = {
            {2, "detail::load_source", [this] { return reader.reached(2) && writer.reached(1); }}};
        reader.set(1);
        if (link* b = g.protect(a->next, 1)) RL_ASSERT(b->read() == 2);
      }
      reader.set(2);
    } else if (i == 1) {
      reader.wait_until(1);
      this->unlink_and_retire();
      writer.set(1);
    } else {
      while (!reader.reached(2)) delete this->domain.template create<link>(0, nullptr);
    }
    thread_exits();
  }
};

// Two readers hold node 1 while the writer swaps it out, retires it and flushes (a batch counted
// in both readers' slots or reservations); thread 0 leaves first and thread 2 is stopped before its
// first count decrement (injected: hyaline's adjust(), crystalline's traverse()) until thread 0 has
// left and the writer is done, so that the one who takes the batch's count to zero is not the
// reader that read last: it frees after thread 0's read only through the count's release sequence
// (the decrement's acquire half).
inline constexpr char hyaline_decrement[] = "::adjust(";
inline constexpr char crystalline_decrement[] = "::traverse(";
template <class Scheme, const char* Decrement>
struct two_readers_model : shared_node_model<two_readers_model<Scheme, Decrement>, Scheme, 3> {
  progress_flag readers;  // readers holding node 1
  progress_flag writer;   // 1: node 1 retired and flushed
  progress_flag first;    // 1: thread 0 left

  two_readers_model() {
    reclaim::core::verify::pause = {
        {2, Decrement, [this] { return first.reached(1) && writer.reached(1); }}};
  }
  void read() {  // thread 0
    hold();
    first.set(1);
  }
  void bystander() { hold(); }  // thread 2
  void hold() {
    typename Scheme::guard g(this->domain);
    node<Scheme>* p = g.protect(this->shared, 0);
    RL_ASSERT(p->read() == 1);
    readers.add(1);
    writer.wait_until(1);
    RL_ASSERT(p->read() == 1);
  }
  void write() {
    readers.wait_until(2);
    this->swap_retire_and_flush();
    writer.set(1);
  }
  void after() { this->after_all_freed(1); }
};

// The robust hyaline variants' retire fence F_r: thread 0 enters and loads the source, and is
// stopped before it publishes the clock's era (injected: before its first access in
// publish_era()) until thread 1 has swapped node 1 for node 2, retired node 1 and flushed. The
// retire reads thread 0's slot era (none yet, below the batch's birth) and skips the slot, so the
// batch is freed at once; F_r, between the unlink and that read, puts the unlink before thread
// 0's publication in S, so that its load after it returns node 2. Without it the load may return
// node 1, freed.
template <class Scheme>
struct late_era_model : shared_node_model<late_era_model<Scheme>, Scheme> {
  progress_flag flushed;

  late_era_model() {
    reclaim::core::verify::pause = {{0, "::publish_era(", [this] { return flushed.reached(1); }}};
  }
  void write() {
    this->swap_retire_and_flush();
    flushed.set(1);
  }
  void after() { this->after_all_freed(1); }
};

// Lazy leave. Crystalline (crystalline.hpp, close()): thread 0 reads the shared node in two
// operations, the second under the reservation the first kept (its era is still the clock's: no
// publication). Thread 1 swaps node 1 for node 2, retires node 1 and flushes; thread 2 runs a
// barrier. Both the flush's seal and the barrier release the kept reservations of threads between
// operations (revoke_kept()). If a revoker's CAS comes between the reader's operations, the
// reader's next start must wait for it and publish again: a reader that misses it (fault
// crystalline_revoke_unnoticed) trusts its cached era, loads node 1 before the swap, and a seal
// finds its reservation released and frees node 1 under its read. Hyaline (hyaline.hpp, end()):
// the reader's second operation resumes in the slot its first one kept (no DWCAS); the flush's
// retire and the barrier leave the slot on its behalf if it is kept between operations (revoke()),
// and a reader whose next start then takes itself for still counted (fault
// hyaline_revoke_unnoticed) loads node 1 unprotected: the writer's retire finds the slot empty (or
// counted only for the writer itself) and frees node 1 under its read.
template <class Scheme>
struct kept_model : shared_node_model<kept_model<Scheme>, Scheme, 3> {
  void read() {
    shared_node_model<kept_model<Scheme>, Scheme, 3>::read();
    shared_node_model<kept_model<Scheme>, Scheme, 3>::read();
  }
  void write() { this->swap_retire_and_flush(); }
  void bystander() { this->domain.barrier(); }
  void after() { this->after_all_freed(1); }
};

// The same reader against synchronize(): its second operation publishes nothing (Crystalline) or
// makes no RMW on its slot head (Hyaline), so the fence at its start (a locked CAS on the
// between-operations word, then fence_after_rmw()) is what orders its depth store before its load
// of the source, as wait_for_open_guards() needs. Without it (faults
// crystalline_begin_without_fence, hyaline_resume_without_fence) the writer's synchronize() may
// read the depth of the reader's first operation, then of its second, take the second for one
// begun after its unlink, and delete node 1 under the second's read.
template <class Scheme>
struct kept_grace_model : shared_node_model<kept_grace_model<Scheme>, Scheme> {
  void read() {
    shared_node_model<kept_grace_model<Scheme>, Scheme>::read();
    shared_node_model<kept_grace_model<Scheme>, Scheme>::read();
  }
  void write() { this->swap_then_synchronize(); }
};

}  // namespace

void add_batch_models(registry& r) {
  using reclaim::advance_every;
  using reclaim::fast_path;
  add_generic_models<reclaim::hyaline<>>(r, "batch", "hyaline");
  add_generic_models<reclaim::hyaline_1<>>(r, "batch", "hyaline_1");
  add_generic_models<reclaim::hyaline_s<>>(r, "batch", "hyaline_s");
  add_generic_models<reclaim::hyaline_1s<>>(r, "batch", "hyaline_1s");
  add_generic_models<reclaim::crystalline_l<>>(r, "batch", "crystalline_l");
  add_generic_models<reclaim::crystalline_w<>>(r, "batch", "crystalline_w");
  add_fast_clock_models<reclaim::hyaline_s<advance_every<1>>>(r, "batch", "hyaline_s",
                                                              "hyaline_s_clock");
  // One and two slots: a retire walks 32 slots by default, too many steps to fit in a reader's
  // protect() (racing_model); with one, every thread shares it.
  add_fast_clock_models<reclaim::hyaline<reclaim::slots<1>>>(r, "batch", "hyaline",
                                                             "hyaline_k1");
  add_fast_clock_models<reclaim::hyaline_s<reclaim::slots<2>, advance_every<1>>>(
      r, "batch", "hyaline_s", "hyaline_s_k2_clock");
  add_fast_clock_models<reclaim::hyaline_1s<advance_every<1>>>(r, "batch", "hyaline_1s",
                                                               "hyaline_1s_clock");
  add_fast_clock_models<reclaim::crystalline_l<advance_every<1>>>(r, "batch", "crystalline_l",
                                                                  "crystalline_l_clock");
  add_fast_clock_models<reclaim::crystalline_w<advance_every<1>>>(r, "batch", "crystalline_w",
                                                                  "crystalline_w_clock");
  r.add<helping_model<reclaim::crystalline_w<advance_every<1>, fast_path<0>>>>(
      "batch/helping/crystalline_w", "crystalline_w");
  r.add<two_readers_model<reclaim::hyaline<>, hyaline_decrement>>("batch/two_readers/hyaline",
                                                                  "hyaline");
  r.add<two_readers_model<reclaim::hyaline_s<>, hyaline_decrement>>(
      "batch/two_readers/hyaline_s", "hyaline_s");
  r.add<two_readers_model<reclaim::hyaline<reclaim::slots<1>>, hyaline_decrement>>(
      "batch/two_readers/hyaline_k1", "hyaline");
  r.add<two_readers_model<reclaim::crystalline_l<>, crystalline_decrement>>(
      "batch/two_readers/crystalline_l", "crystalline_l");
  r.add<two_readers_model<reclaim::crystalline_w<>, crystalline_decrement>>(
      "batch/two_readers/crystalline_w", "crystalline_w");
  r.add<late_era_model<reclaim::hyaline_s<>>>("batch/late_era/hyaline_s", "hyaline_s");
  r.add<late_era_model<reclaim::hyaline_1s<>>>("batch/late_era/hyaline_1s", "hyaline_1s");
  r.add<claimed_helper_model<reclaim::crystalline_w<advance_every<1>, fast_path<0>>>>(
      "batch/claimed_helper/crystalline_w", "crystalline_w");
  r.add<kept_model<reclaim::crystalline_l<>>>("batch/kept/crystalline_l", "crystalline_l");
  r.add<kept_model<reclaim::crystalline_w<>>>("batch/kept/crystalline_w", "crystalline_w");
  r.add<kept_grace_model<reclaim::crystalline_l<>>>("batch/kept_grace/crystalline_l",
                                                    "crystalline_l");
  r.add<kept_grace_model<reclaim::crystalline_w<>>>("batch/kept_grace/crystalline_w",
                                                    "crystalline_w");
  // Hyaline's lazy leave: one slot (every thread shares it, and a retire's walk is short) and the
  // defaults.
  r.add<kept_model<reclaim::hyaline<reclaim::slots<1>>>>("batch/kept/hyaline_k1", "hyaline");
  r.add<kept_model<reclaim::hyaline<>>>("batch/kept/hyaline", "hyaline");
  r.add<kept_model<reclaim::hyaline_s<reclaim::slots<2>>>>("batch/kept/hyaline_s_k2",
                                                            "hyaline_s");
  r.add<kept_grace_model<reclaim::hyaline<reclaim::slots<1>>>>("batch/kept_grace/hyaline_k1",
                                                               "hyaline");
  r.add<kept_grace_model<reclaim::hyaline_s<>>>("batch/kept_grace/hyaline_s", "hyaline_s");

  const std::vector<std::string> all = {"hyaline",    "hyaline_1",     "hyaline_s",
                                        "hyaline_1s", "crystalline_l", "crystalline_w"};
  r.mutants.push_back({"batch_refs_relaxed",
                       "a batch's reference count is decremented (hyaline: adjusted) with a "
                       "relaxed RMW instead of acq_rel",
                       all});
  r.mutants.push_back({"batch_free_at_one",
                       "a batch is freed when its count reaches 1 (and again at 0) instead of 0",
                       // Not hyaline_1, hyaline_1s: with a slot per thread every adjustment is a
                       // multiple of the contribution 2^40 (no push-over counts threads), so the
                       // count is never 1: the fault changes nothing there.
                       {"hyaline", "hyaline_s", "crystalline_l", "crystalline_w"}});
  r.mutants.push_back({"batch_era_no_validation",
                       "protect() publishes the era and returns the pointer it loaded before, "
                       "without loading it again under the new era",
                       {"hyaline_s", "hyaline_1s", "crystalline_l", "crystalline_w"}});
  r.mutants.push_back({"batch_retire_without_fence",
                       "a retire (hyaline) or seal (crystalline) reads the slots or reservations "
                       "without the full fence after the unlinks",
                       all,
                       "hyaline: not needed there. Its shared slots are checked with a seq_cst RMW "
                       "on each head (the DWCAS read), and a reader enters with an RMW on the same "
                       "head: if it comes later in the head's modification order it reads from "
                       "the retirer's RMW's release sequence, so the unlinks happen before its "
                       "loads (retire_batch()'s argument); F_r matters only for the robust "
                       "variants' era loads and hyaline_1's registry walk. hyaline_s: the "
                       "fence_after_rmw() after publish_era()'s CAS, which the checker needs "
                       "(hyaline.hpp), and Relacy's seq_cst loads, which read the slot era's last "
                       "seq_cst CAS, leave no schedule where F_r is missed; in C++ (and on a "
                       "machine whose RMW is no fence) the retirer's load of the era may still "
                       "pass its unlink without it",
                       {"hyaline", "hyaline_s"}});
  r.mutants.push_back({"hyaline_enter_relaxed",
                       "hyaline_1: entering swaps the thread's slot head with a relaxed exchange "
                       "instead of seq_cst",
                       {"hyaline_1", "hyaline_1s"}});
  r.mutants.push_back({"hyaline_leave_without_acquire",
                       "hyaline_1: leaving takes the slot's list with a release exchange instead "
                       "of acq_rel",
                       {"hyaline_1", "hyaline_1s"},
                       "the order is needed (on Arm the walk could read a pushed node's slot_next "
                       "and batch_ref before the push), but those are plain fields: Relacy checks "
                       "only rl::var and atomics, and a plain read sees the latest write"});
  r.mutants.push_back({"crystalline_w_no_freeze",
                       "a requester that claimed helpers does not freeze its reservations under "
                       "the hold (they are released while a helper may still read the source)",
                       {"crystalline_w"}});
  r.mutants.push_back({"crystalline_revoke_unnoticed",
                       "an operation's start that finds a revoker releasing its kept reservations "
                       "does not wait for it (and trusts the eras cached in its slots)",
                       {"crystalline_l", "crystalline_w"},
                       "the order is needed, but the window is a plain field: the owner must read "
                       "its slot's cached era after the revoker's CAS and before the revoker "
                       "resets it, and then load the node before the writer's swap while the "
                       "revoker's release of the reservation lands after the writer's seal. "
                       "Relacy does not check plain fields, and its random search does not place "
                       "the three threads so"});
  r.mutants.push_back({"hyaline_revoke_unnoticed",
                       "hyaline, hyaline_s: an operation's start that finds its record revoked "
                       "(its slot left on its behalf) takes itself for still counted there",
                       {"hyaline", "hyaline_s"}});
  r.mutants.push_back({"hyaline_resume_without_fence",
                       "hyaline, hyaline_s: an operation's start that resumes a kept slot (its "
                       "CAS on the between-operations word) is not followed by the full fence "
                       "that the locked instruction is",
                       {"hyaline", "hyaline_s"}});
  r.mutants.push_back({"crystalline_begin_without_fence",
                       "an operation's start (its CAS on the between-operations word) is not "
                       "followed by the full fence that the locked instruction is",
                       {"crystalline_l", "crystalline_w"}});
}

}  // namespace reclaim_verify
