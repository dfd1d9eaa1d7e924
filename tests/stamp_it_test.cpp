// SPDX-License-Identifier: MIT
// Stamp-it's own promises, beyond what every scheme promises (scheme_test.cpp): the Stamp Pool's
// invariants (stamps, the last one, the tail stamp), links that carry a version tag in every
// spare bit, a node that waits only for the threads inside when it was retired, the last thread
// freeing what others handed over, and nothing left once every thread has left.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace {

using namespace reclaim_test;
using reclaim::detail::block_link;
using reclaim::detail::stamp_block;
using reclaim::detail::stamp_pool;
using reclaim::detail::stamp_step;
using stamp_it = reclaim::stamp_it<>;

// ---------------------------------------------------------------------------------------------
// Links

TEST(stamp_pool_link, uses_every_spare_bit_for_the_version_tag) {
  static_assert(block_link::address_bits == 48 && block_link::alignment_bits == 12);
  static_assert(1 + block_link::pointer_bits + block_link::tag_bits == 64);
  static_assert(block_link::tag_bits == 27);
  static_assert(alignof(stamp_block) == block_link::alignment);
}

TEST(stamp_pool_link, a_change_keeps_the_address_and_mark_and_counts_the_tag) {
  auto a = std::make_unique<stamp_block>();
  auto b = std::make_unique<stamp_block>();
  const block_link start = block_link::fresh(a.get(), {});
  EXPECT_EQ(start.get(), a.get());
  EXPECT_FALSE(start.marked());
  const block_link marked = start.with_mark();
  EXPECT_EQ(marked.get(), a.get());
  EXPECT_TRUE(marked.marked());
  EXPECT_EQ(marked.tag(), start.tag()) << "marking alone changes the value, not the tag";

  block_link l = marked;
  for (int i = 1; i <= 1000; ++i) {
    l = block_link::successor(i % 2 ? b.get() : a.get(), l);
    ASSERT_EQ(l.tag(), start.tag() + static_cast<std::uint64_t>(i));
    ASSERT_EQ(l.get(), i % 2 ? b.get() : a.get());
    ASSERT_TRUE(l.marked()) << "a successor keeps the mark";
  }
  // Back at a, with the same mark, yet a different value: the ABA a stale CAS must not pass.
  EXPECT_EQ(l.get(), marked.get());
  EXPECT_NE(l, marked);
  const block_link clean = block_link::fresh(a.get(), l);
  EXPECT_FALSE(clean.marked());
  EXPECT_EQ(clean.tag(), l.tag() + 1);
}

// ---------------------------------------------------------------------------------------------
// The pool

TEST(stamp_pool, stamps_increase_and_only_the_oldest_block_is_the_last_one) {
  stamp_pool pool;
  auto a = std::make_unique<stamp_block>();
  auto b = std::make_unique<stamp_block>();
  auto c = std::make_unique<stamp_block>();
  const auto sa = pool.push(*a);
  const auto sb = pool.push(*b);
  const auto sc = pool.push(*c);
  EXPECT_LT(sa, sb);
  EXPECT_LT(sb, sc);
  EXPECT_EQ(sb - sa, stamp_step);
  EXPECT_LE(pool.tail_stamp(), sa);
  EXPECT_GT(pool.head_stamp(), sc);
  EXPECT_FALSE(pool.remove(*b)) << "a and c are still inside, a the oldest";
  EXPECT_FALSE(pool.remove(*c));
  EXPECT_TRUE(pool.remove(*a)) << "a had the lowest stamp";
  EXPECT_TRUE(pool.looks_empty());
  EXPECT_GT(pool.tail_stamp(), sa);
  // A block enters again with a new, higher stamp.
  const auto sa2 = pool.push(*a);
  EXPECT_GT(sa2, sc);
  EXPECT_GE(sa2, pool.tail_stamp());
  EXPECT_TRUE(pool.remove(*a));
  EXPECT_GT(pool.tail_stamp(), sa2) << "the last one out raises the tail past its own stamp";
}

TEST(stamp_pool, an_empty_pool_hands_the_tail_the_head_stamp) {
  stamp_pool pool;
  auto a = std::make_unique<stamp_block>();
  auto b = std::make_unique<stamp_block>();
  pool.push(*a);
  pool.push(*b);
  for (int i = 0; i < 10; ++i) {  // stamps taken while a stays inside
    ASSERT_FALSE(pool.remove(*b));
    pool.push(*b);
  }
  ASSERT_FALSE(pool.remove(*b));
  const auto head = pool.head_stamp();
  EXPECT_TRUE(pool.remove(*a));
  // The guess (a's stamp + one step) would leave every stamp b took above the tail; with the pool
  // empty the tail takes head's stamp, so everything retired so far may be freed.
  EXPECT_EQ(pool.tail_stamp(), head);
}

// Many threads enter and leave at random; while a thread is inside, the tail stamp never passes
// its stamp (no block in the pool has a stamp below the tail stamp), and the tail stamp only
// grows. Oversubscribed, so that threads are preempted in the middle of pushes and removes. The
// blocks outlive every thread, as records outlive the domain's threads: another thread may still
// read a block's links after its owner has left the pool for good.
TEST(stamp_pool, the_tail_stamp_never_passes_a_thread_inside) {
  stamp_pool pool;
  const int thread_count = 8;
  const long rounds = scaled(20000);
  std::vector<std::unique_ptr<stamp_block>> blocks;
  for (int t = 0; t < thread_count; ++t) blocks.push_back(std::make_unique<stamp_block>());
  std::atomic<long> violations{0}, lasts{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < thread_count; ++t)
    threads.emplace_back([&, t] {
      stamp_block* block = blocks[t].get();
      rng r(static_cast<std::uint64_t>(t) + 1);
      reclaim::detail::stamp_t previous_tail = 0;
      for (long i = 0; i < rounds; ++i) {
        const auto mine = pool.push(*block);
        for (unsigned k = 0, n = static_cast<unsigned>(r.below(4)); k <= n; ++k) {
          const auto tail = pool.tail_stamp();
          if (tail > mine || tail < previous_tail) violations.fetch_add(1);
          previous_tail = tail;
          if (r.below(8) == 0) std::this_thread::yield();
        }
        if (pool.remove(*block)) lasts.fetch_add(1);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(violations.load(), 0);
  EXPECT_GT(lasts.load(), 0);
  EXPECT_TRUE(pool.looks_empty());
  EXPECT_LE(pool.tail_stamp(), pool.head_stamp());
}

// ---------------------------------------------------------------------------------------------
// The scheme

// A thread that enters a region when told and stays inside until told to leave; it stays alive
// (its record in use) until destroyed.
class region_holder {
 public:
  explicit region_holder(stamp_it::domain& d) : domain_(d), thread_([this] { run(); }) {}
  ~region_holder() {
    enter_.open();
    leave_.open();
    done_.open();
    thread_.join();
  }
  void enter() {
    enter_.open();
    inside_.wait();
  }
  void leave() {
    leave_.open();
    left_.wait();
  }

 private:
  void run() {
    enter_.wait();
    {
      reclaim::region_guard<stamp_it> region(domain_);
      inside_.open();
      leave_.wait();
    }
    left_.open();
    done_.wait();
  }

  stamp_it::domain& domain_;
  gate enter_, inside_, leave_, left_, done_;
  std::thread thread_;
};

// Unlike an epoch, which a thread inside a region holds for everyone, a stamp holds only what was
// retired after it entered.
TEST(stamp_it_scheme, a_node_waits_only_for_the_threads_inside_when_it_was_retired) {
  std::atomic<long> destroyed{0};
  stamp_it::domain domain;
  region_holder late(domain);
  {
    stamp_it::guard g(domain);
    g.retire(new tracked<stamp_it>(destroyed));  // before `late` enters
    late.enter();
  }  // we stay in the pool, parked
  domain.flush();  // we are the oldest: leaving frees the node, although `late` is still inside
  EXPECT_EQ(destroyed.load(), 1) << "a thread that entered after the retire held the node";
  retire_one<stamp_it>(domain, destroyed);  // after `late` entered: it must wait
  domain.flush();
  EXPECT_EQ(destroyed.load(), 1) << "freed while a thread inside since before its retire";
  late.leave();
  domain.flush();
  EXPECT_EQ(destroyed.load(), 2);
}

// A thread that is not the last one hands a long list over; the last one frees it, while the
// thread that retired it stays alive and idle (and a thread that entered since stays inside).
TEST(stamp_it_scheme, the_last_thread_frees_what_others_handed_over) {
  std::atomic<long> destroyed{0};
  stamp_it::domain domain;
  region_holder old(domain), young(domain);
  old.enter();
  const long count = 50;  // above the hand-over threshold
  gate retired, may_exit;
  std::thread retirer([&] {
    {
      stamp_it::guard g(domain);
      for (long i = 0; i < count; ++i) g.retire(new tracked<stamp_it>(destroyed));
    }  // not the last one: `old` is older; the list goes to the global retire list
    retired.open();
    may_exit.wait();
  });
  retired.wait();
  EXPECT_EQ(destroyed.load(), 0);
  EXPECT_EQ(domain.stats().pending, static_cast<std::uint64_t>(count));
  young.enter();   // its stamp is no lower than the nodes': they need not wait for it
  old.leave();     // parked in the pool, still the oldest
  domain.flush();  // takes `old` out of the pool: as the last one, frees the handed-over list
  EXPECT_EQ(destroyed.load(), count) << "the last thread left the global retire list alone";
  may_exit.open();
  retirer.join();
}

// Waves of threads that retire inside overlapping regions and exit: with no thread left, nothing
// is left pending, without any later operation (the paper's Figure 6: the end of a trial).
TEST(stamp_it_scheme, nothing_is_left_pending_once_every_thread_has_left) {
  std::atomic<long> destroyed{0};
  stamp_it::domain domain;
  const int waves = sanitized ? 5 : 20, thread_count = 6;
  for (int w = 0; w < waves; ++w) {
    std::vector<std::thread> threads;
    for (int t = 0; t < thread_count; ++t)
      threads.emplace_back([&, t] {
        rng r(static_cast<std::uint64_t>(w * thread_count + t) + 1);
        for (int region = 0; region < 50; ++region) {
          reclaim::region_guard<stamp_it> g(domain);
          for (unsigned i = 0, n = static_cast<unsigned>(r.below(40)); i < n; ++i) {
            retire_one<stamp_it>(domain, destroyed);
            if (r.below(16) == 0) std::this_thread::yield();
          }
        }
      });
    for (auto& t : threads) t.join();
    const auto s = domain.stats();
    ASSERT_EQ(s.pending, 0u) << "wave " << w << ": retired " << s.retired << ", freed " << s.freed;
    ASSERT_EQ(s.freed, static_cast<std::uint64_t>(destroyed.load()));
  }
}

}  // namespace
