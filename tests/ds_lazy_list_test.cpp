// SPDX-License-Identifier: MIT
// lazy_list, a reference container (container_suite.hpp): the typed container suite under the
// variants listed here, and its lifecycle half under every scheme that can protect it; a pair
// that cannot be protected would not compile (protects<Scheme, Container>).
#include "container_typed_tests.hpp"

namespace reclaim_test::containers {

using lazy_list_pairs = container_suite_pairs<::testing::Types<
    lazy_list<none>,
    lazy_list<debra<>>,
    lazy_list<hp<>>,
    lazy_list<ebr<>>,
    lazy_list<ner<>>,
    lazy_list<qsbr<>>,
    lazy_list<rcu<>>,
    lazy_list<token_naive<>>,
    lazy_list<token_pass_first<>>,
    lazy_list<token_periodic<>>,
    lazy_list<token_af<>>,
    lazy_list<nbr<>>,
    lazy_list<nbr_plus<>>,
    lazy_list<nbr<reclaim::scan_threshold<64>>>,
    lazy_list<nbr_plus<reclaim::scan_threshold<64>, reclaim::amortized_free<1>>>,
    lazy_list<reclaim::hp_asym<>>,
    lazy_list<reclaim::hazard_pop<>>,
    lazy_list<reclaim::epoch_pop<>>,
    lazy_list<stamp_it<>>>>;
INSTANTIATE_TYPED_TEST_SUITE_P(lazy_list, container, lazy_list_pairs);
INSTANTIATE_TYPED_TEST_SUITE_P(lazy_list, container_lifecycle,
                               every_protected_pair<lazy_list>);

}  // namespace reclaim_test::containers
