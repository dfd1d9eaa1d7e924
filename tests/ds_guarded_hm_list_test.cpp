// SPDX-License-Identifier: MIT
// guarded_hm_list (the Harris-Michael list written with guard_ptr) through the typed container
// suite, under the representative schemes that serve guard_ptr (nbr_plus does not:
// protects<Scheme, Container> leaves it out). Its algorithm is hm_list's, which
// ds_hm_list_test.cpp runs under every scheme.
#include "container_typed_tests.hpp"

namespace reclaim_test::containers {

INSTANTIATE_TYPED_TEST_SUITE_P(guarded_hm_list, container, representative_pairs<guarded_hm_list>);
INSTANTIATE_TYPED_TEST_SUITE_P(guarded_hm_list, container_lifecycle,
                               representative_pairs<guarded_hm_list>);

}  // namespace reclaim_test::containers
