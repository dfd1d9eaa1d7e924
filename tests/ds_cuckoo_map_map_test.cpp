// SPDX-License-Identifier: MIT
// cuckoo_map with std::string keys and values under the representative schemes
// (container_suite.hpp) through the string-keyed map suite (map_suite.hpp), whose maps keep their
// default table; and the same concurrent workload in a map that starts with one bucket, so that
// every element is copied into table after table while threads use it: each key and value still
// destroyed exactly once.
#include "map_suite.hpp"

namespace reclaim_test::maps {

template <class K, class V, class S>
using cuckoo_map = reclaim::ds::cuckoo_map<K, V, S>;
INSTANTIATE_TYPED_TEST_SUITE_P(cuckoo_map, string_map, representative_cases<cuckoo_map>);

template <class Case>
class cuckoo_string_map_resize : public ::testing::Test {};
TYPED_TEST_SUITE(cuckoo_string_map_resize, representative_cases<cuckoo_map>);

TYPED_TEST(cuckoo_string_map_resize, copies_made_by_resizes_are_each_destroyed_exactly_once) {
  using M = typename TypeParam::template map<counted, counted>;
  const long before = counted::alive.load();
  {
    typename M::domain_type domain;
    {
      M map(domain, 4);
      std::uint64_t erases = 0;
      run_owned_ranges<counted, counted>(map, 3, 256, scaled(3000), erases);
      EXPECT_GE(map.unsafe_capacity(), 256u) << "the table should have grown";
      EXPECT_GE(domain.stats().retired, 1u);
    }
    EXPECT_GE(counted::alive.load(), before);
  }
  EXPECT_EQ(counted::alive.load(), before)
      << "objects constructed minus destroyed after the map and its domain are gone";
}

}  // namespace reclaim_test::maps
