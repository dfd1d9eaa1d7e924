// SPDX-License-Identifier: MIT
// hm_list, a reference container (container_suite.hpp): the typed container suite under the
// variants listed here, and its lifecycle half under every scheme that can protect it; a pair
// that cannot be protected would not compile (protects<Scheme, Container>).
#include "container_typed_tests.hpp"

namespace reclaim_test::containers {

using hm_list_pairs = container_suite_pairs<::testing::Types<
    hm_list<none>,
    hm_list<debra<>>,
    hm_list<hp<>>,
    hm_list<ebr<>>,
    hm_list<ner<>>,
    hm_list<qsbr<>>,
    hm_list<rcu<>>,
    hm_list<token_naive<>>,
    hm_list<token_pass_first<>>,
    hm_list<token_periodic<>>,
    hm_list<token_af<>>,
    hm_list<reclaim::hp_asym<>>,
    hm_list<reclaim::hazard_pop<>>,
    hm_list<reclaim::epoch_pop<>>,
    hm_list<stamp_it<>>,
    hm_list<lfrc<>>,
    hm_list<reclaim::he<>>,
    hm_list<reclaim::ibr<>>,
    hm_list<reclaim::wfe<>>,
    hm_list<reclaim::hyaline<>>,
    hm_list<reclaim::hyaline_1<>>,
    hm_list<reclaim::hyaline_s<>>,
    hm_list<reclaim::hyaline_1s<>>,
    hm_list<reclaim::crystalline_l<>>,
    hm_list<reclaim::crystalline_w<>>>>;
INSTANTIATE_TYPED_TEST_SUITE_P(hm_list, container, hm_list_pairs);
INSTANTIATE_TYPED_TEST_SUITE_P(hm_list, container_lifecycle,
                               every_protected_pair<hm_list>);

}  // namespace reclaim_test::containers
