// SPDX-License-Identifier: MIT
// hm_list_restart, a reference container (container_suite.hpp): the typed container suite under the
// variants listed here, and its lifecycle half under every scheme that can protect it; a pair
// that cannot be protected would not compile (protects<Scheme, Container>).
#include "container_typed_tests.hpp"

namespace reclaim_test::containers {

using hm_list_restart_pairs = container_suite_pairs<::testing::Types<
    hm_list_restart<none>,
    hm_list_restart<debra<>>,
    hm_list_restart<hp<>>,
    hm_list_restart<rcu<>>,
    hm_list_restart<token_af<>>,
    hm_list_restart<nbr<>>,
    hm_list_restart<nbr_plus<>>,
    hm_list_restart<nbr<reclaim::scan_threshold<64>>>,
    hm_list_restart<nbr_plus<reclaim::scan_threshold<64>>>,
    hm_list_restart<stamp_it<>>,
    hm_list_restart<lfrc<>>>>;
INSTANTIATE_TYPED_TEST_SUITE_P(hm_list_restart, container, hm_list_restart_pairs);
INSTANTIATE_TYPED_TEST_SUITE_P(hm_list_restart, container_lifecycle,
                               every_protected_pair<hm_list_restart>);

}  // namespace reclaim_test::containers
