// SPDX-License-Identifier: MIT
// Out of memory on chosen threads (oom_support.hpp), under every scheme whose retire, scan or exit
// used scratch memory (snapshots of hazards, reservations or eras, lists of readers to signal or
// ping, headers to hand garbage over): a retire takes its node whatever the allocator says and
// never throws (a caller that deleted the node on an exception would free it twice), a scan that
// cannot get memory for its snapshot falls back to one that needs none, a thread that exits while
// allocation fails neither terminates nor loses its garbage, and (stamp_it, lfrc) a region leaked
// past its thread's exit leaves nothing behind once the domain is gone (LeakSanitizer, at process
// exit).
#include <atomic>
#include <new>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "oom_support.hpp"
#include "suite_support.hpp"
#include "test_support.hpp"

namespace reclaim_test {
namespace {

// Runs body(domain, destroyed) while another thread sits inside a guard that protected a node of
// the domain (a hazard, a published era, an interval, a stamp in the pool, a count, nbr's read
// phase: what scans and rounds must read, keep or signal), then lets that thread go and checks
// that a barrier frees all: the `retired` nodes the body retired (counted in `destroyed`) and the
// protected one.
template <class S, class Body>
void with_a_protecting_reader(long retired, Body body) {
  std::atomic<long> destroyed{0};
  {
    typename S::domain d;
    std::atomic<tracked<S>*> source{new tracked<S>(destroyed, -1)};
    {
      gate inside, release;
      std::thread reader([&] {
        typename S::guard g(d);
        RECLAIM_READ_PHASE(g);  // under nbr a read phase, which rounds signal (and remember)
        (void)g.protect(source, 0);
        inside.open();
        release.wait();
      });
      inside.wait();
      body(d, destroyed);
      release.open();
      reader.join();
    }
    d.retire(source.exchange(nullptr));
    EXPECT_TRUE(d.try_barrier(patience)) << "garbage was lost or is held for ever";
    const reclaim::stats s = d.stats();
    EXPECT_EQ(s.retired, static_cast<std::uint64_t>(retired + 1));
    EXPECT_EQ(s.freed, static_cast<std::uint64_t>(retired + 1));
  }
  EXPECT_EQ(destroyed.load(), retired + 1);
}

// Makes every allocation of the calling thread fail from here to its very end, thread exit
// included: the scope is built in `storage` and never destroyed.
struct failing_until_exit {
  alignas(failing_allocations) unsigned char storage[sizeof(failing_allocations)];
  void start() { ::new (static_cast<void*>(storage)) failing_allocations; }
};

using schemes =
    ::testing::Types<reclaim::hp<>, RECLAIM_TEST_HP_FAMILY,
                     reclaim::nbr<reclaim::scan_threshold<64>>,
                     reclaim::nbr_plus<reclaim::scan_threshold<64>>, reclaim::he<>, reclaim::ibr<>,
                     reclaim::wfe<>, reclaim::stamp_it<>, reclaim::lfrc<>>;
RECLAIM_TYPED_SUITE(out_of_memory, schemes);

// Every retire under a failing operator new returns normally, from the domain and from a guard,
// while another thread's protection makes scans keep (and snapshot) something; everything it took
// is freed once that thread has let go: nothing thrown, nothing lost, nothing freed twice (ASan).
TYPED_TEST(out_of_memory, retire_neither_throws_nor_loses_nodes) {
  using S = TypeParam;
  constexpr long n = 3000;
  long thrown = 0;
  std::uint64_t refused = 0;
  with_a_protecting_reader<S>(n, [&](typename S::domain& d, std::atomic<long>& destroyed) {
    std::thread([&] {
      // Registered and warmed up first: the test is about retire and scans, not registration.
      retire_many<S>(d, destroyed, 1);
      std::vector<tracked<S>*> nodes;
      for (long i = 1; i < n; ++i) nodes.push_back(new tracked<S>(destroyed, i));
      failing_allocations no_memory;  // counted here, checked outside: a check may allocate
      for (long i = 0; i < n - 1; ++i) {
        try {
          if (i % 2 == 0) {
            d.retire(nodes[i]);
          } else {
            typename S::guard g(d);
            g.retire(nodes[i]);
          }
        } catch (...) {
          ++thrown;
        }
      }
      refused = refused_allocations();
    }).join();
  });
  EXPECT_EQ(thrown, 0) << "a retire threw for want of memory";
  EXPECT_GT(refused, 0u) << "no allocation failed: the test tests nothing";
}

// A thread retires fewer nodes than a scan waits for (its exit's scan is its first, with no
// snapshot memory yet) while another thread's protection keeps them, then exits with every
// allocation failing: it must neither terminate nor lose what it hands over, and a barrier frees
// it all once the protection is gone.
TYPED_TEST(out_of_memory, a_thread_exiting_without_memory_hands_its_garbage_over) {
  using S = TypeParam;
  constexpr long n = 50;
  with_a_protecting_reader<S>(n, [&](typename S::domain& d, std::atomic<long>& destroyed) {
    failing_until_exit no_memory;
    std::thread([&] {
      retire_many<S>(d, destroyed, n);
      no_memory.start();
    }).join();
  });
}

// stamp_it and lfrc: a region (reclaim::region_guard) that its thread never ends, here built in
// storage the test owns and never destroyed, with a node protected through it. The thread's exit
// releases the record (its region, its counts); the domain's destruction then frees everything,
// and LeakSanitizer finds nothing at process exit.
using region_schemes = ::testing::Types<reclaim::stamp_it<>, reclaim::lfrc<>>;
RECLAIM_TYPED_SUITE(leaked_region, region_schemes);

TYPED_TEST(leaked_region, a_region_left_open_at_thread_exit_is_released_with_its_record) {
  using S = TypeParam;
  using node = tracked<S>;
  std::atomic<long> destroyed{0};
  constexpr long n = 100;
  {
    typename S::domain d;
    reclaim::concurrent_ptr<node> source(new node(destroyed, 7));
    using region_guard = reclaim::region_guard<S>;
    using guard_ptr = reclaim::guard_ptr<node, S>;
    alignas(region_guard) unsigned char region_storage[sizeof(region_guard)];
    alignas(guard_ptr) unsigned char ptr_storage[sizeof(guard_ptr)];
    std::thread([&] {
      auto* region = ::new (static_cast<void*>(region_storage)) region_guard(d);
      auto* held = ::new (static_cast<void*>(ptr_storage)) guard_ptr(*region);
      held->acquire(source);
      EXPECT_EQ(held->get()->payload, 7);
      retire_many<S>(d, destroyed, n);
    }).join();
    // A later thread reuses the record the exit released.
    std::thread([&] { retire_many<S>(d, destroyed, n); }).join();
    EXPECT_EQ(d.stats().records, 1u) << "a later thread did not reuse the released record";
    {
      guard_ptr p(d);
      p.acquire(source);
      node* taken = p.get();
      source.store(nullptr);
      p.reset();
      d.retire(taken);
    }
    EXPECT_TRUE(d.try_barrier(patience)) << "garbage was lost or is held for ever";
    EXPECT_EQ(destroyed.load(), 2 * n + 1);
  }
  EXPECT_EQ(destroyed.load(), 2 * n + 1);
}

}  // namespace
}  // namespace reclaim_test
