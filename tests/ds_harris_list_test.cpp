// SPDX-License-Identifier: MIT
// harris_list under the representative schemes that can protect it (container_suite.hpp), through
// the typed container suite and its lifecycle half; the pairs come from the library's
// declarations (reclaim::protects), as the lab derives its applicability matrix.
#include "container_typed_tests.hpp"

namespace reclaim_test::containers {

INSTANTIATE_TYPED_TEST_SUITE_P(harris_list, container,
                               representative_pairs<harris_list>);
INSTANTIATE_TYPED_TEST_SUITE_P(harris_list, container_lifecycle,
                               representative_pairs<harris_list>);

}  // namespace reclaim_test::containers
