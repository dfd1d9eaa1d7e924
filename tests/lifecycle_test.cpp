// SPDX-License-Identifier: MIT
// Thread lifecycles, nesting and misuse: what a real program does to a scheme beyond a benchmark's
// steady state. Waves of short-lived threads, thread_local objects whose destructors use a
// container, deleters that use other domains while their thread exits, container operations nested
// inside a protection the caller holds, and (debug builds) misuse named by an assertion.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "suite_support.hpp"
#include "test_support.hpp"

namespace {

using namespace reclaim_test;
// lazy_list, or where the scheme cannot protect it (lfrc: its sentinels are members), hm_list.
template <class S>
using list_of = std::conditional_t<reclaim::protects<S, reclaim::ds::lazy_list<std::int64_t, S>>,
                                   reclaim::ds::lazy_list<std::int64_t, S>,
                                   reclaim::ds::hm_list<std::int64_t, S>>;

RECLAIM_TYPED_SUITE(every_scheme_lifecycle, all_schemes);

RECLAIM_TYPED_SUITE(reclaiming_lifecycle, reclaiming_schemes);

// The schemes of the churn test: every reclaiming scheme, and nbr with the lab's default bag.
using churn_schemes = ::testing::Types<
    reclaim::debra<>, reclaim::debra<reclaim::amortized_free<1>>, reclaim::ebr<>, reclaim::ner<>,
    reclaim::qsbr<>, reclaim::rcu<>, reclaim::hp<>, reclaim::hp<reclaim::amortized_free<1>>,
    reclaim::token_naive<>, reclaim::token_pass_first<>, reclaim::token_periodic<>,
    reclaim::token_af<>, reclaim::nbr<>, reclaim::nbr_plus<>,
    reclaim::nbr<reclaim::scan_threshold<64>>, reclaim::nbr_plus<reclaim::scan_threshold<64>>,
    reclaim::stamp_it<>, reclaim::lfrc<>, RECLAIM_TEST_HP_FAMILY>;
RECLAIM_TYPED_SUITE(churn, churn_schemes);

// One insert/erase pair of `key`: one retired node when both succeed.
template <class List>
void pair_of_operations(List& list, std::int64_t key) {
  list.insert(key);
  list.erase(key);
}

// ---------------------------------------------------------------------------------------------
// Garbage of short-lived threads (paper 003, section 4.3: who frees what exited threads left, and
// when?). Waves of two threads that each run `pairs` insert/erase pairs and exit. What they leave
// must keep its age in the orphanage and be freed by whoever comes next once it is safe: pending
// garbage must not grow with the number of waves.

template <class S>
void check_short_lived_threads(int pairs) {
  typename S::domain domain;
  list_of<S> list(domain);
  const long waves = scaled(5000);
  for (long w = 0; w < waves; ++w) {
    std::thread a([&] {
      for (int i = 0; i < pairs; ++i) pair_of_operations(list, 1);
    });
    std::thread b([&] {
      for (int i = 0; i < pairs; ++i) pair_of_operations(list, 2);
    });
    a.join();
    b.join();
  }
  const reclaim::stats after = domain.stats();
  const char* scheme = ::testing::UnitTest::GetInstance()->current_test_info()->type_param();
  std::printf("[  churn   ] %s, %d pair(s) per thread, %ld waves: retired %llu, freed %llu, "
              "pending %llu, epochs %llu\n",
              scheme, pairs, waves, static_cast<unsigned long long>(after.retired),
              static_cast<unsigned long long>(after.freed),
              static_cast<unsigned long long>(after.pending),
              static_cast<unsigned long long>(after.epochs));
  EXPECT_EQ(after.retired, static_cast<std::uint64_t>(2 * waves * pairs));
  EXPECT_EQ(after.threads, 0u) << "every record is released when its thread exits";
  EXPECT_LE(after.records, 2u) << "exited threads' records are reused";
  // Garbage left by the last waves only, whatever the number of waves.
  const std::uint64_t bound =
      200 * 2 * static_cast<std::uint64_t>(pairs) + resting_garbage<S>(domain);
  EXPECT_LE(after.pending, bound) << "garbage of short-lived threads piles up";

  // One live thread that keeps working frees what the last waves left.
  bool drained = eventually([&] {
    for (int i = 0; i < 16; ++i) pair_of_operations(list, 3);
    return domain.stats().pending <= resting_garbage<S>(domain);
  });
  EXPECT_TRUE(drained) << "pending " << domain.stats().pending;
  EXPECT_TRUE(list.unsafe_well_formed());
  EXPECT_EQ(list.size(), 0u);
}

TYPED_TEST(churn, garbage_of_short_lived_threads_is_freed_1_pair_each) {
  check_short_lived_threads<TypeParam>(1);
}

TYPED_TEST(churn, garbage_of_short_lived_threads_is_freed_15_pairs_each) {
  check_short_lived_threads<TypeParam>(15);
}

// The last thread out frees everything (paper 003, section 4.3: Stamp-it's last thread takes the
// global retire list; the epoch schemes' exiting threads drive the epoch past their orphans' age;
// hp's exiting thread scans once more). Workers run and exit, nothing runs after them, and nothing
// may be left pending: a program's last workers must not leave their garbage until the domain
// goes.
using last_out_schemes =
    ::testing::Types<reclaim::debra<>, reclaim::debra<reclaim::amortized_free<1>>, reclaim::ebr<>,
                     reclaim::ner<>, reclaim::qsbr<>, reclaim::stamp_it<>, reclaim::hp<>,
                     reclaim::hp<reclaim::amortized_free<1>>>;
RECLAIM_TYPED_SUITE(last_thread_out, last_out_schemes);

TYPED_TEST(last_thread_out, frees_what_every_exited_thread_left) {
  using S = TypeParam;
  typename S::domain domain;
  list_of<S> list(domain);
  const int pairs = static_cast<int>(scaled(2000));
  for (int round = 0; round < 3; ++round) {
    std::vector<std::thread> workers;
    for (int t = 0; t < 3; ++t)
      workers.emplace_back([&, t] {
        for (int i = 0; i < pairs; ++i) pair_of_operations(list, t);
      });
    for (std::thread& w : workers) w.join();
    const reclaim::stats s = domain.stats();
    EXPECT_EQ(s.retired, static_cast<std::uint64_t>(3 * (round + 1) * pairs));
    EXPECT_EQ(s.pending, 0u) << "round " << round << ": retired " << s.retired << ", freed "
                             << s.freed;
    EXPECT_EQ(s.freed, s.retired);
  }
  EXPECT_EQ(list.size(), 0u);
}

// ---------------------------------------------------------------------------------------------
// thread_local objects whose destructors use a container. C++ destroys a thread's thread_local
// objects in reverse order of construction: one built before the thread's first use of a domain
// is destroyed after whatever the domain keeps per thread was built, so its destructor must still
// find the thread registered, and the record must be released when the thread is really done.

// What a thread leaves behind when its first act is to give a thread_local destructor a pair of
// operations on a list (so the thread_local is constructed before the thread's first use of the
// domain) and it then runs `body` on the list: the domain's stats after the thread has exited, and
// the list.
struct after_thread_exit {
  reclaim::stats stats;
  bool well_formed;
  std::size_t size;
};
template <class S, class Body>
after_thread_exit thread_with_exit_pair(std::int64_t key_at_exit, Body body) {
  typename S::domain domain;
  list_of<S> list(domain);
  std::thread([&] {
    at_thread_exit<S>().run = [&list, key_at_exit] { pair_of_operations(list, key_at_exit); };
    body(list);
  }).join();
  return {domain.stats(), list.unsafe_well_formed(), list.size()};
}

TYPED_TEST(every_scheme_lifecycle, thread_local_destructor_may_use_a_container) {
  using S = TypeParam;
  const after_thread_exit after =
      thread_with_exit_pair<S>(7, [](list_of<S>& list) { pair_of_operations(list, 8); });
  EXPECT_EQ(after.stats.threads, 0u)
      << "the record taken again by the thread_local destructor was not released";
  EXPECT_EQ(after.stats.retired, 2u) << "both pairs ran, the one of the destructor included";
  EXPECT_TRUE(after.well_formed);
  EXPECT_EQ(after.size, 0u);
}

TYPED_TEST(every_scheme_lifecycle, thread_local_destructor_may_be_a_threads_first_use) {
  using S = TypeParam;
  const after_thread_exit after = thread_with_exit_pair<S>(9, [](list_of<S>&) {});
  EXPECT_EQ(after.stats.threads, 0u);
  EXPECT_EQ(after.stats.retired, 1u);
  EXPECT_EQ(after.size, 0u);
}

// ---------------------------------------------------------------------------------------------
// fork(): only the forking thread lives on in the child; the parent's other threads stop for good
// wherever they were, here inside operations (one stalled in the middle of one, as a preempted
// thread would be). The child keeps using the same domain and container: its operations work, what
// it retires is freed (a barrier completes: nothing waits for a thread that does not exist there,
// no signal goes to one), and destroying the domain is without complaint (debug builds check that
// no guard is held on a domain being destroyed: the parent's threads held some).
//
// The sanitizers' runtimes of GCC 12 keep locks that fork() does not take, and a child forked
// while another thread holds one hangs inside the runtime. ASan's is its allocator's: under ASan
// the workers pause between operations for the fork (the stalled thread still holds its guard).
// TSan's include its stack depot, which any allocation may hold (its own background thread's
// too), and the one spin lock that emulates 16-byte atomics: no pause avoids them, and the test
// does not run under TSan. The debug preset (make check) forks at full speed. The child ends with
// _Exit, not exit(): LeakSanitizer would report what only the vanished threads' stacks and
// thread_locals pointed to.

template <class S>
void use_after_fork(typename S::domain& domain,
                    reclaim::ds::hm_hashset_restart<std::int64_t, S>& set) {
  for (std::int64_t key = 1'000'000; key < 1'000'500; ++key) {
    EXPECT_TRUE(set.insert(key));
    EXPECT_TRUE(set.contains(key));
    EXPECT_TRUE(set.erase(key));
  }
  EXPECT_TRUE(set.unsafe_well_formed());
  std::atomic<long> destroyed{0};
  constexpr long n = 3000;
  retire_many<S>(domain, destroyed, n);
  if constexpr (reclaim::grace_periods<S>) {
    EXPECT_TRUE(domain.try_barrier(std::chrono::seconds(10)))
        << "a barrier in the child waited for a thread of the parent";
    EXPECT_EQ(destroyed.load(), n);
  }
}

TYPED_TEST(every_scheme_lifecycle, a_forked_child_keeps_working_beside_the_parents_threads) {
  using S = TypeParam;
  using set_type = reclaim::ds::hm_hashset_restart<std::int64_t, S>;
  if (tsan) GTEST_SKIP() << "GCC 12's TSan runtime deadlocks in a child forked beside threads";
  typename S::domain domain;
  set_type set(domain, 64);
  std::atomic<bool> stop{false}, pause{false};
  std::atomic<long> operations{0};
  std::atomic<int> paused{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < 2; ++t)
    workers.emplace_back([&, t] {
      rng r(t + 5);
      while (!stop.load(std::memory_order_relaxed)) {
        if (pause.load()) {
          paused.fetch_add(1);
          while (pause.load()) std::this_thread::yield();
          paused.fetch_sub(1);
        }
        const auto key = static_cast<std::int64_t>(r.below(256));
        if (r.below(2)) set.insert(key); else set.erase(key);
        operations.fetch_add(1, std::memory_order_relaxed);
      }
    });
  gate inside;
  std::thread stalled([&] {
    typename S::guard g(domain);
    RECLAIM_READ_PHASE(g);  // under nbr a read phase: a round would signal and wait for it
    inside.open();
    while (!stop.load(std::memory_order_relaxed))
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  inside.wait();
  while (operations.load() < 1000) std::this_thread::yield();
  if (sanitized) {  // ASan (TSan skipped above): its allocator
    pause = true;
    while (paused.load() < 2) std::this_thread::yield();
  }
  const std::string outcome = in_child_process(std::chrono::seconds(60), [&] {
    use_after_fork<S>(domain, set);
    std::destroy_at(&set);
    std::destroy_at(&domain);
  });
  pause = false;
  stop = true;
  for (auto& w : workers) w.join();
  stalled.join();
  EXPECT_EQ(outcome, "");
  EXPECT_TRUE(set.unsafe_well_formed());
}

// ---------------------------------------------------------------------------------------------
// Deleters that run while their thread exits (hp's last scan, an amortized policy's drain) may use
// other domains: make the thread's first use of one, construct one, destroy one. None of that may
// wait for a lock that thread exit holds.

TYPED_TEST(every_scheme_lifecycle, deleters_that_use_other_domains_at_thread_exit_do_not_deadlock) {
  using S = TypeParam;
  const std::string outcome = in_child_process(std::chrono::seconds(30), [] {
    std::atomic<long> destroyed{0};
    typename S::domain domain, other;
    other_domains<S>::other = &other;
    for (int t = 0; t < 4; ++t) {
      std::thread([&] {
        typename S::guard g(domain);
        for (int i = 0; i < 8; ++i)
          g.template retire<&deleter_using_other_domains<S>>(new tracked<S>(destroyed));
      }).join();
    }
    // Whatever was not freed at thread exit is freed with the domain, by the same deleter.
    std::thread([&] { retire_many<S>(domain, destroyed, 2000); }).join();
  });
  EXPECT_EQ(outcome, "");
}

// ---------------------------------------------------------------------------------------------
// A container operation nested inside a protection the caller holds must not take it over: an
// outer guard protects a node (hazard slot 0; nbr: a write phase reserving it), then runs list
// operations (which use slots 0 and 1 of their own guards, and their own phases); another thread
// unlinks and retires the node and churns. The node must survive until the outer guard ends.

template <class S>
void check_nested_container_operations_keep_protection(bool outer_ends) {
  std::atomic<long> victim_destroyed{0}, fillers{0};
  typename S::domain domain;
  list_of<S> list(domain);
  for (std::int64_t k = 0; k < 16; ++k) list.insert(2 * k);
  std::atomic<tracked<S>*> shared{new tracked<S>(victim_destroyed, 42)};
  gate nested_done, may_release, released, may_exit;
  std::atomic<bool> intact{false};
  std::thread holder([&] {
    {
      typename S::guard g(domain);
      RECLAIM_READ_PHASE(g);
      tracked<S>* p = g.protect(shared, 0);
      g.write_phase(p);
      for (std::int64_t k = 0; k < 64; ++k) {
        list.insert(2 * k + 1);
        list.contains(k);
        list.erase(2 * k + 1);
      }
      nested_done.open();
      may_release.wait();
      intact = p != nullptr && p->payload == 42;
    }
    if constexpr (requires { domain.thread_offline(); }) domain.thread_offline();
    released.open();
    may_exit.wait();
  });
  nested_done.wait();
  {
    typename S::guard g(domain);
    g.retire(shared.exchange(nullptr));
  }
  retire_many<S>(domain, fillers, scaled(4000));
  EXPECT_EQ(victim_destroyed.load(), 0) << "freed while an outer guard still protected it";
  may_release.open();
  released.wait();
  EXPECT_TRUE(intact.load()) << "the holder read a damaged node";
  if (outer_ends) {
    const bool freed = eventually([&] {
      retire_many<S>(domain, fillers, 64);
      return victim_destroyed.load() == 1;
    });
    EXPECT_TRUE(freed) << "the node was never freed after the outer guard ended";
  }
  may_exit.open();
  holder.join();
  EXPECT_TRUE(list.unsafe_well_formed());
  EXPECT_EQ(list.size(), 16u);
}

TYPED_TEST(reclaiming_lifecycle, container_operation_nested_in_a_held_protection_keeps_it) {
  check_nested_container_operations_keep_protection<TypeParam>(false);
}

TYPED_TEST(reclaiming_lifecycle, protection_held_around_nested_operations_ends_with_its_guard) {
  check_nested_container_operations_keep_protection<TypeParam>(true);
}

// ---------------------------------------------------------------------------------------------
// Debug builds name misuse with an assertion instead of crashing later.

#ifndef NDEBUG
template <class S>
class misuse : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};
using misuse_schemes = ::testing::Types<reclaim::debra<>, reclaim::ebr<>, reclaim::qsbr<>,
                                        reclaim::rcu<>, reclaim::hp<>, reclaim::token_af<>,
                                        reclaim::nbr<reclaim::scan_threshold<64>>,
                                        reclaim::stamp_it<>>;
TYPED_TEST_SUITE(misuse, misuse_schemes);

// Runs misuse(guard, destroyed) inside an operation on a domain of its own; `destroyed` is the
// counter for the nodes it makes.
template <class S, class Misuse>
void inside_an_operation(Misuse misuse) {
  std::atomic<long> destroyed{0};
  typename S::domain domain;
  typename S::guard g(domain);
  misuse(g, destroyed);
}

TYPED_TEST(misuse, retiring_a_node_twice_is_named) {
  using S = TypeParam;
  EXPECT_DEATH(inside_an_operation<S>([](typename S::guard& g, std::atomic<long>& destroyed) {
                 auto* node = new tracked<S>(destroyed);
                 g.retire(node);
                 g.retire(node);
               }),
               "retired twice");
}

TYPED_TEST(misuse, destroying_a_domain_while_a_guard_is_held_is_named) {
  using S = TypeParam;
  EXPECT_DEATH(
      {
        auto* domain = new typename S::domain;
        typename S::guard g(*domain);
        delete domain;
      },
      "guard");
}

TYPED_TEST(misuse, using_a_guard_from_another_thread_is_named) {
  using S = TypeParam;
  EXPECT_DEATH(inside_an_operation<S>([](typename S::guard& g, std::atomic<long>& destroyed) {
                 std::thread([&] { g.retire(new tracked<S>(destroyed)); }).join();
               }),
               "another thread");
}
#endif

}  // namespace
