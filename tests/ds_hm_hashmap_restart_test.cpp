// hm_hashmap_restart under every scheme that can protect it, through the typed container suite.
// Schemes whose machinery other containers already exercise in every variant run here in one
// representative variant each; nbr and nbr_plus, the schemes this form exists for, run with their
// default bags and with small ones (signal rounds during the test). A pair that cannot be protected
// would not compile (the container's static_assert).
#include "container_typed_tests.hpp"

namespace reclaim_test::containers {

using hm_hashmap_restart_pairs = ::testing::Types<
    hm_hashmap_restart<none>,
    hm_hashmap_restart<debra<>>,
    hm_hashmap_restart<hp<>>,
    hm_hashmap_restart<rcu<>>,
    hm_hashmap_restart<token_af<>>,
    hm_hashmap_restart<nbr<>>,
    hm_hashmap_restart<nbr_plus<>>,
    hm_hashmap_restart<nbr<reclaim::bag_threshold<64>>>,
    hm_hashmap_restart<nbr_plus<reclaim::bag_threshold<64>>>>;
INSTANTIATE_TYPED_TEST_SUITE_P(hm_hashmap_restart, container, hm_hashmap_restart_pairs);
INSTANTIATE_TYPED_TEST_SUITE_P(hm_hashmap_restart, container_lifecycle,
                               every_protected_pair<hm_hashmap_restart>);

namespace {

// The default table keeps about one key per bucket, so the suite above rarely meets a marked node
// in a search. Eight buckets make long, contended lists: searches keep meeting marked nodes and
// restart from their bucket's head, under signal rounds (nbr_plus, small bags) and under hazard
// pointers.
TEST(hm_hashmap_restart_buckets, concurrent_updates_in_few_buckets_keep_contents_consistent) {
  run_stress<hm_hashmap_restart<nbr_plus<reclaim::bag_threshold<64>>>>(4, 1024, std::size_t{8});
  run_stress<hm_hashmap_restart<hp<>>>(4, 1024, std::size_t{8});
}

}  // namespace
}  // namespace reclaim_test::containers
