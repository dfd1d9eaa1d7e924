// SPDX-License-Identifier: MIT
// cuckoo_map (its int64 set form, the lab's) under the representative schemes (container_suite.hpp)
// through the typed container suite and its lifecycle half, whose default table (4096 slots) never
// grows; then what the map is about: tables that grow under concurrent operations, each old table
// retired exactly once and freed by the scheme.
#include "container_typed_tests.hpp"

namespace reclaim_test::containers {

INSTANTIATE_TYPED_TEST_SUITE_P(cuckoo_map, container, representative_pairs<cuckoo_map>);
INSTANTIATE_TYPED_TEST_SUITE_P(cuckoo_map, container_lifecycle, representative_pairs<cuckoo_map>);

template <class C>
class cuckoo_map_resize : public ::testing::Test {};
TYPED_TEST_SUITE(cuckoo_map_resize, representative_pairs<cuckoo_map>);

// Four threads insert, erase and look up keys of a 16K range (random_op) in a table that starts
// with one bucket, so that it doubles a dozen times while other threads wait on the old table's
// locks or work in it. The contents stay exact, every element sits in one of its buckets, each
// table that was replaced is retired once (a growth of 2^k retires at most k tables: one per
// doubling, fewer where a copy needed a table four times as large), and the scheme frees them.
TYPED_TEST(cuckoo_map_resize, tables_grow_under_concurrent_operations_and_old_ones_are_retired) {
  using C = TypeParam;
  using S = typename C::scheme_type;
  constexpr std::int64_t keys = 16384;
  constexpr std::size_t first_capacity = 4;
  typename C::domain_type domain;
  C set(domain, first_capacity);
  std::vector<tally> tallies(4);
  gate start;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      rng r(static_cast<std::uint64_t>(t) + 1);
      start.wait();
      for (long i = 0; i < scaled(40000); ++i)
        random_op(set, r, keys, tallies[static_cast<std::size_t>(t)]);
    });
  start.open();
  for (auto& th : threads) th.join();
  tally total;
  for (const tally& m : tallies) total += m;
  EXPECT_TRUE(set.unsafe_well_formed());
  EXPECT_EQ(set.size(), static_cast<std::size_t>(total.count));
  EXPECT_EQ(set.unsafe_key_sum(), total.sum);
  const std::size_t growth = set.unsafe_capacity() / first_capacity;
  ASSERT_GE(growth, 1024u) << "the table should have doubled at least ten times";
  const reclaim::stats s = domain.stats();
  EXPECT_GE(s.retired, 1u);
  EXPECT_LE(std::uint64_t{1} << s.retired, growth) << "more tables retired than doublings";
  EXPECT_EQ(s.freed + s.pending, s.retired);
  if constexpr (S::family != reclaim::family::none) {
    // A barrier frees everything retired before it: every old table, whatever the scheme.
    domain.barrier();
    EXPECT_EQ(domain.stats().freed, s.retired) << "an old table was never freed";
  }
}

// Erased and reinserted keys in a map that keeps growing: a lookup of a key that is present
// always finds it, across every resize (found in the old table before it, in the new one after).
TYPED_TEST(cuckoo_map_resize, present_keys_are_always_found_while_the_table_grows) {
  using C = TypeParam;
  typename C::domain_type domain;
  C set(domain, 4);
  constexpr std::int64_t stable = 64;  // 0..63, always present
  for (std::int64_t k = 0; k < stable; ++k) ASSERT_TRUE(set.insert(k));
  std::atomic<bool> stop{false};
  std::atomic<long> missed{0};
  std::thread grower([&] {
    for (std::int64_t k = stable; k < stable + scaled(20000); ++k) set.insert(k);
    stop.store(true);
  });
  std::thread reader([&] {
    rng r(7);
    long n = 0;
    while (!stop.load() || n < 1000) {
      missed += !set.contains(static_cast<std::int64_t>(r.below(stable)));
      ++n;
    }
  });
  grower.join();
  reader.join();
  EXPECT_EQ(missed.load(), 0) << "a present key was not found during a resize";
  EXPECT_TRUE(set.unsafe_well_formed());
  EXPECT_EQ(set.size(), static_cast<std::size_t>(stable + scaled(20000)));
}

}  // namespace reclaim_test::containers
