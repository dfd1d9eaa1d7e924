// SPDX-License-Identifier: MIT
// ms_queue under every scheme that can protect it, through the typed pool suite
// (pool_typed_tests.hpp); the schemes come from the library's declarations (reclaim::protects).
#include "pool_typed_tests.hpp"

namespace reclaim_test::containers {

template <class S>
using int_queue = ms_queue<std::int64_t, S>;
INSTANTIATE_TYPED_TEST_SUITE_P(ms_queue, pool, every_protected_pair<int_queue>);

}  // namespace reclaim_test::containers
