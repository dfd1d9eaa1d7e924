// SPDX-License-Identifier: MIT
// The signalling schemes under the checker: hazard_pop and epoch_pop (Publish-on-Ping: a scan pings
// the threads that may hold a hazard and waits for their handlers' answers, core/ping.hpp), nbr and
// nbr_plus (a round signals the threads in a read phase, whose handlers restart them from the
// read phase's start, schemes/detail/nbr_signal.hpp).
//
// A fiber cannot receive a signal: in the verification build a sent signal is pending for the
// simulated thread, which runs the scheme's own handler at one of its later checked accesses, the
// point chosen by the checker (core/verify/relacy.hpp, "Signals"). So every model here in which a
// reclaimer scans or rounds while another thread reads has pings answered, and read phases
// restarted, at every point of the read the checker reaches; nbr's handler jumps back to the read
// phase's restart point with siglongjmp, on the simulated thread's own stack.
#include <reclaim/ds/hm_list_restart.hpp>
#include <reclaim/read_phase.hpp>
#include <reclaim/schemes/epoch_pop.hpp>
#include <reclaim/schemes/hazard_pop.hpp>
#include <reclaim/schemes/nbr.hpp>

#include "generic_models.hpp"

namespace reclaim_verify {

namespace {

// nbr's form of thread 0's read (docs/writing-a-container.md): a read phase from the restart point
// reads the shared node (and its payload: a read phase may dereference what it reached), then a
// write phase reserves it and reads it again. `slow`: between the two, the read phase waits until
// thread 1 has flushed three times, so that every round of thread 1 finds it reading: it must be
// restarted (or the round must wait for it) before the node is freed.
template <class Model, class Scheme, bool Slow>
struct read_phase_model : shared_node_model<Model, Scheme> {
  progress_flag flushed;  // 1: thread 1 has flushed three times

  void read() {
    typename Scheme::guard g(this->domain);
    RECLAIM_READ_PHASE(g);
    // Assigned after the restart point, before any use: a restart finds nothing stale here.
    node<Scheme>* p = g.protect(this->shared, 0);
    const int seen = this->read_node(p);
    if constexpr (Slow) flushed.wait_until(1);
    g.write_phase(p);
    RL_ASSERT(p->read() == seen);
  }
  void flush_three_times() {
    this->flush_times(3);
    flushed.set(1);
  }
};

// retire_model, barrier_model and grace_model (generic_models.hpp) with that read.
template <class Scheme, bool Slow>
struct nbr_retire_model : read_phase_model<nbr_retire_model<Scheme, Slow>, Scheme, Slow> {
  void write() {
    this->swap_and_retire();
    this->flush_three_times();
  }
  void after() { this->after_all_freed(1); }
};
template <class Scheme>
struct nbr_barrier_model : read_phase_model<nbr_barrier_model<Scheme>, Scheme, false> {
  void write() { this->swap_then_barrier(); }
};
template <class Scheme>
struct nbr_grace_model : read_phase_model<nbr_grace_model<Scheme>, Scheme, false> {
  void write() { this->swap_then_synchronize(); }
};

template <class Scheme>
void add_nbr_models(registry& r, const std::string& scheme) {
  r.add<nbr_retire_model<Scheme, false>>("signal/retire/" + scheme, scheme);
  r.add<nbr_retire_model<Scheme, true>>("signal/slow_reader/" + scheme, scheme);
  r.add<nbr_barrier_model<Scheme>>("signal/barrier/" + scheme, scheme);
  r.add<nbr_grace_model<Scheme>>("signal/grace/" + scheme, scheme);
  using restart_list = reclaim::ds::hm_list_restart<int, Scheme>;
  r.add<list_model<Scheme, restart_list>>("signal/list/" + scheme, scheme);
}

}  // namespace

void add_signal_models(registry& r) {
  // Process-wide state that installing a handler makes on first use (its lock: core/platform/
  // fork.hpp), made here before any simulation, outside the checker's heap (as main.cpp makes the
  // live domains' table). The domains install the same handlers again, finding them there.
  reclaim::core::install_signal_handler(reclaim::rt_signal<4>::number(),
                                        reclaim::rt_signal<4>::describe(), "nbr",
                                        &reclaim::detail::nbr_on_signal);
  reclaim::core::install_signal_handler(reclaim::rt_signal<5>::number(),
                                        reclaim::rt_signal<5>::describe(),
                                        "hazard_pop (Publish-on-Ping)",
                                        &reclaim::core::detail::answer_ping);

  add_generic_models<reclaim::hazard_pop<>>(r, "signal", "hazard_pop");
  add_generic_models<reclaim::epoch_pop<>>(r, "signal", "epoch_pop");
  add_nbr_models<reclaim::nbr<>>(r, "nbr");
  add_nbr_models<reclaim::nbr_plus<>>(r, "nbr_plus");

  r.mutants.push_back({"pop_answer_relaxed",
                       "the ping's handler stores its answer relaxed instead of release: a scanner "
                       "that reads the answer need not see the hazard stored before the ping",
                       {"hazard_pop", "epoch_pop"}});
  r.mutants.push_back({"pop_scan_without_answers",
                       "a scan pings the active threads and reads their hazards without waiting "
                       "for the answers",
                       {"hazard_pop", "epoch_pop"}});
  r.mutants.push_back({"nbr_round_without_wait",
                       "a round signals the threads it saw reading and frees without waiting for "
                       "them to leave their read phases (the published implementations' way)",
                       {"nbr", "nbr_plus"}});
  r.mutants.push_back({"nbr_reserve_after_phase_end",
                       "write_phase() ends the read phase (the seq_cst RMW) before it stores its "
                       "reservations",
                       {"nbr", "nbr_plus"}});
  r.mutants.push_back({"nbr_round_without_fence",
                       "a round reads the phase words without the full fence after the unlinks "
                       "(the fix the grace model found, reverted)",
                       {"nbr", "nbr_plus"}});
  r.mutants.push_back({"rmw_not_a_fence",
                       "core::fence_after_rmw() withheld: the checker is not told that a seq_cst "
                       "RMW is a full fence (nbr's read-phase RMW, epoch_pop's announcement, lfrc's "
                       "count), as it is on x86-64 and C++ does not promise",
                       {"nbr", "nbr_plus", "epoch_pop", "lfrc"}});
}

}  // namespace reclaim_verify
