// SPDX-License-Identifier: MIT
// The typed tests of the pool containers (treiber_stack, ms_queue, guarded_ms_queue), run for every
// scheme that protects them: sequential order against std::deque, non-trivial values (each moved
// out once and destroyed once, those left in the container included), a concurrent stress in which
// every thread pushes and pops values that name their producer and sequence number (validated
// exactly: each value popped once, nothing lost, and for the queue each producer's values seen in
// order by every consumer), and reclamation (retired nodes are freed). Included by
// ds_treiber_stack_test.cpp, ds_ms_queue_test.cpp and ds_guarded_ms_queue_test.cpp, which
// instantiate them with INSTANTIATE_TYPED_TEST_SUITE_P.
#pragma once
#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "container_suite.hpp"

namespace reclaim_test::containers {

using reclaim::ds::guarded_ms_queue;
using reclaim::ds::ms_queue;
using reclaim::ds::treiber_stack;

// What the typed tests need to know of a pool container C = DS<T, S>: the same container for other
// values, and the order in which it hands values back.
template <class C>
struct pool_traits;
template <class T, class S>
struct pool_traits<treiber_stack<T, S>> {
  template <class U>
  using with_value = treiber_stack<U, S>;
  static constexpr bool fifo = false;
};
template <class T, class S>
struct pool_traits<ms_queue<T, S>> {
  template <class U>
  using with_value = ms_queue<U, S>;
  static constexpr bool fifo = true;
};
template <class T, class S>
struct pool_traits<guarded_ms_queue<T, S>> {
  template <class U>
  using with_value = guarded_ms_queue<U, S>;
  static constexpr bool fifo = true;
};

// A value that counts the live objects of its type and catches a second destruction (its canary).
struct counted {
  static inline std::atomic<long> live{0};
  static inline std::atomic<long> bad_destructions{0};
  static constexpr unsigned alive = 0xA11CE, dead = 0xDEAD;

  explicit counted(long v) : value(v) { live.fetch_add(1); }
  counted(counted&& other) noexcept : value(other.value) { live.fetch_add(1); }
  counted(const counted&) = delete;
  counted& operator=(const counted&) = delete;
  ~counted() {
    if (canary != alive) bad_destructions.fetch_add(1);
    canary = dead;
    live.fetch_sub(1);
  }

  long value;
  unsigned canary = alive;
};

template <class C>
class pool : public ::testing::Test {};
TYPED_TEST_SUITE_P(pool);

// ---------------------------------------------------------------------------------------------
// Sequential semantics

TYPED_TEST_P(pool, hands_values_back_in_order_and_nullopt_when_empty) {
  using C = TypeParam;
  typename C::domain_type domain;
  C c(domain);
  EXPECT_TRUE(c.empty());
  EXPECT_EQ(c.pop(), std::nullopt);

  std::deque<std::int64_t> model;  // front: the next value a pop returns
  rng r(7);
  std::uint64_t pops = 0;
  const long ops = scaled(20000);
  for (long i = 0; i < ops; ++i) {
    if (r.below(2)) {
      const auto v = static_cast<std::int64_t>(i);
      c.push(v);
      if (pool_traits<C>::fifo)
        model.push_back(v);
      else
        model.push_front(v);
    } else {
      std::optional<std::int64_t> expected;
      if (!model.empty()) {
        expected = model.front();
        model.pop_front();
        ++pops;
      }
      ASSERT_EQ(c.pop(), expected) << "pop at step " << i;
    }
    ASSERT_EQ(c.empty(), model.empty()) << "empty() at step " << i;
  }
  while (!model.empty()) {
    ASSERT_EQ(c.pop(), model.front());
    model.pop_front();
    ++pops;
  }
  EXPECT_EQ(c.pop(), std::nullopt);
  EXPECT_TRUE(c.empty());
  // Every successful pop retires exactly one node (the popped node; the queue's old dummy).
  EXPECT_EQ(domain.stats().retired, pops);
}

TYPED_TEST_P(pool, non_trivial_values_are_moved_out_once_and_destroyed_once) {
  using traits = pool_traits<TypeParam>;
  {
    typename TypeParam::domain_type domain;
    typename traits::template with_value<std::string> strings(domain);
    // Longer than any small-string buffer: each value owns heap memory (ASan sees leaks and
    // double frees).
    const std::string prefix(40, 'x');
    for (int i = 0; i < 3; ++i) strings.push(prefix + std::to_string(i));
    strings.emplace(5, 'y');
    std::optional<std::string> first = strings.pop();
    ASSERT_TRUE(first);
    EXPECT_EQ(*first, traits::fifo ? prefix + "0" : std::string(5, 'y'));
    // Three values stay in the container: its destructor destroys them.

    typename traits::template with_value<std::unique_ptr<int>> pointers(domain);
    pointers.push(std::make_unique<int>(42));
    std::optional<std::unique_ptr<int>> p = pointers.pop();
    ASSERT_TRUE(p && *p);
    EXPECT_EQ(**p, 42);
    pointers.push(std::make_unique<int>(43));  // left in the container
  }
  counted::live = 0;
  counted::bad_destructions = 0;
  {
    typename TypeParam::domain_type domain;
    {
      typename traits::template with_value<counted> values(domain);
      for (long i = 0; i < 100; ++i) values.emplace(i);
      for (long i = 0; i < 60; ++i) {
        std::optional<counted> v = values.pop();
        ASSERT_TRUE(v);
        EXPECT_EQ(v->value, traits::fifo ? i : 99 - i);
      }
      EXPECT_EQ(counted::live.load(), 40) << "each popped value is destroyed in the pop";
    }
    EXPECT_EQ(counted::live.load(), 0) << "the values left are destroyed with the container";
  }  // the domain frees the retired nodes, which hold no value
  EXPECT_EQ(counted::live.load(), 0);
  EXPECT_EQ(counted::bad_destructions.load(), 0) << "a value was destroyed twice";
}

// ---------------------------------------------------------------------------------------------
// Concurrent stress

// A value names its producer (high half) and the producer's sequence number (low half).
inline std::uint64_t encode(std::uint64_t producer, std::uint64_t seq) {
  return producer << 32 | seq;
}

// threads workers each push (half of their operations) and pop; the main thread pushes `initial`
// values first as producer number `threads`. The values are heap-allocated (unique_ptr), so that a
// value popped twice or read from a freed node is a double free or a use after free under ASan.
template <class C>
void run_pool_stress(unsigned threads, std::uint64_t initial) {
  using values = typename pool_traits<C>::template with_value<std::unique_ptr<std::uint64_t>>;
  typename values::domain_type domain;
  values pool(domain);
  empty_operation<typename values::scheme_type>(domain);  // main's record, as the check expects
  std::vector<std::uint64_t> pushed(threads + 1, 0);  // per producer: its values are 0..n-1
  for (; pushed[threads] < initial; ++pushed[threads])
    pool.push(std::make_unique<std::uint64_t>(encode(threads, pushed[threads])));

  std::vector<std::vector<std::uint64_t>> popped(threads + 1);  // per consumer, in pop order
  std::atomic<bool> stop{false};
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      rng r(t + 11);
      std::uint64_t seq = 0;
      std::vector<std::uint64_t> mine;
      while (!stop.load(std::memory_order_relaxed) || mine.size() + seq < 200) {
        if (r.below(2)) {
          pool.push(std::make_unique<std::uint64_t>(encode(t, seq++)));
        } else if (std::optional<std::unique_ptr<std::uint64_t>> v = pool.pop()) {
          mine.push_back(**v);
        }
      }
      pushed[t] = seq;
      popped[t] = std::move(mine);
    });
  std::this_thread::sleep_for(stress_time() / 2);
  stop = true;
  for (auto& w : workers) w.join();
  std::uint64_t pops = 0;
  for (unsigned t = 0; t < threads; ++t) pops += popped[t].size();
  // The drain, one more consumer, in a thread of its own: the main thread retires nothing (under
  // none a thread registers only when it retires, and the check counts the records left).
  std::thread([&] {
    while (std::optional<std::unique_ptr<std::uint64_t>> v = pool.pop())
      popped[threads].push_back(**v);
  }).join();

  // Exactly the values pushed, each once.
  std::vector<std::vector<bool>> seen(threads + 1);
  for (unsigned p = 0; p <= threads; ++p) seen[p].resize(pushed[p], false);
  std::uint64_t total = 0, pushed_total = 0;
  for (unsigned c = 0; c <= threads; ++c) {
    std::vector<std::int64_t> last(threads + 1, -1);  // per producer: the last seq seen here
    for (std::uint64_t v : popped[c]) {
      const std::uint64_t producer = v >> 32, seq = v & 0xFFFFFFFFu;
      ASSERT_LE(producer, threads) << "a value nobody pushed";
      ASSERT_LT(seq, pushed[producer]) << "a value nobody pushed";
      ASSERT_FALSE(seen[producer][seq]) << "value " << producer << "/" << seq << " popped twice";
      seen[producer][seq] = true;
      if (pool_traits<C>::fifo) {
        ASSERT_GT(static_cast<std::int64_t>(seq), last[producer])
            << "consumer " << c << " saw producer " << producer << "'s values out of order";
        last[producer] = static_cast<std::int64_t>(seq);
      }
      ++total;
    }
  }
  for (std::uint64_t n : pushed) pushed_total += n;
  EXPECT_EQ(total, pushed_total) << "values were lost";
  EXPECT_GT(pops, 0u);
  // Each successful pop retires one node.
  check_reclamation_counters<values>(domain, total, threads + 2);
}

TYPED_TEST_P(pool, concurrent_pushes_and_pops_hand_each_value_out_once_2_threads) {
  run_pool_stress<TypeParam>(2, 100);
}
TYPED_TEST_P(pool, concurrent_pushes_and_pops_hand_each_value_out_once_4_threads_from_empty) {
  run_pool_stress<TypeParam>(4, 0);
}

// ---------------------------------------------------------------------------------------------
// Reclamation

TYPED_TEST_P(pool, popped_nodes_are_freed) {
  using C = TypeParam;
  using S = typename C::scheme_type;
  typename C::domain_type domain;
  {
    C c(domain);
    std::int64_t v = 0;
    const auto round = [&] {
      for (int i = 0; i < 100; ++i) c.push(v++);
      for (int i = 0; i < 100; ++i) EXPECT_TRUE(c.pop());
      return domain.stats().freed > 0;
    };
    if constexpr (S::family == reclaim::family::none) {
      for (int i = 0; i < 20; ++i) round();
      EXPECT_EQ(domain.stats().freed, 0u) << "none frees nothing while its domain lives";
    } else {
      EXPECT_TRUE(eventually(round)) << "popped nodes were never freed";
    }
    const reclaim::stats s = domain.stats();
    EXPECT_EQ(s.freed + s.pending, s.retired);
  }
}

// A program builds its queue on the main thread, hands it to workers and waits: building a
// container must not register the building thread, since under qsbr a registered thread that then
// idles holds every grace period (the lab's main thread did, and freed nothing).
TYPED_TEST_P(pool, building_the_container_holds_no_grace_period) {
  using C = TypeParam;
  using S = typename C::scheme_type;
  if constexpr (reclaim::grace_periods<S>) {
    typename C::domain_type domain;
    C c(domain);
    bool freed_all = false;
    std::thread worker([&] {
      for (std::int64_t v = 0; v < 1000; ++v) c.push(v);
      while (c.pop()) {
      }
      freed_all = domain.try_barrier(std::chrono::seconds(5));
    });
    worker.join();
    EXPECT_TRUE(freed_all) << "the thread that built the container held the barrier";
    const reclaim::stats s = domain.stats();
    EXPECT_EQ(s.freed, s.retired);
  }
}

REGISTER_TYPED_TEST_SUITE_P(
    pool, hands_values_back_in_order_and_nullopt_when_empty,
    non_trivial_values_are_moved_out_once_and_destroyed_once,
    concurrent_pushes_and_pops_hand_each_value_out_once_2_threads,
    concurrent_pushes_and_pops_hand_each_value_out_once_4_threads_from_empty, popped_nodes_are_freed,
    building_the_container_holds_no_grace_period);

}  // namespace reclaim_test::containers
