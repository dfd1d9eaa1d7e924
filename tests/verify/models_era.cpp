// SPDX-License-Identifier: MIT
// The era schemes under the checker: hazard eras, IBR and WFE (schemes/detail/hazard_eras.hpp,
// era_reclaim.hpp).
//
// The generic models run each scheme with its defaults, under which the clock never moves in a
// model (it advances every 64 allocations): every node is born and retired in era 1, and the
// eras' protocol is only the Dekker pattern of a published era against a retirer's fence. The
// fast-clock models (advance_every<1>: every create() moves the clock, wfe helping first) make the
// eras matter (clock_models.hpp).
#include <reclaim/schemes/he.hpp>
#include <reclaim/schemes/ibr.hpp>
#include <reclaim/schemes/wfe.hpp>

#include "clock_models.hpp"

namespace reclaim_verify {

void add_era_models(registry& r) {
  using reclaim::advance_every;
  using reclaim::fast_path;
  add_generic_models<reclaim::he<>>(r, "era", "he");
  add_generic_models<reclaim::ibr<>>(r, "era", "ibr");
  add_generic_models<reclaim::wfe<>>(r, "era", "wfe");
  add_fast_clock_models<reclaim::he<advance_every<1>>>(r, "era", "he", "he_clock");
  r.add<stale_retire_era_model<reclaim::he<advance_every<1>>>>("era/stale_retire_era/he_clock",
                                                               "he");
  r.add<stale_retire_era_model<reclaim::ibr<advance_every<1>>>>(
      "era/stale_retire_era/ibr_clock", "ibr");
  r.add<stale_retire_era_model<reclaim::wfe<advance_every<1>>>>(
      "era/stale_retire_era/wfe_clock", "wfe");
  add_fast_clock_models<reclaim::ibr<advance_every<1>>>(r, "era", "ibr", "ibr_clock");
  add_fast_clock_models<reclaim::wfe<advance_every<1>>>(r, "era", "wfe", "wfe_clock");
  // Every protect() on the slow path: a request that the writers' clock advances help.
  add_fast_clock_models<reclaim::wfe<advance_every<1>, fast_path<0>>>(r, "era", "wfe", "wfe_help");

  r.mutants.push_back({"era_no_validation",
                       "protect() publishes the era and returns the pointer it loaded before, "
                       "without loading it again under the new era",
                       {"he", "ibr", "wfe"}});
  r.mutants.push_back({"era_publish_relaxed",
                       "a reader publishes its era (he, wfe: the slot; ibr: the interval) with a "
                       "relaxed store instead of seq_cst",
                       {"he", "ibr", "wfe"}});
  r.mutants.push_back({"era_clear_relaxed",
                       "a reservation is cleared at the guard's end with a relaxed store instead "
                       "of a release",
                       {"he", "ibr", "wfe"}});
  r.mutants.push_back({"era_birth_one_too_young",
                       "create() stamps the birth era one above the clock it read",
                       {"he", "ibr", "wfe"}});
  r.mutants.push_back({"era_retire_without_fence",
                       "retire() reads the retire era without the full fence after the unlink",
                       {"he", "ibr", "wfe"}});
}

}  // namespace reclaim_verify
