// SPDX-License-Identifier: MIT
// The hazard-pointer family under the checker: hp (symmetric fences) and the asymmetric variants,
// whose process-wide barrier is modelled by what it guarantees (core/verify/relacy.hpp).
#include <reclaim/schemes/hp.hpp>
#include <reclaim/schemes/hp_asym.hpp>
#include <reclaim/schemes/hp_mprotect.hpp>
#include <reclaim/schemes/hp_splitcas.hpp>

#include "generic_models.hpp"

namespace reclaim_verify {

void add_hp_models(registry& r) {
  add_generic_models<reclaim::hp<>>(r, "hp", "hp");
  add_generic_models<reclaim::hp_asym<>>(r, "hp", "hp_asym");
  add_generic_models<reclaim::hp_mprotect<>>(r, "hp", "hp_mprotect");
  add_generic_models<reclaim::hp_splitcas<>>(r, "hp", "hp_splitcas");
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
