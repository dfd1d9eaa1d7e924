// SPDX-License-Identifier: MIT
// size() and for_each() called while other threads update (issue 28): the counter every container
// keeps (detail/approximate_size.hpp) and the walk of the Harris-Michael containers
// (detail/hm_bucket.hpp, walk()), under a scheme of each family that serves them: epoch (debra),
// hazard pointers (hp), eras (he), batch reference counting (crystalline_l), reference counting
// (lfrc) and neutralization (nbr_plus, nbr: the restart forms, with a small threshold so that
// walks are neutralized often).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace {

using key = std::int64_t;
using nbr_s = reclaim::nbr<reclaim::scan_threshold<64>>;
using nbr_plus_s = reclaim::nbr_plus<reclaim::scan_threshold<64>>;

// A map's value: derived from the key, so that a walk can check what it was handed.
constexpr key value_of(key k) { return 7 * k + 3; }

template <class C>
constexpr bool hashed = requires(const C& c) { c.bucket_of(key{}); };

// Small tables, so that a bucket holds several nodes and a walk goes along lists there too.
template <class C>
C make(typename C::domain_type& domain) {
  if constexpr (hashed<C>)
    return C(domain, 32);
  else
    return C(domain);
}

template <class C>
bool add(C& c, key k) {
  if constexpr (C::is_map)
    return c.insert(k, value_of(k));
  else
    return c.insert(k);
}

template <class C>
class iteration : public ::testing::Test {};

using containers = ::testing::Types<
    // The lists.
    reclaim::ds::hm_list<key, reclaim::debra<>>, reclaim::ds::hm_list<key, reclaim::hp<>>,
    reclaim::ds::hm_list<key, reclaim::he<>>, reclaim::ds::hm_list<key, reclaim::crystalline_l<>>,
    reclaim::ds::hm_list<key, reclaim::lfrc<>>,
    reclaim::ds::hm_list_restart<key, reclaim::debra<>>,
    reclaim::ds::hm_list_restart<key, reclaim::hp<>>, reclaim::ds::hm_list_restart<key, nbr_s>,
    reclaim::ds::hm_list_restart<key, nbr_plus_s>,
    reclaim::ds::hm_list_map<key, key, reclaim::hp<>>,
    reclaim::ds::hm_list_restart_map<key, key, nbr_plus_s>,
    // The hash tables.
    reclaim::ds::hm_hashset<key, reclaim::debra<>>, reclaim::ds::hm_hashset<key, reclaim::hp<>>,
    reclaim::ds::hm_hashset<key, reclaim::he<>>,
    reclaim::ds::hm_hashset<key, reclaim::crystalline_l<>>,
    reclaim::ds::hm_hashset<key, reclaim::lfrc<>>,
    reclaim::ds::hm_hashset_restart<key, reclaim::hp<>>,
    reclaim::ds::hm_hashset_restart<key, nbr_plus_s>,
    reclaim::ds::hm_hashmap<key, key, reclaim::debra<>>,
    reclaim::ds::hm_hashmap_restart<key, key, nbr_s>>;
TYPED_TEST_SUITE(iteration, containers);

// Where a walk must go next: in key order, and in a hash table bucket by bucket.
template <class C>
bool in_order(const C& c, key before, key after) {
  if constexpr (hashed<C>) {
    if (c.bucket_of(before) != c.bucket_of(after)) return c.bucket_of(before) < c.bucket_of(after);
  }
  return before < after;
}

TYPED_TEST(iteration, sequential_walk_and_size) {
  using C = TypeParam;
  typename C::domain_type domain;
  C c = make<C>(domain);
  std::size_t visits = 0;
  c.for_each([&](auto&&...) { ++visits; });
  EXPECT_EQ(visits, 0u);
  EXPECT_EQ(c.size(), 0u);
  for (key k = 100; k > 0; --k) ASSERT_TRUE(add(c, k));
  EXPECT_FALSE(add(c, 5));
  for (key k = 2; k <= 100; k += 2) ASSERT_TRUE(c.erase(k));
  EXPECT_FALSE(c.erase(2));
  EXPECT_EQ(c.size(), 50u);
  EXPECT_EQ(c.unsafe_size(), 50u);
  std::vector<key> seen;
  if constexpr (C::is_map) {
    c.for_each([&](const key& k, const key& v) {
      EXPECT_EQ(v, value_of(k));
      seen.push_back(k);
    });
  } else {
    c.for_each([&](const key& k) { seen.push_back(k); });
  }
  ASSERT_EQ(seen.size(), 50u);
  for (std::size_t i = 1; i < seen.size(); ++i) EXPECT_TRUE(in_order(c, seen[i - 1], seen[i]));
  std::sort(seen.begin(), seen.end());
  for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], static_cast<key>(2 * i + 1));
}

// Two writers insert and erase a churn range (in a map they also replace the stable keys' nodes,
// insert_or_assign) while a third thread walks and reads size(): every walk sees each stable key
// exactly once, in order, and no key twice; size() stays within its bound (approximate_size.hpp)
// of the true size, which lies between the stable count and the whole key range. Afterwards the
// counter, the walk and the writers' tallies agree.
TYPED_TEST(iteration, walks_and_sizes_while_others_update) {
  using C = TypeParam;
  constexpr key range = 600;  // keys 0..599: multiples of 3 stable, the others churn
  constexpr std::size_t stable = range / 3;
  typename C::domain_type domain;
  C c = make<C>(domain);
  for (key k = 0; k < range; k += 3) ASSERT_TRUE(add(c, k));

  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> updates{0};  // operations the writers finished
  std::int64_t count[2] = {0, 0}, sum[2] = {0, 0};
  std::vector<std::thread> writers;
  // Stops and joins the writers however the walker's loop ends (a failed ASSERT returns).
  struct joiner {
    std::atomic<bool>& stop;
    std::vector<std::thread>& threads;
    ~joiner() {
      stop.store(true);
      for (auto& t : threads) t.join();
    }
  } join_writers{stop, writers};
  for (int w = 0; w < 2; ++w) {
    writers.emplace_back([&, w] {
      std::mt19937_64 rng(static_cast<unsigned>(w) + 1);
      while (!stop.load(std::memory_order_relaxed)) {
        key k = static_cast<key>(rng() % range);
        if constexpr (C::is_map) {
          // A stable key's node replaced by a new one with the same value: still present.
          if (k % 3 == 0 && rng() % 2) {
            EXPECT_FALSE(c.insert_or_assign(k, value_of(k)));
            updates.fetch_add(1, std::memory_order_seq_cst);
            continue;
          }
        }
        if (k % 3 == 0) ++k;
        if (rng() % 2) {
          if (add(c, k)) ++count[w], sum[w] += k;
        } else if (c.erase(k)) {
          --count[w], sum[w] -= k;
        }
        updates.fetch_add(1, std::memory_order_seq_cst);
      }
    });
  }

  const auto until = std::chrono::steady_clock::now() + reclaim_test::stress_time() / 5;
  long walks = 0;
  std::vector<key> seen;
  seen.reserve(range);
  while (walks < 20 || std::chrono::steady_clock::now() < until) {
    seen.clear();
    bool values_right = true;
    if constexpr (C::is_map) {
      c.for_each([&](const key& k, const key& v) {
        values_right = values_right && v == value_of(k);
        seen.push_back(k);
      });
    } else {
      c.for_each([&](const key& k) { seen.push_back(k); });
    }
    ++walks;
    ASSERT_TRUE(values_right) << "walk " << walks;
    std::size_t stable_seen = 0;
    for (std::size_t i = 0; i < seen.size(); ++i) {
      ASSERT_TRUE(seen[i] >= 0 && seen[i] < range) << "walk " << walks;
      if (i > 0) {
        ASSERT_TRUE(in_order(c, seen[i - 1], seen[i])) << "walk " << walks << " at " << i;
      }
      stable_seen += seen[i] % 3 == 0;
    }
    // In order means no key twice (within a bucket keys only increase), so every one of them.
    ASSERT_EQ(stable_seen, stable) << "walk " << walks;

    // |size() - true size at any instant of the call| <= updates overlapping it: those that
    // finished meanwhile, and the two that may still be running.
    const std::uint64_t before = updates.load(std::memory_order_seq_cst);
    const std::size_t approximate = c.size();
    std::atomic_thread_fence(std::memory_order_acquire);  // the stripes' loads come first
    const std::uint64_t slack = updates.load(std::memory_order_seq_cst) - before + 2;
    EXPECT_LE(approximate, static_cast<std::uint64_t>(range) + slack) << "walk " << walks;
    EXPECT_GE(approximate + slack, stable) << "walk " << walks;
  }
  stop.store(true);
  for (auto& t : writers) t.join();
  writers.clear();

  EXPECT_GE(walks, 20);
  EXPECT_GT(updates.load(), 0u);
  const std::int64_t expected = static_cast<std::int64_t>(stable) + count[0] + count[1];
  std::int64_t expected_sum = sum[0] + sum[1];
  for (key k = 0; k < range; k += 3) expected_sum += k;
  EXPECT_EQ(c.size(), static_cast<std::size_t>(expected));
  EXPECT_EQ(c.unsafe_size(), static_cast<std::size_t>(expected));
  EXPECT_EQ(c.unsafe_key_sum(), expected_sum);
  EXPECT_TRUE(c.unsafe_well_formed());
}

}  // namespace
