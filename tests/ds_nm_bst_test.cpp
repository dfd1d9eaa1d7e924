// SPDX-License-Identifier: MIT
// nm_bst under the representative schemes that can protect it (container_suite.hpp), through the
// typed container suite and its lifecycle half; then what only it does: a delete stalled after its
// flag is finished by whoever meets the flagged edge, and searches through marked edges under
// hazard pointers.
#include "container_typed_tests.hpp"

namespace reclaim_test::containers {

INSTANTIATE_TYPED_TEST_SUITE_P(nm_bst, container, representative_pairs<nm_bst>);
INSTANTIATE_TYPED_TEST_SUITE_P(nm_bst, container_lifecycle, representative_pairs<nm_bst>);

}  // namespace reclaim_test::containers

// White-box access: flags the edge to a key's leaf, as a delete does with its first CAS before
// it stalls (or tags the sibling edge too, as its cleanup does next).
struct reclaim::ds::nm_bst_test_peer {
  template <class Tree>
  static void stall_delete_of(Tree& t, std::int64_t key, bool also_tag) {
    typename Tree::guard_type g(t.domain_);
    const auto r = t.seek(g, key);
    ASSERT_TRUE(t.holds(r.leaf, key));
    auto& edge = t.edge_to(r.parent, key);
    edge.store(typename Tree::link(r.leaf, Tree::flag));
    if (also_tag) {
      const unsigned side = r.parent->child[0].load().get() == r.leaf ? 1 : 0;
      auto& sibling = r.parent->child[side];
      sibling.store(typename Tree::link(sibling.load().get(), sibling.load().mark() | Tree::tag));
    }
  }
};

namespace {

using namespace reclaim_test;
using reclaim::debra;
using reclaim::hp;
using peer = reclaim::ds::nm_bst_test_peer;

template <class S>
void stalled_delete_is_finished_by_the_next_update(bool also_tag) {
  typename S::domain domain;
  nm_bst<S> t(domain);
  for (std::int64_t k : {10, 20, 30, 40, 50}) ASSERT_TRUE(t.insert(k));
  peer::stall_delete_of(t, 30, also_tag);
  EXPECT_TRUE(t.contains(30)) << "a delete takes effect when its leaf leaves the tree";
  EXPECT_FALSE(t.insert(30));
  EXPECT_EQ(domain.stats().retired, 0u);
  // An insert next to it fails its CAS on the marked edge, helps, and inserts.
  ASSERT_TRUE(t.insert(35));
  EXPECT_FALSE(t.contains(30));
  EXPECT_EQ(domain.stats().retired, 2u) << "the flagged leaf and its router, once";
  EXPECT_TRUE(t.unsafe_well_formed());
  EXPECT_EQ(t.unsafe_key_sum(), 10 + 20 + 35 + 40 + 50);
}

TEST(nm_bst, a_delete_stalled_after_its_flag_is_finished_by_the_next_update) {
  stalled_delete_is_finished_by_the_next_update<debra<>>(false);
  stalled_delete_is_finished_by_the_next_update<hp<>>(false);
}
TEST(nm_bst, a_delete_stalled_after_its_tag_is_finished_by_the_next_update) {
  stalled_delete_is_finished_by_the_next_update<debra<>>(true);
  stalled_delete_is_finished_by_the_next_update<hp<>>(true);
}

// Many deletes of neighbouring keys at once build long tagged chains (the dangerous zone) that
// seeks cross; under hp every such read is validated at the zone's entry. Readers check stable
// keys throughout; ASan and the debug build's poisoning catch a read of a freed node.
TEST(nm_bst, hazard_pointer_searches_cross_chains_of_removed_nodes_safely) {
  hp<>::domain domain;
  nm_bst<hp<>> t(domain);
  constexpr std::int64_t keys = 64;
  for (std::int64_t k = 0; k < keys; k += 4) ASSERT_TRUE(t.insert(k));  // stable: multiples of 4
  std::atomic<bool> stop{false};
  std::atomic<long> wrong{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 3; ++w)
    threads.emplace_back([&, w] {
      rng r(static_cast<std::uint64_t>(w) + 1);
      for (long i = 0; !stop.load(std::memory_order_relaxed) || i < 500; ++i) {
        const std::int64_t k = 4 * static_cast<std::int64_t>(r.below(keys / 4)) + 1 +
                               static_cast<std::int64_t>(r.below(3));
        if (r.below(2))
          t.insert(k);
        else
          t.erase(k);
      }
    });
  threads.emplace_back([&] {
    rng r(99);
    for (long i = 0; !stop.load(std::memory_order_relaxed) || i < 500; ++i)
      if (!t.contains(4 * static_cast<std::int64_t>(r.below(keys / 4)))) wrong.fetch_add(1);
  });
  std::this_thread::sleep_for(stress_time());
  stop = true;
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0) << "a stable key was not found";
  EXPECT_TRUE(t.unsafe_well_formed());
  for (std::int64_t k = 0; k < keys; k += 4) EXPECT_TRUE(t.contains(k));
}

}  // namespace
