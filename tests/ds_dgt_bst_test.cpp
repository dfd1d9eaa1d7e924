// dgt_bst under every scheme that can protect it, through the typed container suite. Schemes whose
// machinery other containers already exercise in every variant run here in one representative
// variant each; a pair that cannot be protected would not compile (protects<Scheme, Container>).
#include "container_typed_tests.hpp"

namespace reclaim_test::containers {

using dgt_bst_pairs = ::testing::Types<
    dgt_bst<none>,
    dgt_bst<debra<>>,
    dgt_bst<ebr<>>,
    dgt_bst<qsbr<>>,
    dgt_bst<rcu<>>,
    dgt_bst<token_af<>>,
    dgt_bst<nbr<>>,
    dgt_bst<nbr_plus<>>,
    dgt_bst<nbr<reclaim::bag_threshold<64>>>,
    dgt_bst<nbr_plus<reclaim::bag_threshold<64>>>>;
INSTANTIATE_TYPED_TEST_SUITE_P(dgt_bst, container, dgt_bst_pairs);
INSTANTIATE_TYPED_TEST_SUITE_P(dgt_bst, container_lifecycle,
                               every_protected_pair<dgt_bst>);

}  // namespace reclaim_test::containers
