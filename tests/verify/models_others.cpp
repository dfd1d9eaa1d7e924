// The schemes that run the generic models without faults of their own yet: ner (ebr's pacing), rcu
// and Token-EBR; the era schemes (hazard eras, IBR, WFE); the batch-counting ones (Hyaline,
// Crystalline). Stamp-it is not here yet: its models fail in a way not yet diagnosed
// (docs/verification.md, "What the model does not cover").
#include <reclaim/schemes/crystalline.hpp>
#include <reclaim/schemes/he.hpp>
#include <reclaim/schemes/hyaline.hpp>
#include <reclaim/schemes/ibr.hpp>
#include <reclaim/schemes/ner.hpp>
#include <reclaim/schemes/rcu.hpp>
#include <reclaim/schemes/token_ebr.hpp>
#include <reclaim/schemes/wfe.hpp>

#include "generic_models.hpp"

namespace reclaim_verify {

void add_other_models(registry& r) {
  add_generic_models<reclaim::ner<>>(r, "epoch", "ner");
  add_generic_models<reclaim::rcu<>>(r, "region", "rcu");
  add_generic_models<reclaim::token_naive<>>(r, "region", "token_naive");
  add_generic_models<reclaim::token_pass_first<>>(r, "region", "token_pass_first");
  add_generic_models<reclaim::he<>>(r, "era", "he");
  add_generic_models<reclaim::ibr<>>(r, "era", "ibr");
  add_generic_models<reclaim::wfe<>>(r, "era", "wfe");
  add_generic_models<reclaim::hyaline<>>(r, "batch", "hyaline");
  add_generic_models<reclaim::hyaline_1<>>(r, "batch", "hyaline_1");
  add_generic_models<reclaim::crystalline_l<>>(r, "batch", "crystalline_l");
  add_generic_models<reclaim::crystalline_w<>>(r, "batch", "crystalline_w");
}

}  // namespace reclaim_verify
