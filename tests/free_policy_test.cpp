// SPDX-License-Identifier: MIT
// The free policies (batch, amortized_free<K>, adaptive_free), checked through real schemes: what is
// freed when, that everything is freed in the end, that the stats add up, and that the adaptive K
// follows the retire rate.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "suite_support.hpp"
#include "test_support.hpp"

namespace {

using namespace reclaim_test;
using reclaim::adaptive_free;
using reclaim::amortized_free;
using reclaim::debra;
using reclaim::hp;

using amortized_schemes =
    ::testing::Types<debra<amortized_free<1>>, debra<amortized_free<4>>, debra<adaptive_free>,
                     hp<amortized_free<1>>, hp<amortized_free<4>>, hp<adaptive_free>>;

RECLAIM_TYPED_SUITE(amortized_scheme, amortized_schemes);

// The fixed K of a scheme's amortized policy, or 0 where it adapts.
template <class S>
constexpr unsigned fixed_k() {
  if constexpr (requires { S::free_policy::per_operation; })
    return S::free_policy::per_operation;
  else
    return 0;
}

// A batch retired in one operation: debra keeps it in one bag (one safe batch), hp scans inside the
// operation (R = 108 for one thread with 4 slots), so both hand the policy a batch at once.
constexpr long batch_size = 256;

template <class S>
void retire_batch(typename S::domain& domain, std::atomic<long>& destroyed, long n = batch_size) {
  typename S::guard g(domain);
  for (long i = 0; i < n; ++i) g.retire(new tracked<S>(destroyed));
}

// Runs empty operations until something of `destroyed` was freed; returns how many it took.
template <class S>
long operations_until_first_free(typename S::domain& domain, const std::atomic<long>& destroyed) {
  long ops = 0;
  while (destroyed.load() == 0 && ops < 100000) {
    empty_operation<S>(domain);
    ++ops;
  }
  return ops;
}

// One step that lets the scheme make progress (see scheme_test.cpp): retires for pointer schemes,
// operations for epoch schemes.
template <class S>
void make_progress(typename S::domain& domain, std::atomic<long>& fillers, long& fillers_made) {
  for (int i = 0; i < 64; ++i) {
    if constexpr (S::family == reclaim::family::pointer) {
      retire_one<S>(domain, fillers);
      ++fillers_made;
    } else {
      empty_operation<S>(domain);
    }
  }
}

// ---------------------------------------------------------------------------------------------

TYPED_TEST(amortized_scheme, safe_batch_is_freed_k_objects_per_operation_not_at_once) {
  using S = TypeParam;
  constexpr unsigned k = fixed_k<S>();
  std::atomic<long> batch{0}, fillers{0};
  long fillers_made = 0;
  {
    typename S::domain domain;
    retire_batch<S>(domain, batch);
    EXPECT_EQ(batch.load(), 0) << "the policy freed inside the operation that released the batch";
    ASSERT_LT(operations_until_first_free<S>(domain, batch), 100000);
    long before = batch.load();
    if (k != 0)
      EXPECT_EQ(before, static_cast<long>(k)) << "the first freeing operation freed more than K";
    else
      EXPECT_LE(before, 64);
    for (int i = 0; i < 10; ++i) {
      empty_operation<S>(domain);
      long freed_now = batch.load() - before;
      if (k != 0)
        EXPECT_EQ(freed_now, static_cast<long>(k)) << "operation " << i;
      else {
        EXPECT_GE(freed_now, 1) << "operation " << i;
        EXPECT_LE(freed_now, 64) << "operation " << i;
      }
      before = batch.load();
    }
    reclaim::stats s = domain.stats();
    EXPECT_EQ(s.retired, static_cast<std::uint64_t>(batch_size));
    EXPECT_EQ(s.freed, static_cast<std::uint64_t>(batch.load()));
    EXPECT_EQ(s.pending, s.retired - s.freed);

    // Everything is freed while the domain lives, given operations.
    bool all = eventually([&] {
      make_progress<S>(domain, fillers, fillers_made);
      return batch.load() == batch_size;
    });
    EXPECT_TRUE(all) << "the batch was never completely freed: " << batch.load();
    s = domain.stats();
    EXPECT_EQ(s.retired, static_cast<std::uint64_t>(batch_size + fillers_made));
    EXPECT_EQ(s.freed, static_cast<std::uint64_t>(batch.load() + fillers.load()));
    EXPECT_EQ(s.pending, s.retired - s.freed);
    EXPECT_GE(s.pending_peak, s.pending);
    EXPECT_GT(s.free_ns, 0u) << "no free time was recorded";
  }
  EXPECT_EQ(batch.load(), batch_size);
  EXPECT_EQ(fillers.load(), fillers_made) << "domain destruction left garbage";
}

TYPED_TEST(amortized_scheme, domain_destruction_frees_the_freeable_list) {
  using S = TypeParam;
  std::atomic<long> batch{0};
  {
    typename S::domain domain;
    retire_batch<S>(domain, batch);
    ASSERT_LT(operations_until_first_free<S>(domain, batch), 100000);
    ASSERT_LT(batch.load(), batch_size) << "the freeable list was already empty";
  }
  EXPECT_EQ(batch.load(), batch_size);
}

TYPED_TEST(amortized_scheme, thread_exit_frees_its_freeable_list) {
  using S = TypeParam;
  std::atomic<long> batch{0};
  typename S::domain domain;
  long left_at_exit = 0;
  std::thread t([&] {
    retire_batch<S>(domain, batch);
    operations_until_first_free<S>(domain, batch);
    left_at_exit = batch_size - batch.load();
  });
  t.join();
  EXPECT_GT(left_at_exit, 0) << "the test did not exit with a non-empty freeable list";
  // Every node of the batch was proven safe (nothing protected it): exit frees them all.
  EXPECT_EQ(batch.load(), batch_size);
  reclaim::stats s = domain.stats();
  EXPECT_EQ(s.freed, static_cast<std::uint64_t>(batch_size));
  EXPECT_EQ(s.pending, 0u);
}

// A node protected by another thread survives a retirer that frees amortized and then exits with a
// non-empty freeable list, and is freed once the protection ends.
TYPED_TEST(amortized_scheme, protected_node_survives_an_exiting_retirer) {
  using S = TypeParam;
  std::atomic<long> victim_destroyed{0}, batch{0}, fillers{0};
  long fillers_made = 0;
  typename S::domain domain;
  std::atomic<tracked<S>*> shared{new tracked<S>(victim_destroyed, 42)};
  gate protecting, may_release, released;
  std::atomic<bool> intact{false};
  std::thread reader(
      [&] { protect_until_released<S>(domain, shared, protecting, may_release, released, intact); });
  protecting.wait();
  std::thread retirer([&] {
    {
      typename S::guard g(domain);
      g.retire(shared.exchange(nullptr));
    }
    for (int i = 0; i < 8; ++i) retire_batch<S>(domain, batch);
    for (int i = 0; i < 100; ++i) empty_operation<S>(domain);
  });
  retirer.join();
  EXPECT_EQ(victim_destroyed.load(), 0) << "freed while another thread protected it";
  may_release.open();
  released.wait();
  reader.join();
  EXPECT_TRUE(intact.load());
  bool freed = eventually([&] {
    make_progress<S>(domain, fillers, fillers_made);
    return victim_destroyed.load() == 1;
  });
  EXPECT_TRUE(freed) << "the victim was never freed after its protection ended";
}

// Amortized frees happen between the scheme's flushes of the pending gauge; they must reach the gauge
// too, or a thread that freed its whole freeable list still counts it there while another thread's
// retires raise the peak. Two threads take turns (never concurrently, so that stats().pending, read
// after every operation, is the true pending): retire a batch, then free it with empty operations.
// The reported peak must be within threads x flush_interval of the true one.
TYPED_TEST(amortized_scheme, pending_peak_is_within_a_flush_interval_per_thread_of_the_true_peak) {
  using S = TypeParam;
  constexpr int threads = 2, rounds = 3;
  constexpr long frees_per_turn = 2 * batch_size;  // K >= 1: enough to empty the freeable list
  std::atomic<long> destroyed{0};
  typename S::domain domain;
  std::uint64_t true_peak = 0;  // written by the thread whose turn it is; turns are ordered
  std::atomic<int> turn{0};
  auto observe = [&] { true_peak = std::max(true_peak, domain.stats().pending); };
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      for (int round = 0; round < rounds; ++round) {
        // acquire: pairs with the release below; the previous turn's work happens before ours.
        while (turn.load(std::memory_order_acquire) != round * threads + t) std::this_thread::yield();
        retire_batch<S>(domain, destroyed);
        observe();
        for (long i = 0; i < frees_per_turn; ++i) {
          empty_operation<S>(domain);
          observe();
        }
        turn.store(round * threads + t + 1, std::memory_order_release);
      }
      // Stay registered until every turn is done: exit would flush this thread's delta.
      while (turn.load(std::memory_order_acquire) != rounds * threads) std::this_thread::yield();
    });
  for (auto& w : workers) w.join();
  ASSERT_GT(destroyed.load(), rounds * threads * batch_size / 2) << "the turns freed too little";
  const reclaim::stats s = domain.stats();
  const auto slack = static_cast<std::uint64_t>(threads * reclaim::core::pending_gauge::flush_interval);
  EXPECT_LE(s.pending_peak, true_peak + slack) << "true peak " << true_peak;
  EXPECT_GE(s.pending_peak + slack, true_peak);
}

// ---------------------------------------------------------------------------------------------
// The batch policy, for contrast: the safe batch is freed at once.

TEST(batch_free_policy, frees_the_safe_batch_at_once) {
  std::atomic<long> batch{0};
  debra<>::domain domain;
  retire_batch<debra<>>(domain, batch);
  ASSERT_LT(operations_until_first_free<debra<>>(domain, batch), 100000);
  EXPECT_EQ(batch.load(), batch_size);
}

// ---------------------------------------------------------------------------------------------
// The longest pause (stats().longest_pause_ns): one batch freed at once, or one amortized step.

constexpr auto slow_free = std::chrono::microseconds(50);

// A deleter that takes slow_free, busy (a sleep would add the scheduler's wake-up to the pause).
template <class S>
void slow_delete(tracked<S>* node) {
  const auto until = std::chrono::steady_clock::now() + slow_free;
  while (std::chrono::steady_clock::now() < until) {
  }
  delete node;
}

template <class S>
void retire_slow_batch(typename S::domain& domain, std::atomic<long>& destroyed, long n) {
  typename S::guard g(domain);
  for (long i = 0; i < n; ++i) g.template retire<&slow_delete<S>>(new tracked<S>(destroyed));
}

// Runs empty operations until at least n nodes of `destroyed` were freed.
template <class S>
void operate_until_freed(typename S::domain& domain, const std::atomic<long>& destroyed,
                         long n) {
  for (long ops = 0; destroyed.load() < n && ops < 1'000'000; ++ops) empty_operation<S>(domain);
  ASSERT_GE(destroyed.load(), n);
}

// Batch free: the whole batch is one pause; the stat keeps the longest, and the longest is part
// of the time spent freeing (a maximum, not a sum).
TEST(batch_free_policy, the_longest_pause_is_the_longest_batch_freed_at_once) {
  using S = debra<>;
  std::atomic<long> destroyed{0};
  S::domain domain;
  EXPECT_EQ(domain.stats().longest_pause_ns, 0u) << "nothing freed yet";
  const long n = 64;
  retire_slow_batch<S>(domain, destroyed, n);
  operate_until_freed<S>(domain, destroyed, n);
  const reclaim::stats s = domain.stats();
  EXPECT_GE(s.longest_pause_ns, static_cast<std::uint64_t>(n * slow_free.count() * 1000));
  EXPECT_LE(s.longest_pause_ns, s.free_ns);
  retire_batch<S>(domain, destroyed, 8);  // fast frees: a far shorter pause
  operate_until_freed<S>(domain, destroyed, n + 8);
  EXPECT_EQ(domain.stats().longest_pause_ns, s.longest_pause_ns) << "the longest pause is kept";
}

// Amortized free: a pause is one step (K frees, or a timed sample of them), never the batch; each
// timed step counts timing_period times in free_ns, so the longest is at most free_ns over it.
TYPED_TEST(amortized_scheme, the_longest_pause_is_one_amortized_step) {
  using S = TypeParam;
  std::atomic<long> destroyed{0};
  typename S::domain domain;
  const long n = batch_size;  // hp scans twice in the retiring operation (R = 108)
  retire_slow_batch<S>(domain, destroyed, n);
  operate_until_freed<S>(domain, destroyed, n / 2);
  const reclaim::stats s = domain.stats();
  EXPECT_GE(s.longest_pause_ns, static_cast<std::uint64_t>(slow_free.count() * 1000))
      << "a timed step frees at least one node";
  using local = typename S::free_policy::local;
  EXPECT_LE(s.longest_pause_ns * local::timing_period, s.free_ns);
}

// ---------------------------------------------------------------------------------------------
// The adaptive rate.

// Runs `ops` operations that each retire `per_op` nodes; returns the pending garbage after them.
template <class S>
std::uint64_t pending_after(typename S::domain& domain, std::atomic<long>& destroyed, long ops,
                            int per_op) {
  for (long i = 0; i < ops; ++i) {
    typename S::guard g(domain);
    for (int j = 0; j < per_op; ++j) g.retire(new tracked<S>(destroyed));
  }
  return domain.stats().pending;
}

constexpr long heavy_ops = 3000;
constexpr int heavy_rate = 8;

template <class Scheme>
void check_adaptive_keeps_garbage_bounded() {
  using fixed = Scheme::template with<amortized_free<1>>;
  using adaptive = Scheme::template with<adaptive_free>;
  std::atomic<long> a{0}, b{0};
  std::uint64_t pending_fixed = 0, pending_adaptive = 0;
  {
    typename fixed::domain domain;
    pending_fixed = pending_after<fixed>(domain, a, heavy_ops, heavy_rate);
  }
  {
    typename adaptive::domain domain;
    pending_adaptive = pending_after<adaptive>(domain, b, heavy_ops, heavy_rate);
  }
  // K = 1 frees one node per operation while eight are retired: garbage grows by ~7 per operation.
  EXPECT_GT(pending_fixed, static_cast<std::uint64_t>(heavy_ops * (heavy_rate - 1) / 2));
  // The adaptive K catches up: a few batches (debra: 3 bags of 20 ops x 8; hp: R = 108).
  EXPECT_LT(pending_adaptive, 2000u);
  EXPECT_EQ(a.load(), heavy_ops * heavy_rate);
  EXPECT_EQ(b.load(), heavy_ops * heavy_rate);
}

constexpr long probe_size = 150;

// The largest number of nodes of a fresh batch freed by one operation: the K in effect. `batch`
// must outlive the domain (whatever the scheme still holds of the batch is freed with it).
template <class S>
long largest_per_operation_free(typename S::domain& domain, std::atomic<long>& batch) {
  // Small enough that hp scans at most twice inside the operation (R = 108): every release that
  // finds the list non-empty doubles K, which is not what this measures.
  retire_batch<S>(domain, batch, probe_size);
  operations_until_first_free<S>(domain, batch);
  long largest = batch.load(), before = batch.load();
  for (int i = 0; i < 1000 && batch.load() < probe_size; ++i) {
    empty_operation<S>(domain);
    largest = std::max(largest, batch.load() - before);
    before = batch.load();
  }
  return largest;
}

template <class Scheme>
void check_adaptive_k_rises_and_falls() {
  using adaptive = Scheme::template with<adaptive_free>;
  std::atomic<long> work{0}, quiet{0}, heavy{0}, calm{0};
  {
    typename adaptive::domain domain;
    // A quiet start: K stays at 1 (or one step above it).
    pending_after<adaptive>(domain, work, 500, 1);
    for (int i = 0; i < 500; ++i) empty_operation<adaptive>(domain);
    EXPECT_LE(largest_per_operation_free<adaptive>(domain, quiet), 2) << "K rose without cause";
    // Eight retires per operation: K rises.
    pending_after<adaptive>(domain, work, heavy_ops, heavy_rate);
    for (int i = 0; i < 500; ++i) empty_operation<adaptive>(domain);
    EXPECT_GE(largest_per_operation_free<adaptive>(domain, heavy), 4) << "K did not rise";
    // Back to one retire per operation: K falls back.
    pending_after<adaptive>(domain, work, 2000, 1);
    for (int i = 0; i < 500; ++i) empty_operation<adaptive>(domain);
    EXPECT_LE(largest_per_operation_free<adaptive>(domain, calm), 2) << "K did not fall back";
  }
  EXPECT_EQ(quiet.load() + heavy.load() + calm.load(), 3 * probe_size);
}

// Instantiates a scheme with one free policy.
struct debra_family {
  template <class Policy>
  using with = debra<Policy>;
};
struct hp_family {
  template <class Policy>
  using with = hp<Policy>;
};

TEST(adaptive_free_policy, debra_keeps_garbage_bounded_at_eight_retires_per_operation) {
  check_adaptive_keeps_garbage_bounded<debra_family>();
}
TEST(adaptive_free_policy, hp_keeps_garbage_bounded_at_eight_retires_per_operation) {
  check_adaptive_keeps_garbage_bounded<hp_family>();
}
TEST(adaptive_free_policy, debra_k_rises_with_the_retire_rate_and_falls_back) {
  check_adaptive_k_rises_and_falls<debra_family>();
}
TEST(adaptive_free_policy, hp_k_rises_with_the_retire_rate_and_falls_back) {
  check_adaptive_k_rises_and_falls<hp_family>();
}

}  // namespace
