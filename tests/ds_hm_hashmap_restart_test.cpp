// SPDX-License-Identifier: MIT
// hm_hashmap_restart under the representative schemes that can protect it (container_suite.hpp),
// through the typed container suite and its lifecycle half; the pairs come from the library's
// declarations (reclaim::protects), as the lab derives its applicability matrix.
#include "container_typed_tests.hpp"

namespace reclaim_test::containers {

INSTANTIATE_TYPED_TEST_SUITE_P(hm_hashmap_restart, container,
                               representative_pairs<hm_hashmap_restart>);
INSTANTIATE_TYPED_TEST_SUITE_P(hm_hashmap_restart, container_lifecycle,
                               representative_pairs<hm_hashmap_restart>);

namespace {

// The default table keeps about one key per bucket, so the suite above rarely meets a marked node
// in a search. Eight buckets make long, contended lists: searches keep meeting marked nodes and
// restart from their bucket's head, under signal rounds (nbr_plus, small bags) and under hazard
// pointers.
TEST(hm_hashmap_restart_buckets, concurrent_updates_in_few_buckets_keep_contents_consistent) {
  run_stress<hm_hashmap_restart<nbr_plus<reclaim::scan_threshold<64>>>>(4, 1024, std::size_t{8});
  run_stress<hm_hashmap_restart<hp<>>>(4, 1024, std::size_t{8});
}

}  // namespace
}  // namespace reclaim_test::containers
