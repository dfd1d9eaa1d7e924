// SPDX-License-Identifier: MIT
// treiber_stack under the representative schemes that can protect it, through the typed pool suite
// (pool_typed_tests.hpp); the schemes come from the library's declarations (reclaim::protects).
#include "pool_typed_tests.hpp"

namespace reclaim_test::containers {

template <class S>
using int_stack = treiber_stack<std::int64_t, S>;
INSTANTIATE_TYPED_TEST_SUITE_P(treiber_stack, pool, representative_pairs<int_stack>);

}  // namespace reclaim_test::containers
