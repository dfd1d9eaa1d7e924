// The typed tests every (container, scheme) pair runs: sequential semantics against std::set, and
// concurrent stress with validation of the final contents and of the reclamation counters. Included
// by each ds_<container>_test.cpp, which instantiates them for its pairs with
// INSTANTIATE_TYPED_TEST_SUITE_P.
#pragma once
#include "container_suite.hpp"

namespace reclaim_test::containers {

template <class C>
class container : public ::testing::Test {};
TYPED_TEST_SUITE_P(container);

// ---------------------------------------------------------------------------------------------
// 10: sequential semantics

TYPED_TEST_P(container, behaves_like_std_set_sequentially) {
  using C = TypeParam;
  typename C::domain_type domain;
  C set(domain);
  EXPECT_EQ(set.size(), 0u);
  EXPECT_EQ(set.key_sum(), 0);
  EXPECT_TRUE(set.well_formed());

  std::set<std::int64_t> model;
  rng r(2024);
  std::uint64_t erased = 0;
  const long ops = scaled(20000);
  for (long i = 0; i < ops; ++i) {
    const std::int64_t key = static_cast<std::int64_t>(r.below(128)) - 64;
    switch (r.below(3)) {
      case 0: {
        bool expected = model.insert(key).second;
        ASSERT_EQ(set.insert(key), expected) << "insert(" << key << ") at step " << i;
        break;
      }
      case 1: {
        bool expected = model.erase(key) == 1;
        erased += expected;
        ASSERT_EQ(set.erase(key), expected) << "erase(" << key << ") at step " << i;
        break;
      }
      default:
        ASSERT_EQ(set.contains(key), model.count(key) == 1) << "contains(" << key << ") at step " << i;
    }
  }
  std::int64_t sum = 0;
  for (auto k : model) sum += k;
  EXPECT_EQ(set.size(), model.size());
  EXPECT_EQ(set.key_sum(), sum);
  EXPECT_TRUE(set.well_formed());
  for (std::int64_t k = -70; k < 70; ++k) EXPECT_EQ(set.contains(k), model.count(k) == 1) << k;
  // Every successful erase retires its node(s) exactly once, and nothing else is retired.
  auto s = domain.stats();
  EXPECT_EQ(s.retired, erased * retired_per_erase<C>);
  EXPECT_LE(s.freed, s.retired);
}

TYPED_TEST_P(container, extreme_keys_are_ordinary_members) {
  using C = TypeParam;
  typename C::domain_type domain;
  C set(domain);
  for (auto k : {C::max_key, std::int64_t{0}, C::min_key}) {
    EXPECT_FALSE(set.contains(k));
    EXPECT_TRUE(set.insert(k));
    EXPECT_FALSE(set.insert(k));
    EXPECT_TRUE(set.contains(k));
  }
  EXPECT_EQ(set.size(), 3u);
  EXPECT_TRUE(set.well_formed());
  EXPECT_TRUE(set.erase(C::min_key));
  EXPECT_FALSE(set.contains(C::min_key));
  EXPECT_TRUE(set.contains(C::max_key));
  EXPECT_TRUE(set.erase(C::max_key));
  EXPECT_FALSE(set.erase(C::max_key));
  EXPECT_EQ(set.size(), 1u);
  EXPECT_EQ(set.key_sum(), 0);
  EXPECT_TRUE(set.well_formed());
}

TYPED_TEST_P(container, concurrent_updates_keep_contents_consistent_2_threads_64_keys) {
  run_stress<TypeParam>(2, 64);
}
TYPED_TEST_P(container, concurrent_updates_keep_contents_consistent_4_threads_64_keys) {
  run_stress<TypeParam>(4, 64);
}
TYPED_TEST_P(container, concurrent_updates_keep_contents_consistent_2_threads_1024_keys) {
  run_stress<TypeParam>(2, 1024);
}
TYPED_TEST_P(container, concurrent_updates_keep_contents_consistent_4_threads_1024_keys) {
  run_stress<TypeParam>(4, 1024);
}

// Erasers insert and erase a few hot keys that lie between stable keys; readers look up stable keys
// (which must always be found), hot keys, and a key past the end (never found), so that every
// lookup walks through nodes being unlinked and freed. A reader that reached a freed node would
// read poisoned memory in debug builds and be reported by ASan or TSan.
TYPED_TEST_P(container, readers_racing_with_erasers_never_see_a_freed_node) {
  using C = TypeParam;
  typename C::domain_type domain;
  C set(domain);
  constexpr std::int64_t stable_count = 32;  // keys 0, 2, ..., 62
  constexpr std::int64_t hot_count = 8;      // keys 1, 3, ..., 15
  constexpr std::int64_t absent = 1001;
  std::int64_t stable_sum = 0;
  for (std::int64_t i = 0; i < stable_count; ++i) {
    ASSERT_TRUE(set.insert(2 * i));
    stable_sum += 2 * i;
  }
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> wrong_answers{0}, reads{0};
  std::vector<tally> eraser_tallies(2);
  std::vector<std::thread> threads;
  for (int e = 0; e < 2; ++e)
    threads.emplace_back([&, e] {
      rng r(static_cast<std::uint64_t>(e) + 100);
      tally mine;
      while (!stop.load(std::memory_order_relaxed) || mine.ops < 200) {
        const std::int64_t key = 2 * static_cast<std::int64_t>(r.below(hot_count)) + 1;
        if (set.insert(key)) {
          mine.sum += key;
          ++mine.count;
        }
        if (set.erase(key)) {
          mine.sum -= key;
          --mine.count;
          ++mine.erases;
        }
        ++mine.ops;
      }
      eraser_tallies[static_cast<std::size_t>(e)] = mine;
    });
  for (int rd = 0; rd < 2; ++rd)
    threads.emplace_back([&, rd] {
      rng r(static_cast<std::uint64_t>(rd) + 200);
      std::uint64_t n = 0, wrong = 0;
      while (!stop.load(std::memory_order_relaxed) || n < 300) {
        const std::int64_t stable = 2 * static_cast<std::int64_t>(r.below(stable_count));
        if (!set.contains(stable)) ++wrong;
        if (set.contains(absent)) ++wrong;
        set.contains(2 * static_cast<std::int64_t>(r.below(hot_count)) + 1);
        n += 3;
      }
      wrong_answers += wrong;
      reads += n;
    });
  std::this_thread::sleep_for(stress_time());
  stop = true;
  for (auto& th : threads) th.join();

  EXPECT_EQ(wrong_answers.load(), 0u) << "a lookup of a stable key failed or an absent key was found";
  EXPECT_GT(reads.load(), 0u);
  tally total;
  for (const tally& m : eraser_tallies) {
    total.sum += m.sum;
    total.count += m.count;
    total.erases += m.erases;
  }
  EXPECT_GT(total.erases, 0u);
  EXPECT_TRUE(set.well_formed());
  EXPECT_EQ(set.size(), static_cast<std::size_t>(stable_count + total.count));
  EXPECT_EQ(set.key_sum(), stable_sum + total.sum);
  check_reclamation_counters<C>(domain, total.erases, 5);
}

REGISTER_TYPED_TEST_SUITE_P(container,
                            behaves_like_std_set_sequentially,
                            extreme_keys_are_ordinary_members,
                            concurrent_updates_keep_contents_consistent_2_threads_64_keys,
                            concurrent_updates_keep_contents_consistent_4_threads_64_keys,
                            concurrent_updates_keep_contents_consistent_2_threads_1024_keys,
                            concurrent_updates_keep_contents_consistent_4_threads_1024_keys,
                            readers_racing_with_erasers_never_see_a_freed_node);

}  // namespace reclaim_test::containers
