// SPDX-License-Identifier: MIT
// occ_avl_map with std::string keys and values under the representative schemes that protect it
// (container_suite.hpp), through the string-keyed map suite (map_suite.hpp).
#include "map_suite.hpp"

namespace reclaim_test::maps {

template <class K, class V, class S>
using occ_avl_map = reclaim::ds::occ_avl_map<K, V, S>;
INSTANTIATE_TYPED_TEST_SUITE_P(occ_avl_map, string_map, representative_cases<occ_avl_map>);

}  // namespace reclaim_test::maps
