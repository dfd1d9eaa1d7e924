// harris_list under every scheme that can protect it, through the typed container suite. Schemes whose
// machinery other containers already exercise in every variant run here in one representative
// variant each; a pair that cannot be protected would not compile (protects<Scheme, Container>).
#include "container_typed_tests.hpp"

namespace reclaim_test::containers {

using harris_list_pairs = ::testing::Types<
    harris_list<none>,
    harris_list<debra<>>,
    harris_list<qsbr<>>,
    harris_list<rcu<>>,
    harris_list<token_af<>>,
    harris_list<nbr<>>,
    harris_list<nbr_plus<>>,
    harris_list<nbr<reclaim::bag_threshold<64>>>,
    harris_list<nbr_plus<reclaim::bag_threshold<64>>>>;
INSTANTIATE_TYPED_TEST_SUITE_P(harris_list, container, harris_list_pairs);
INSTANTIATE_TYPED_TEST_SUITE_P(harris_list, container_lifecycle,
                               every_protected_pair<harris_list>);

}  // namespace reclaim_test::containers
