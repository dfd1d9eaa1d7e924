// The containers under every compatible scheme: sequential semantics against std::set, and
// concurrent stress with validation of the final contents and of the reclamation counters.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <set>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace {

using namespace reclaim_test;
using reclaim::debra;
using reclaim::ebr;
using reclaim::hp;
using reclaim::ner;
using reclaim::none;
using reclaim::qsbr;
using reclaim::rcu;
using reclaim::ds::hm_list;
using reclaim::ds::lazy_list;

// Every container with every scheme that can protect it (a pair that cannot would not compile:
// the containers static_assert protects<Scheme, Container>).
using containers = ::testing::Types<lazy_list<none>, lazy_list<debra<>>, lazy_list<hp<>>,
                                    lazy_list<ebr<>>, lazy_list<ner<>>, lazy_list<qsbr<>>,
                                    lazy_list<rcu<>>, hm_list<none>, hm_list<debra<>>,
                                    hm_list<hp<>>, hm_list<ebr<>>, hm_list<ner<>>,
                                    hm_list<qsbr<>>, hm_list<rcu<>>>;

template <class C>
class container : public ::testing::Test {};
TYPED_TEST_SUITE(container, containers);

template <class C>
struct scheme_of;
template <template <class> class DS, class S>
struct scheme_of<DS<S>> {
  using type = S;
};

// ---------------------------------------------------------------------------------------------
// 10: sequential semantics

TYPED_TEST(container, behaves_like_std_set_sequentially) {
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
  // Every successful erase retires exactly one node, and nothing else is retired.
  auto s = domain.stats();
  EXPECT_EQ(s.retired, erased);
  EXPECT_LE(s.freed, s.retired);
}

TYPED_TEST(container, extreme_keys_are_ordinary_members) {
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

// ---------------------------------------------------------------------------------------------
// 11: concurrent stress

struct tally {
  std::int64_t sum = 0;     // keys inserted minus keys erased, by this thread's successful calls
  std::int64_t count = 0;   // successful inserts minus successful erases
  std::uint64_t erases = 0; // successful erases
  std::uint64_t ops = 0;
};

template <class C>
void check_reclamation_counters(typename C::domain_type& domain, std::uint64_t erases,
                                std::uint64_t records) {
  using S = typename scheme_of<C>::type;
  auto s = domain.stats();
  EXPECT_EQ(s.retired, erases) << "each successful erase retires exactly one node";
  EXPECT_LE(s.freed, s.retired);
  EXPECT_EQ(s.freed + s.pending, s.retired);
  EXPECT_GE(s.pending_peak, s.pending);
  // The workers exited: only the main thread may still hold a record (none registers a thread
  // only when it retires, which the main thread never did here).
  EXPECT_EQ(s.threads, S::family == reclaim::family::none ? 0u : 1u);
  if constexpr (S::family == reclaim::family::pointer) {
    // Hazard pointers bound garbage: no record holds more than R + H retired nodes.
    const std::uint64_t per_record = domain.scan_threshold() + S::slot_count * records;
    EXPECT_LE(s.pending, records * per_record);
  }
  if constexpr (requires { S::empty_frequency; }) {
    // rcu moves its epoch and scans only on retires: the one live thread retires fillers until
    // everything the workers retired is freed (the fillers' own garbage may stay pending). The
    // counter outlives the domain, which destroys the fillers still pending.
    static std::atomic<long> fillers_destroyed{0};
    const long before = fillers_destroyed.load();
    EXPECT_TRUE(eventually([&] {
      retire_one<S>(domain, fillers_destroyed);
      auto now = domain.stats();
      return now.freed == erases + static_cast<std::uint64_t>(fillers_destroyed.load() - before);
    })) << "garbage left by exited threads was never freed";
  } else if constexpr (S::family == reclaim::family::epoch) {
    // With the workers gone, operations of the one live thread free everything, orphans included.
    EXPECT_TRUE(eventually([&] {
      { typename S::guard g(domain); }
      auto now = domain.stats();
      return now.freed == now.retired;
    })) << "garbage left by exited threads was never freed";
  }
}

template <class C>
void run_stress(int thread_count, std::int64_t keys) {
  typename C::domain_type domain;
  C set(domain);
  tally total;
  rng seed_rng(static_cast<std::uint64_t>(keys * 31 + thread_count));
  for (std::int64_t k = 0; k < keys; ++k) {
    if (seed_rng.below(2) && set.insert(k)) {
      total.sum += k;
      ++total.count;
    }
  }
  std::vector<tally> tallies(static_cast<std::size_t>(thread_count));
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < thread_count; ++t)
    threads.emplace_back([&, t] {
      rng r(static_cast<std::uint64_t>(t) + 1);
      tally mine;
      // At least a few operations each, even if the machine is so busy that a worker starts late.
      while (!stop.load(std::memory_order_relaxed) || mine.ops < 200) {
        const auto key = static_cast<std::int64_t>(r.below(static_cast<std::uint64_t>(keys)));
        const auto op = r.below(10);
        if (op < 4) {
          if (set.insert(key)) {
            mine.sum += key;
            ++mine.count;
          }
        } else if (op < 8) {
          if (set.erase(key)) {
            mine.sum -= key;
            --mine.count;
            ++mine.erases;
          }
        } else {
          set.contains(key);
        }
        ++mine.ops;
      }
      tallies[static_cast<std::size_t>(t)] = mine;
    });
  std::this_thread::sleep_for(stress_time());
  stop = true;
  for (auto& th : threads) th.join();
  for (const tally& m : tallies) {
    EXPECT_GT(m.ops, 0u) << "a worker never ran";
    total.sum += m.sum;
    total.count += m.count;
    total.erases += m.erases;
    total.ops += m.ops;
  }
  EXPECT_TRUE(set.well_formed());
  EXPECT_EQ(set.size(), static_cast<std::size_t>(total.count));
  EXPECT_EQ(set.key_sum(), total.sum);
  EXPECT_GT(total.erases, 0u);
  check_reclamation_counters<C>(domain, total.erases, static_cast<std::uint64_t>(thread_count + 1));
  ::testing::Test::RecordProperty("ops", std::to_string(total.ops));
}

TYPED_TEST(container, concurrent_updates_keep_contents_consistent_2_threads_64_keys) {
  run_stress<TypeParam>(2, 64);
}
TYPED_TEST(container, concurrent_updates_keep_contents_consistent_4_threads_64_keys) {
  run_stress<TypeParam>(4, 64);
}
TYPED_TEST(container, concurrent_updates_keep_contents_consistent_2_threads_1024_keys) {
  run_stress<TypeParam>(2, 1024);
}
TYPED_TEST(container, concurrent_updates_keep_contents_consistent_4_threads_1024_keys) {
  run_stress<TypeParam>(4, 1024);
}

// Erasers insert and erase a few hot keys that lie between stable keys; readers look up stable keys
// (which must always be found), hot keys, and a key past the end (never found), so that every
// lookup walks through nodes being unlinked and freed. A reader that reached a freed node would
// read poisoned memory in debug builds and be reported by ASan or TSan.
TYPED_TEST(container, readers_racing_with_erasers_never_see_a_freed_node) {
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

}  // namespace
