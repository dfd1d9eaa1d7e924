// SPDX-License-Identifier: MIT
// lazy_skiplist_map with std::string keys and values under the representative schemes that
// protect it, sized for it (reclaim::sized_for; container_suite.hpp), through the string-keyed map
// suite (map_suite.hpp).
#include "map_suite.hpp"

namespace reclaim_test::maps {

template <class K, class V, class S>
using lazy_skiplist_map = reclaim::ds::lazy_skiplist_map<
    K, V, reclaim::sized_for<S, reclaim::ds::lazy_skiplist_map<K, V, reclaim::none>>>;
INSTANTIATE_TYPED_TEST_SUITE_P(lazy_skiplist_map, string_map,
                               representative_cases<lazy_skiplist_map>);

}  // namespace reclaim_test::maps
