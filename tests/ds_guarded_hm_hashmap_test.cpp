// SPDX-License-Identifier: MIT
// guarded_hm_hashmap (Michael's hash table written with guard_ptr, paper 003's HashMap benchmark)
// through the typed container suite, as a set of int64 keys, under the representative schemes
// that serve guard_ptr (nbr_plus does not). Its buckets are guarded_hm_list's algorithm
// (detail/guarded_hm_bucket.hpp); get() and its long-lived value_ptrs are checked here too.
#include <reclaim/ds/guarded_hm_hashmap.hpp>

#include <string>

#include "container_typed_tests.hpp"

namespace reclaim_test::containers {

template <class S>
using guarded_hm_hashmap = reclaim::ds::guarded_hm_hashset<std::int64_t, S>;

INSTANTIATE_TYPED_TEST_SUITE_P(guarded_hm_hashmap, container,
                               representative_pairs<guarded_hm_hashmap>);
INSTANTIATE_TYPED_TEST_SUITE_P(guarded_hm_hashmap, container_lifecycle,
                               representative_pairs<guarded_hm_hashmap>);

// get(): a value_ptr keeps its node, and the value in it, while the key is erased and the map's
// nodes come and go around it (ASan reports a read of a freed value); once it lets go, the node
// is freed like any other. One scheme per way a value_ptr holds a node: a region (debra,
// stamp_it), a hazard slot from the thread's pool (hp), a reference count (lfrc).
template <class S>
class guarded_hm_hashmap_get : public ::testing::Test {};
using get_schemes = ::testing::Types<debra<>, stamp_it<>, hp<>, lfrc<>>;
TYPED_TEST_SUITE(guarded_hm_hashmap_get, get_schemes);

TYPED_TEST(guarded_hm_hashmap_get, a_held_value_survives_its_erase_and_is_freed_after) {
  using S = TypeParam;
  typename S::domain domain;
  const std::string value(100, 'v');  // on the heap: a freed node's value would be a freed block
  {
    reclaim::ds::guarded_hm_hashmap<std::int64_t, std::string, S> map(domain, 16);
    ASSERT_TRUE(map.insert(1, value));
    auto held = map.get(1);
    ASSERT_TRUE(held);
    EXPECT_FALSE(map.get(2)) << "an absent key gives an empty value_ptr";
    ASSERT_TRUE(map.erase(1));
    EXPECT_FALSE(map.get(1));
    for (std::int64_t k = 2; k < 500; ++k) {  // retires enough to make every scheme reclaim
      ASSERT_TRUE(map.insert(k, std::to_string(k)));
      ASSERT_TRUE(map.erase(k));
    }
    domain.flush();
    EXPECT_EQ(*held, value) << "the held value changed: its node was freed or reused";
    EXPECT_GE(domain.stats().pending, 1u) << "the held node was counted as freed";
    held.reset();
    EXPECT_EQ(map.size(), 0u);
  }
  domain.barrier();
  const auto s = domain.stats();
  EXPECT_EQ(s.retired, 499u);
  EXPECT_EQ(s.freed, s.retired);
  EXPECT_EQ(s.pending, 0u);
}

}  // namespace reclaim_test::containers
