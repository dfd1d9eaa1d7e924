// SPDX-License-Identifier: MIT
// hm_hashmap with std::string keys and values under every scheme that protects it, through the
// string-keyed map suite (map_suite.hpp).
#include "map_suite.hpp"

namespace reclaim_test::maps {

template <class K, class V, class S>
using hm_hashmap = reclaim::ds::hm_hashmap<K, V, S>;
INSTANTIATE_TYPED_TEST_SUITE_P(hm_hashmap, string_map, every_protected_case<hm_hashmap>);

}  // namespace reclaim_test::maps
