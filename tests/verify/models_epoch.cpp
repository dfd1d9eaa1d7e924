// SPDX-License-Identifier: MIT
// The epoch family under the checker: the epoch engine (schemes/detail/epoch_engine.hpp) through
// each scheme's pacing.
#include <reclaim/schemes/debra.hpp>
#include <reclaim/schemes/ebr.hpp>
#include <reclaim/schemes/ner.hpp>
#include <reclaim/schemes/qsbr.hpp>

#include "generic_models.hpp"

namespace reclaim_verify {

// A reader preempted between its read of the epoch and its announcement (injected: it stops before
// the exchange in epoch_clock::announce()) while thread 1 swaps the node, retires it and flushes
// three times, moving the epoch past it: the reader must not announce the epoch it read, or its
// read of the pointer need not see the swap and finds the node freed ((1) in epoch_engine.hpp).
template <class Scheme>
struct late_announcement_model : shared_node_model<late_announcement_model<Scheme>, Scheme> {
  progress_flag flushed;

  late_announcement_model() {
    reclaim::core::verify::pause = {{0, "::announce(", [this] { return flushed.reached(1); }}};
  }
  void write() {
    this->swap_and_retire();
    this->flush_times(3);
    flushed.set(1);
  }
};

template <class Scheme>
void add_models(registry& r, const std::string& scheme) {
  add_generic_models<Scheme>(r, "epoch", scheme);
  r.add<late_announcement_model<Scheme>>("epoch/late_announcement/" + scheme, scheme);
}

void add_epoch_models(registry& r) {
  add_models<reclaim::ebr<>>(r, "ebr");
  add_models<reclaim::ner<>>(r, "ner");
  add_models<reclaim::debra<>>(r, "debra");
  add_models<reclaim::qsbr<>>(r, "qsbr");
  const std::vector<std::string> all{"ebr", "debra", "qsbr"};
  r.mutants.push_back({"epoch_announce_without_reread",
                       "an operation announces the epoch it read without re-reading it",
                       {"ebr", "debra"}});  // qsbr announces at quiescent states
  r.mutants.push_back({"epoch_pass_relaxed",
                       "a pass reads the announcements with relaxed loads instead of seq_cst",
                       all});
  r.mutants.push_back({"epoch_end_relaxed",
                       "an operation ends with a relaxed store of idle instead of a release",
                       {"ebr", "debra"}});  // qsbr's operations end without a store
  r.mutants.push_back({"epoch_free_one_epoch_early", "a bag tagged t is freed at t+2", all});
  r.mutants.push_back({"registry_head_acquire",
                       "a pass loads the registry's head with acquire (the fix found by the "
                       "qsbr model, reverted)",
                       all});
  r.mutants.push_back({"epoch_grace_from_announcements",
                       "synchronize() waits for a+2 of the announcements it sees (the defect "
                       "found by the grace model, reverted)",
                       all});
  r.mutants.push_back({"epoch_grace_one_epoch_short",
                       "synchronize() waits for a+1 instead of a+2", all});
}

}  // namespace reclaim_verify
