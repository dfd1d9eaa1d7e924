// SPDX-License-Identifier: MIT
// occ_avl under the representative schemes that can protect it (container_suite.hpp), through the
// typed container suite and its lifecycle half; then what only it does: routing nodes (the erase
// that frees nothing) and AVL balance.
#include <cmath>

#include "container_typed_tests.hpp"

namespace reclaim_test::containers {

INSTANTIATE_TYPED_TEST_SUITE_P(occ_avl, container, representative_pairs<occ_avl>);
INSTANTIATE_TYPED_TEST_SUITE_P(occ_avl, container_lifecycle, representative_pairs<occ_avl>);

// crystalline_l frees a batch as soon as the reservations active at its seal are released, so a
// walk that protects a node another thread already unlinked and retired fails at once under it
// (AddressSanitizer, every run), where hp fails only if a scan lands in that window: the
// regression run for the walk-up's check under the node's lock (fix_height_and_rebalance).
INSTANTIATE_TYPED_TEST_SUITE_P(occ_avl_early_free, container,
                               ::testing::Types<occ_avl<reclaim::crystalline_l<>>>);

}  // namespace reclaim_test::containers

namespace {

using namespace reclaim_test;
using reclaim::debra;
using reclaim::hp;

TEST(occ_avl, erasing_a_key_with_two_children_frees_nothing_and_an_insert_revives_its_node) {
  debra<>::domain domain;
  occ_avl<debra<>> t(domain);
  for (std::int64_t k : {2, 1, 3}) ASSERT_TRUE(t.insert(k));
  ASSERT_TRUE(t.erase(2));  // the root, with two children
  EXPECT_EQ(domain.stats().retired, 0u) << "the node stays as a routing node";
  EXPECT_FALSE(t.contains(2));
  EXPECT_FALSE(t.erase(2));
  auto s = t.unsafe_shape();
  EXPECT_EQ(s.nodes, 3u);
  EXPECT_EQ(s.routing_nodes, 1u);
  EXPECT_TRUE(t.unsafe_well_formed());
  ASSERT_TRUE(t.insert(2));  // back into the routing node: no new node
  EXPECT_EQ(t.unsafe_shape().nodes, 3u);
  EXPECT_EQ(t.unsafe_shape().routing_nodes, 0u);
  // A leaf goes at once; a routing node goes when it comes down to one child.
  ASSERT_TRUE(t.erase(2));
  ASSERT_TRUE(t.erase(1));
  EXPECT_EQ(domain.stats().retired, 2u)
      << "the leaf 1, then the routing node 2 left with one child";
  s = t.unsafe_shape();
  EXPECT_EQ(s.nodes, 1u);
  EXPECT_EQ(s.routing_nodes, 0u);
  EXPECT_TRUE(t.contains(3));
  EXPECT_TRUE(t.unsafe_well_formed());
}

TEST(occ_avl, ascending_and_descending_keys_stay_within_the_avl_height_bound) {
  hp<>::domain domain;
  occ_avl<hp<>> t(domain);
  const std::int64_t n = scaled(20000);
  for (std::int64_t k = 0; k < n; ++k) {
    ASSERT_TRUE(t.insert(k));
    ASSERT_TRUE(t.insert(-k - 1));
    if (k % 997 == 0) {
      ASSERT_TRUE(t.unsafe_well_formed()) << "after " << k;
    }
  }
  ASSERT_TRUE(t.unsafe_well_formed());
  // An AVL tree of m nodes is at most 1.44 log2(m + 2) high.
  const double m = static_cast<double>(t.unsafe_shape().nodes);
  EXPECT_LE(static_cast<double>(t.unsafe_shape().height), 1.4405 * std::log2(m + 2));
  for (std::int64_t k = 0; k < n; k += 3) ASSERT_TRUE(t.erase(k));
  EXPECT_TRUE(t.unsafe_well_formed());
  EXPECT_EQ(t.size(), static_cast<std::size_t>(2 * n - (n + 2) / 3));
}

}  // namespace
