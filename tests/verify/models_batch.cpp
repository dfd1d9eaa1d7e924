// The batch-counting schemes under the checker: Hyaline and Crystalline.
#include <reclaim/schemes/crystalline.hpp>
#include <reclaim/schemes/hyaline.hpp>

#include "generic_models.hpp"

namespace reclaim_verify {

void add_batch_models(registry& r) {
  add_generic_models<reclaim::hyaline<>>(r, "batch", "hyaline");
  add_generic_models<reclaim::hyaline_1<>>(r, "batch", "hyaline_1");
  add_generic_models<reclaim::crystalline_l<>>(r, "batch", "crystalline_l");
  add_generic_models<reclaim::crystalline_w<>>(r, "batch", "crystalline_w");
}

}  // namespace reclaim_verify
