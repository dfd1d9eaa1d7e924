// PLACEHOLDER: a helper is writing this file.
#include "generic_models.hpp"

namespace reclaim_verify {

void add_signal_models(registry&) {}

}  // namespace reclaim_verify
