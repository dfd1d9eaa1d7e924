// SPDX-License-Identifier: MIT
// hm_hashmap_restart with std::string keys and values under every scheme that protects it (nbr and
// nbr_plus included), through the string-keyed map suite (map_suite.hpp).
#include "map_suite.hpp"

namespace reclaim_test::maps {

template <class K, class V, class S>
using hm_hashmap_restart = reclaim::ds::hm_hashmap_restart<K, V, S>;
INSTANTIATE_TYPED_TEST_SUITE_P(hm_hashmap_restart, string_map,
                               every_protected_case<hm_hashmap_restart>);

}  // namespace reclaim_test::maps
