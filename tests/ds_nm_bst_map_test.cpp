// SPDX-License-Identifier: MIT
// nm_bst_map with std::string keys and values under the representative schemes that protect it
// (container_suite.hpp), through the string-keyed map suite (map_suite.hpp).
#include "map_suite.hpp"

namespace reclaim_test::maps {

template <class K, class V, class S>
using nm_bst_map = reclaim::ds::nm_bst_map<K, V, S>;
INSTANTIATE_TYPED_TEST_SUITE_P(nm_bst_map, string_map, representative_cases<nm_bst_map>);

}  // namespace reclaim_test::maps
