// SPDX-License-Identifier: MIT
// The hazard-pointer family under the checker: hp (symmetric fences) and the asymmetric variants,
// whose process-wide barrier is modelled by what it guarantees (core/verify/relacy.hpp).
#include <optional>

#include <reclaim/ds/lazy_list.hpp>
#include <reclaim/schemes/hp.hpp>
#include <reclaim/schemes/hp_asym.hpp>
#include <reclaim/schemes/hp_mprotect.hpp>
#include <reclaim/schemes/hp_splitcas.hpp>

#include "generic_models.hpp"

namespace reclaim_verify {

// A lazy list of keys 1, 2 and 3: thread 0 looks 3 up, walking past 1 and 2, while thread 1 erases
// 1, then 2, and scans. The reader may stand on node 1 once it is removed, with node 2 freed: its
// next protect() there must fail (erase() pointed node 1's next at the tail) rather than reach
// node 2 (and the redirect must be a release: a reader that finds the tail finds node 1 marked).
template <class Scheme>
struct lazy_list_model : model<lazy_list_model<Scheme>, 2> {
  typename Scheme::domain domain;
  std::optional<reclaim::ds::lazy_list<int, Scheme>> list;

  void before() {
    list.emplace(domain);
    for (int key : {1, 2, 3}) list->insert(key);
  }
  void thread(unsigned i) {
    if (i == 0) {
      RL_ASSERT(list->contains(3));
    } else {
      RL_ASSERT(list->erase(1) && list->erase(2));
      domain.flush();
    }
    thread_exits();
  }
  void after() {
    RL_ASSERT(!list->contains(1) && !list->contains(2) && list->contains(3));
    list.reset();
    expect_all_freed(domain, 2);
    thread_exits();
  }
};

void add_hp_models(registry& r) {
  add_generic_models<reclaim::hp<>>(r, "hp", "hp");
  add_generic_models<reclaim::hp_asym<>>(r, "hp", "hp_asym");
  add_generic_models<reclaim::hp_mprotect<>>(r, "hp", "hp_mprotect");
  add_generic_models<reclaim::hp_splitcas<>>(r, "hp", "hp_splitcas");
  // The lazy list, whose erase() points a removed node's next at the tail so that a search
  // standing on it fails its next protect() (instead of checking every predecessor's mark).
  r.add<lazy_list_model<reclaim::hp<>>>("hp/lazy_list/hp", "hp");
  r.add<lazy_list_model<reclaim::hp_asym<>>>("hp/lazy_list/hp_asym", "hp_asym");
  r.mutants.push_back({"hp_no_validation",
                       "protect() publishes a hazard and returns without re-reading the source",
                       {"hp", "hp_asym", "hp_mprotect", "hp_splitcas"}});
  r.mutants.push_back({"hp_clear_relaxed",
                       "a hazard is cleared with a relaxed store instead of a release",
                       {"hp", "hp_asym", "hp_mprotect", "hp_splitcas"}});
  r.mutants.push_back({"hp_scan_without_heavy_side",
                       "a scan reads the hazards without running the fence's heavy side first",
                       {"hp_asym", "hp_mprotect", "hp_splitcas"}});
  r.mutants.push_back({"hp_synchronize_without_heavy_side",
                       "synchronize() reads the guards' depths without the heavy side (the defect "
                       "issue 25 fixed, reverted)",
                       {"hp_asym", "hp_mprotect", "hp_splitcas"}});
}

}  // namespace reclaim_verify
