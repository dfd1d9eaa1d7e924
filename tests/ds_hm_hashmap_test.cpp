// SPDX-License-Identifier: MIT
// hm_hashmap under the representative schemes that can protect it (container_suite.hpp), through
// the typed container suite and its lifecycle half; the pairs come from the library's
// declarations (reclaim::protects), as the lab derives its applicability matrix.
#include "container_typed_tests.hpp"

namespace reclaim_test::containers {

INSTANTIATE_TYPED_TEST_SUITE_P(hm_hashmap, container,
                               representative_pairs<hm_hashmap>);
INSTANTIATE_TYPED_TEST_SUITE_P(hm_hashmap, container_lifecycle,
                               representative_pairs<hm_hashmap>);

}  // namespace reclaim_test::containers
