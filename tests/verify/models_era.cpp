// The era schemes under the checker: hazard eras, IBR and WFE (schemes/detail/hazard_eras.hpp,
// era_reclaim.hpp).
#include <reclaim/schemes/he.hpp>
#include <reclaim/schemes/ibr.hpp>
#include <reclaim/schemes/wfe.hpp>

#include "generic_models.hpp"

namespace reclaim_verify {

void add_era_models(registry& r) {
  add_generic_models<reclaim::he<>>(r, "era", "he");
  add_generic_models<reclaim::ibr<>>(r, "era", "ibr");
  add_generic_models<reclaim::wfe<>>(r, "era", "wfe");
}

}  // namespace reclaim_verify
