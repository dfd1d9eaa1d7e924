// guarded_ms_queue (the queue written with guard_ptr) under every scheme that serves guard_ptr,
// through the typed pool suite (pool_typed_tests.hpp); the schemes come from the library's
// declarations (reclaim::protects), so nbr and nbr_plus, which cannot serve guard_ptr, drop out.
#include "pool_typed_tests.hpp"

namespace reclaim_test::containers {

template <class S>
using int_guarded_queue = guarded_ms_queue<std::int64_t, S>;
INSTANTIATE_TYPED_TEST_SUITE_P(guarded_ms_queue, pool, every_protected_pair<int_guarded_queue>);

}  // namespace reclaim_test::containers
