// SPDX-License-Identifier: MIT
// The typed tests every (container, scheme) pair runs: sequential semantics against std::set, and
// concurrent stress with validation of the final contents and of the reclamation counters; and the
// container half of the lifecycle torture suite (container_lifecycle), run for every scheme that
// can protect the container. Included by each ds_<container>_test.cpp, which instantiates them for
// its pairs with INSTANTIATE_TYPED_TEST_SUITE_P.
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
  EXPECT_EQ(set.unsafe_key_sum(), 0);
  EXPECT_TRUE(set.unsafe_well_formed());

  std::set<std::int64_t> model;
  rng r(2024);
  std::uint64_t erased = 0, inserted = 0;
  const long ops = scaled(20000);
  for (long i = 0; i < ops; ++i) {
    const std::int64_t key = static_cast<std::int64_t>(r.below(128)) - 64;
    switch (r.below(3)) {
      case 0: {
        bool expected = model.insert(key).second;
        inserted += expected;
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
  EXPECT_EQ(set.unsafe_size(), model.size()) << "the counter and the walk agree";
  EXPECT_EQ(set.unsafe_key_sum(), sum);
  EXPECT_TRUE(set.unsafe_well_formed());
  for (std::int64_t k = -70; k < 70; ++k) EXPECT_EQ(set.contains(k), model.count(k) == 1) << k;
  // Every successful erase retires its node(s) exactly once, and nothing else is retired (the
  // trees that retire on inserts and rebalancing: within their bounds).
  auto s = domain.stats();
  expect_retired<C>(s.retired, inserted, erased);
  EXPECT_LE(s.freed, s.retired);
}

// The sentinels hold no key: the smallest and the largest int64 are keys like any other.
TYPED_TEST_P(container, extreme_keys_are_ordinary_members) {
  using C = TypeParam;
  typename C::domain_type domain;
  C set(domain);
  constexpr std::int64_t min_key = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t max_key = std::numeric_limits<std::int64_t>::max();
  for (auto k : {max_key, std::int64_t{0}, min_key}) {
    EXPECT_FALSE(set.contains(k));
    EXPECT_TRUE(set.insert(k));
    EXPECT_FALSE(set.insert(k));
    EXPECT_TRUE(set.contains(k));
  }
  EXPECT_EQ(set.size(), 3u);
  EXPECT_TRUE(set.unsafe_well_formed());
  EXPECT_TRUE(set.erase(min_key));
  EXPECT_FALSE(set.contains(min_key));
  EXPECT_TRUE(set.contains(max_key));
  EXPECT_TRUE(set.erase(max_key));
  EXPECT_FALSE(set.erase(max_key));
  EXPECT_EQ(set.size(), 1u);
  EXPECT_EQ(set.unsafe_key_sum(), 0);
  EXPECT_TRUE(set.unsafe_well_formed());
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
  for (const tally& m : eraser_tallies) total += m;
  EXPECT_GT(total.erases, 0u);
  EXPECT_TRUE(set.unsafe_well_formed());
  EXPECT_EQ(set.size(), static_cast<std::size_t>(stable_count + total.count));
  EXPECT_EQ(set.unsafe_size(), static_cast<std::size_t>(stable_count + total.count));
  EXPECT_EQ(set.unsafe_key_sum(), stable_sum + total.sum);
  check_reclamation_counters<C>(domain, total.erases, 5,
                                static_cast<std::uint64_t>(stable_count + total.count) +
                                    total.erases);
}

REGISTER_TYPED_TEST_SUITE_P(container,
                            behaves_like_std_set_sequentially,
                            extreme_keys_are_ordinary_members,
                            concurrent_updates_keep_contents_consistent_2_threads_64_keys,
                            concurrent_updates_keep_contents_consistent_4_threads_64_keys,
                            concurrent_updates_keep_contents_consistent_2_threads_1024_keys,
                            concurrent_updates_keep_contents_consistent_4_threads_1024_keys,
                            readers_racing_with_erasers_never_see_a_freed_node);

// ---------------------------------------------------------------------------------------------
// 12: thread lifecycles (the container half of the lifecycle torture suite; lifecycle_test.cpp
// has the scheme half), for every scheme that protects the container (every_protected_pair)

template <class C>
class container_lifecycle : public ::testing::Test {};
TYPED_TEST_SUITE_P(container_lifecycle);

// Inserts the even keys below `keys` from the calling thread (which registers it); returns them.
template <class C>
tally fill_evens(C& set, std::int64_t keys) {
  tally t;
  for (std::int64_t k = 0; k < keys; k += 2) {
    if (set.insert(k)) {
      t.sum += k;
      ++t.count;
    }
  }
  return t;
}

// Waves of short-lived threads, each running a few random operations and exiting: the contents
// stay exact, records are reused, and what the threads left behind is freed by whoever comes next.
TYPED_TEST_P(container_lifecycle, short_lived_threads_keep_contents_exact_and_their_garbage_freed) {
  using C = TypeParam;
  typename C::domain_type domain;
  C set(domain);
  constexpr std::int64_t keys = 64;
  tally total = fill_evens(set, keys);
  // qsbr: a live thread that idles holds the epoch back unless it says so (documented).
  if constexpr (requires { domain.thread_offline(); }) domain.thread_offline();
  const long waves = scaled(400);
  tally tallies[2];
  for (long w = 0; w < waves; ++w) {
    std::thread threads[2];
    for (int t = 0; t < 2; ++t)
      threads[t] = std::thread([&, t] {
        rng r(static_cast<std::uint64_t>(2 * w + t + 1));
        for (int i = 0; i < 16; ++i) random_op(set, r, keys, tallies[t]);
      });
    for (auto& th : threads) th.join();
  }
  for (const tally& m : tallies) total += m;
  EXPECT_TRUE(set.unsafe_well_formed());
  EXPECT_EQ(set.size(), static_cast<std::size_t>(total.count));
  EXPECT_EQ(set.unsafe_key_sum(), total.sum);
  const reclaim::stats s = domain.stats();
  EXPECT_LE(s.records, 3u) << "records of exited threads are reused";
  // Only what the last waves retired may still wait, however many waves ran.
  using S = typename C::scheme_type;
  if constexpr (S::family != reclaim::family::none) {
    EXPECT_LE(s.pending,
              32 * 2 * 16 * retired_bounds<C>::per_operation + resting_garbage<S>(domain))
        << "garbage of short-lived threads piles up (retired " << s.retired << ")";
  }
  check_reclamation_counters<C>(domain, total.erases, 3,
                                static_cast<std::uint64_t>(total.count) + total.erases);
}

// Many more threads than cores: every thread is preempted in the middle of operations, often. A
// fixed number of operations each (not a time), so that the garbage the one live thread frees
// afterwards is bounded: an amortized policy frees one node per operation of that thread.
TYPED_TEST_P(container_lifecycle, sixty_four_threads_on_two_cores_keep_contents_consistent) {
  using C = TypeParam;
  constexpr int thread_count = 64;
  constexpr std::int64_t keys = 256;
  typename C::domain_type domain;
  C set(domain);
  tally total = fill_evens(set, keys);
  const long ops = scaled(1500);
  std::vector<tally> tallies(thread_count);
  gate start;
  std::vector<std::thread> threads;
  for (int t = 0; t < thread_count; ++t)
    threads.emplace_back([&, t] {
      rng r(static_cast<std::uint64_t>(t) + 1);
      start.wait();
      for (long i = 0; i < ops; ++i) random_op(set, r, keys, tallies[static_cast<std::size_t>(t)]);
    });
  start.open();
  for (auto& th : threads) th.join();
  for (const tally& m : tallies) total += m;
  EXPECT_TRUE(set.unsafe_well_formed());
  EXPECT_EQ(set.size(), static_cast<std::size_t>(total.count));
  EXPECT_EQ(set.unsafe_key_sum(), total.sum);
  EXPECT_GT(total.erases, 0u);
  check_reclamation_counters<C>(domain, total.erases, thread_count + 1,
                                static_cast<std::uint64_t>(total.count) + total.erases);
}

// Threads hold a protection of a shared node in an outer guard (nbr: a write phase reserving it)
// and run container operations nested inside it while one of them unlinks and retires the node;
// then each retires a node whose deleter uses other domains, and exits through a thread_local
// destructor that runs more operations. The node is never seen damaged, the contents stay exact,
// and everything retired is accounted for and freed with the domain.
TYPED_TEST_P(container_lifecycle, thread_exit_and_nested_operations_keep_contents_and_protection) {
  using C = TypeParam;
  using S = typename C::scheme_type;
  constexpr int thread_count = 4;
  constexpr std::int64_t keys = 64;
  std::atomic<long> shared_destroyed{0}, exit_nodes_destroyed{0};
  typename C::domain_type other;  // outlives the domain, whose deleters use it
  other_domains<S>::other = &other;
  {
    typename C::domain_type domain;
    C set(domain);
    tally total = fill_evens(set, keys);
    std::atomic<tracked<S>*> shared{new tracked<S>(shared_destroyed, 42)};
    const int rounds = static_cast<int>(scaled(40));
    tally tallies[thread_count], exit_tallies[thread_count];
    std::atomic<int> damaged{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < thread_count; ++t)
      threads.emplace_back([&, t] {
        // Built before the thread's first operation; runs more operations when the thread exits.
        at_thread_exit<C>().run = [&set, &out = exit_tallies[t], t, keys] {
          rng r(static_cast<std::uint64_t>(t) + 100);
          for (int i = 0; i < 16; ++i) random_op(set, r, keys, out);
        };
        rng r(static_cast<std::uint64_t>(t) + 1);
        // One round in a frame of its own: the restart point below never sees the loop change.
        auto hold_and_nest = [&](bool retire_shared) {
          typename S::guard g(domain);
          RECLAIM_READ_PHASE(g);
          tracked<S>* p = g.protect(shared, 0);
          g.write_phase(p);
          for (int i = 0; i < 8; ++i) random_op(set, r, keys, tallies[t]);
          if (retire_shared) g.retire(shared.exchange(nullptr));
          if (p && p->payload != 42) damaged.fetch_add(1);
        };
        for (int round = 0; round < rounds; ++round) hold_and_nest(t == 0 && round == rounds / 2);
        typename S::guard g(domain);
        g.template retire<&deleter_using_other_domains<S>>(new tracked<S>(exit_nodes_destroyed));
      });
    for (auto& th : threads) th.join();
    EXPECT_EQ(damaged.load(), 0) << "a node was freed while an outer guard protected it";
    for (int t = 0; t < thread_count; ++t) {
      total += tallies[t];
      total += exit_tallies[t];
      EXPECT_EQ(exit_tallies[t].ops, 16u)
          << "thread " << t << "'s thread_local destructor did not run";
    }
    EXPECT_TRUE(set.unsafe_well_formed());
    EXPECT_EQ(set.size(), static_cast<std::size_t>(total.count));
    EXPECT_EQ(set.unsafe_key_sum(), total.sum);
    const reclaim::stats s = domain.stats();
    // The shared node and each thread's exit node, besides what the container retired.
    ASSERT_GE(s.retired, 1u + thread_count);
    expect_retired<C>(s.retired - 1 - thread_count,
                      static_cast<std::uint64_t>(total.count) + total.erases, total.erases);
    EXPECT_EQ(s.freed + s.pending, s.retired);
    EXPECT_EQ(s.threads, main_thread_records<C>())
        << "records taken again by thread_local destructors were not released";
  }
  EXPECT_EQ(shared_destroyed.load(), 1);
  EXPECT_EQ(exit_nodes_destroyed.load(), thread_count);
}

REGISTER_TYPED_TEST_SUITE_P(container_lifecycle,
                            short_lived_threads_keep_contents_exact_and_their_garbage_freed,
                            sixty_four_threads_on_two_cores_keep_contents_consistent,
                            thread_exit_and_nested_operations_keep_contents_and_protection);

}  // namespace reclaim_test::containers
