// SPDX-License-Identifier: MIT
// dgt_bst under the representative schemes that can protect it (container_suite.hpp), through
// the typed container suite and its lifecycle half; the pairs come from the library's
// declarations (reclaim::protects), as the lab derives its applicability matrix.
#include "container_typed_tests.hpp"

namespace reclaim_test::containers {

INSTANTIATE_TYPED_TEST_SUITE_P(dgt_bst, container,
                               representative_pairs<dgt_bst>);
INSTANTIATE_TYPED_TEST_SUITE_P(dgt_bst, container_lifecycle,
                               representative_pairs<dgt_bst>);

}  // namespace reclaim_test::containers
