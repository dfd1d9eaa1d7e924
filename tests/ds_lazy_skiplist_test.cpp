// SPDX-License-Identifier: MIT
// lazy_skiplist under the representative schemes that can protect it (container_suite.hpp), each
// sized for it as in the lab (hp with slots<14>, nbr_plus with slots<13>:
// reclaim::sized_for), through the typed container suite and its lifecycle half. Every check of
// contents calls well_formed(), which checks the levels: keys increasing on each, and each level
// holding exactly the nodes of the level below whose towers reach it. Then the skiplist's own:
// enough keys for tall towers, and the shortest and tallest MaxHeight.
#include "container_typed_tests.hpp"

namespace reclaim_test::containers {

INSTANTIATE_TYPED_TEST_SUITE_P(lazy_skiplist, container, representative_pairs<lazy_skiplist>);
INSTANTIATE_TYPED_TEST_SUITE_P(lazy_skiplist, container_lifecycle,
                               representative_pairs<lazy_skiplist>);

// With a key range of 16K, towers of 6 levels and more (1 in 1024) exist: levels well above the
// typed suite's are built, searched through and unlinked concurrently.
template <class C>
class lazy_skiplist_levels : public ::testing::Test {};
using level_pairs = ::testing::Types<lazy_skiplist<debra<>>, lazy_skiplist<hp<>>,
                                     lazy_skiplist<nbr_plus<reclaim::scan_threshold<64>>>>;
TYPED_TEST_SUITE(lazy_skiplist_levels, level_pairs);

TYPED_TEST(lazy_skiplist_levels, tall_towers_keep_every_level_consistent_under_concurrent_updates) {
  run_stress<TypeParam>(4, 16384);
}

// MaxHeight 1 is the lazy list (one predecessor: 3 hazard slots); 30, the tallest, needs 32.
TEST(lazy_skiplist_heights, one_level_behaves_as_a_lazy_list_under_hp) {
  run_stress<reclaim::ds::lazy_skiplist<std::int64_t, hp<reclaim::slots<3>>, std::less<>, 1>>(
      4, 1024);
}
TEST(lazy_skiplist_heights, thirty_levels_under_hp_use_thirty_two_slots) {
  using C = reclaim::ds::lazy_skiplist<std::int64_t, hp<reclaim::slots<32>>, std::less<>, 30>;
  static_assert(C::slots_used == 32);
  run_stress<C>(4, 1024);
}

}  // namespace reclaim_test::containers
