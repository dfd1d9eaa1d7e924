// SPDX-License-Identifier: MIT
// harris_list_map with std::string keys and values under the representative schemes that protect it
// (container_suite.hpp), through the string-keyed map suite (map_suite.hpp).
#include "map_suite.hpp"

namespace reclaim_test::maps {

template <class K, class V, class S>
using harris_list_map = reclaim::ds::harris_list_map<K, V, S>;
INSTANTIATE_TYPED_TEST_SUITE_P(harris_list_map, string_map, representative_cases<harris_list_map>);

}  // namespace reclaim_test::maps
