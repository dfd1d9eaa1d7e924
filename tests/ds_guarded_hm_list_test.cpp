// guarded_hm_list (the Harris-Michael list written with guard_ptr) through the typed container
// suite. Its algorithm is hm_list's, which ds_hm_list_test.cpp runs under every variant; here each
// kind of guard_ptr protection runs once: none, a region hold under an epoch scheme (debra), a
// stretch without quiescent states (qsbr), per-operation reservations (rcu), the token (token_af)
// and hazard slots from the thread's pool (hp). The lifecycle suite runs every scheme that serves
// guard_ptr (nbr and nbr_plus do not: protects<Scheme, Container> leaves them out).
#include "container_typed_tests.hpp"

namespace reclaim_test::containers {

using guarded_hm_list_pairs =
    ::testing::Types<guarded_hm_list<none>, guarded_hm_list<debra<>>, guarded_hm_list<hp<>>,
                     guarded_hm_list<qsbr<>>, guarded_hm_list<rcu<>>,
                     guarded_hm_list<token_af<>>>;
INSTANTIATE_TYPED_TEST_SUITE_P(guarded_hm_list, container, guarded_hm_list_pairs);
INSTANTIATE_TYPED_TEST_SUITE_P(guarded_hm_list, container_lifecycle,
                               every_protected_pair<guarded_hm_list>);

}  // namespace reclaim_test::containers
