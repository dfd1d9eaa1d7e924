// SPDX-License-Identifier: MIT
// The region schemes under the checker: rcu and Token-EBR (all four orders of freeing and passing).
#include <reclaim/schemes/rcu.hpp>
#include <reclaim/schemes/token_ebr.hpp>

#include "generic_models.hpp"

namespace reclaim_verify {

// A reader that begins its second operation late (injected: it stops before its first access in
// the domain's begin(), in the ring but idle) until thread 1, which swapped the node, retired it
// and flushes, has freed it: the token passed the idle reader each round (the skip's CAS, a
// release). The reader's announcing exchange must acquire what the passer knew, the unlink among
// it: its load of the round may be stale, and so may its read of the pointer. (Its first
// operation joins the ring, an RMW on the round that would carry the unlink itself. It waits for
// the free, not for the flushes' end: Relacy's loads return one of an atomic's last three values,
// and a third advance of the round would leave none from before the swap.)
template <class Scheme>
struct late_begin_model : shared_node_model<late_begin_model<Scheme>, Scheme> {
  progress_flag flushed;  // where the token took longer to come round

  void read() {
    { typename Scheme::guard first(this->domain); }
    reclaim::core::verify::pause = {{0, "domain::begin(", [this] {
                                       return this->domain.stats().freed == 1 ||
                                              flushed.reached(1);
                                     }}};
    shared_node_model<late_begin_model, Scheme>::read();
  }
  void write() {
    this->swap_and_retire();
    this->flush_times(4);
    flushed.set(1);
  }
};

// A reader whose second operation finds the token parked and leaves it there (its first picked
// the token up, and a thread picks up only every pick_up_every-th parked token it finds), while
// thread 1 swaps, retires and flushes: each flush picks the token up and passes it past the
// reader, skipping it as idle, or as active in the current round (argument (c) of
// token_ebr.hpp), or handing it the token if its operation began in an earlier round. Nothing
// else orders the reader's read after the unlink when a pass skips it as current: its load of the
// round must acquire the wrap that followed the unlink. The stats add up at the end.
template <class Scheme>
struct declined_pick_up_model : shared_node_model<declined_pick_up_model<Scheme>, Scheme> {
  void read() {
    { typename Scheme::guard first(this->domain); }
    shared_node_model<declined_pick_up_model, Scheme>::read();
  }
  void write() {
    this->swap_and_retire();
    this->flush_times(3);
  }
  void after() { this->after_all_freed(1); }
};

template <class Scheme>
void add_token_models(registry& r, const std::string& scheme) {
  add_generic_models<Scheme>(r, "region", scheme);
  r.add<late_begin_model<Scheme>>("region/late_begin/" + scheme, scheme);
  r.add<declined_pick_up_model<Scheme>>("region/declined_pick_up/" + scheme, scheme);
}

void add_region_models(registry& r) {
  add_generic_models<reclaim::rcu<>>(r, "region", "rcu");
  add_token_models<reclaim::token_naive<>>(r, "token_naive");
  add_token_models<reclaim::token_pass_first<>>(r, "token_pass_first");
  add_token_models<reclaim::token_periodic<>>(r, "token_periodic");
  add_token_models<reclaim::token_af<>>(r, "token_af");
  r.mutants.push_back({"rcu_end_relaxed",
                       "an operation ends with a relaxed store of no reservation instead of a "
                       "release",
                       {"rcu"}});
  r.mutants.push_back({"rcu_stamp_by_load",
                       "retire() stamps a node with a seq_cst load of the epoch instead of an RMW "
                       "(the reader that reads a later epoch does not synchronize with the unlink)",
                       {"rcu"}});
  r.mutants.push_back({"rcu_grace_one_epoch_short",
                       "synchronize() waits for reservations older than the epoch it read, not "
                       "for that epoch's too",
                       {"rcu"}});
  const std::vector<std::string> tokens{"token_naive", "token_pass_first", "token_periodic",
                                        "token_af"};
  r.mutants.push_back({"token_begin_relaxed",
                       "an operation announces its round with a relaxed exchange instead of "
                       "acq_rel",
                       tokens,
                       "caught under token_naive (late_begin). The other orders free the node "
                       "only after the pass that follows the receipt, a third advance of the "
                       "round since the swap, and Relacy's loads return one of an atomic's last "
                       "three values: the stale round the late reader would have to read is gone",
                       {"token_pass_first", "token_periodic", "token_af"}});
  r.mutants.push_back({"token_end_relaxed",
                       "an operation ends with a relaxed CAS instead of a release", tokens});
  r.mutants.push_back({"token_skip_active",
                       "a pass skips every active record instead of handing it the token",
                       tokens});
  r.mutants.push_back({"token_round_relaxed",
                       "an operation reads the round it announces with a relaxed load instead of "
                       "an acquire (a pass that skips it as current orders nothing before it)",
                       tokens,
                       "caught under token_naive (declined_pick_up), as token_begin_relaxed: "
                       "under the other orders the free comes a third advance of the round after "
                       "the swap, past the stale values Relacy's loads may return",
                       {"token_pass_first", "token_periodic", "token_af"}});
  r.mutants.push_back({"token_free_one_round_early",
                       "a receipt frees the previous bag with the oldest", tokens});
}

}  // namespace reclaim_verify
