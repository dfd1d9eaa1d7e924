// SPDX-License-Identifier: MIT
// guarded_ms_queue (the queue written with guard_ptr) under the representative schemes that serve
// guard_ptr, through the typed pool suite (pool_typed_tests.hpp); the schemes come from the
// library's declarations (reclaim::protects), so nbr_plus, which cannot serve guard_ptr, drops out.
#include "pool_typed_tests.hpp"

namespace reclaim_test::containers {

template <class S>
using int_guarded_queue = guarded_ms_queue<std::int64_t, S>;
INSTANTIATE_TYPED_TEST_SUITE_P(guarded_ms_queue, pool, representative_pairs<int_guarded_queue>);

}  // namespace reclaim_test::containers
