// The region schemes under the checker: rcu and Token-EBR.
#include <reclaim/schemes/rcu.hpp>
#include <reclaim/schemes/token_ebr.hpp>

#include "generic_models.hpp"

namespace reclaim_verify {

void add_region_models(registry& r) {
  add_generic_models<reclaim::rcu<>>(r, "region", "rcu");
  add_generic_models<reclaim::token_naive<>>(r, "region", "token_naive");
  add_generic_models<reclaim::token_pass_first<>>(r, "region", "token_pass_first");
}

}  // namespace reclaim_verify
