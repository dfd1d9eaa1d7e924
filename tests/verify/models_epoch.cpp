// The epoch family under the checker: the epoch engine (schemes/detail/epoch_engine.hpp) through
// each scheme's pacing.
#include <reclaim/schemes/debra.hpp>
#include <reclaim/schemes/ebr.hpp>
#include <reclaim/schemes/ner.hpp>
#include <reclaim/schemes/qsbr.hpp>

#include "generic_models.hpp"

namespace reclaim_verify {

void add_epoch_models(registry& r) {
  add_generic_models<reclaim::ebr<>>(r, "epoch", "ebr");
  add_generic_models<reclaim::ner<>>(r, "epoch", "ner");
  add_generic_models<reclaim::debra<>>(r, "epoch", "debra");
  add_generic_models<reclaim::qsbr<>>(r, "epoch", "qsbr");
  const std::vector<std::string> all{"ebr", "debra", "qsbr"};
  r.mutants.push_back({"epoch_announce_without_reread",
                       "an operation announces the epoch it read without re-reading it",
                       {"ebr", "debra"},  // qsbr announces at quiescent states
                       "needs the reader preempted between its read of the epoch and its "
                       "announcement for three whole advances"});
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
