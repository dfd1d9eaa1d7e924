// hm_hashmap under every scheme that can protect it, through the typed container suite. Schemes whose
// machinery other containers already exercise in every variant run here in one representative
// variant each; a pair that cannot be protected would not compile (protects<Scheme, Container>).
#include "container_typed_tests.hpp"

namespace reclaim_test::containers {

using hm_hashmap_pairs = ::testing::Types<
    hm_hashmap<none>,
    hm_hashmap<debra<>>,
    hm_hashmap<hp<>>,
    hm_hashmap<ebr<>>,
    hm_hashmap<ner<>>,
    hm_hashmap<qsbr<>>,
    hm_hashmap<rcu<>>,
    hm_hashmap<token_periodic<>>,
    hm_hashmap<token_af<>>,
    hm_hashmap<debra<reclaim::amortized_free<1>>>>;
INSTANTIATE_TYPED_TEST_SUITE_P(hm_hashmap, container, hm_hashmap_pairs);
INSTANTIATE_TYPED_TEST_SUITE_P(hm_hashmap, container_lifecycle,
                               every_protected_pair<hm_hashmap>);

}  // namespace reclaim_test::containers
