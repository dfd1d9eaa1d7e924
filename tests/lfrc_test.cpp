// SPDX-License-Identifier: MIT
// lfrc's own promises, beyond what every scheme promises (scheme_test.cpp): a node goes with its
// last reference, garbage is exactly what threads hold, node memory is type-stable (reused as
// nodes, by the domain first, never given back), and a count taken through a stale pointer is
// harmless.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace {

using namespace reclaim_test;
using lfrc = reclaim::lfrc<>;
using node = tracked<lfrc>;
namespace memory = reclaim::detail::lfrc;

TEST(lfrc_scheme, a_retired_node_goes_with_its_last_reference) {
  std::atomic<long> destroyed{0};
  lfrc::domain domain;
  std::atomic<node*> shared{domain.create<node>(destroyed, 7)};
  {
    lfrc::guard reader(domain);
    node* n = reader.protect(shared, 0);
    ASSERT_EQ(n->payload, 7);
    {
      lfrc::guard writer(domain);
      writer.retire(shared.exchange(nullptr));
    }
    EXPECT_EQ(destroyed.load(), 0) << "reclaimed while a guard counted it";
    EXPECT_EQ(domain.stats().pending, 1u);
    EXPECT_EQ(n->payload, 7);
  }  // the last reference: reclaimed here, with no other operation
  EXPECT_EQ(destroyed.load(), 1);
  const auto s = domain.stats();
  EXPECT_EQ(s.pending, 0u);
  EXPECT_EQ(s.freed, 1u);
}

// Threads that each hold a guard_ptr to a node retired under them: pending is exactly the nodes
// held, and falls to zero as they let go.
TEST(lfrc_scheme, pending_garbage_is_exactly_what_threads_hold) {
  std::atomic<long> destroyed{0};
  lfrc::domain domain;
  constexpr int holders = 4;
  std::vector<reclaim::concurrent_ptr<node>> links(holders);
  for (auto& l : links) l.store(domain.create<node>(destroyed));
  gate holding[holders], release;
  std::vector<std::thread> threads;
  for (int t = 0; t < holders; ++t)
    threads.emplace_back([&, t] {
      reclaim::guard_ptr<node, lfrc> held(domain);
      held.acquire(links[t], std::memory_order_acquire);
      holding[t].open();
      release.wait();
    });
  for (auto& h : holding) h.wait();
  {
    lfrc::guard g(domain);
    for (auto& l : links) g.retire(l.load().get());
  }
  EXPECT_EQ(domain.stats().pending, static_cast<std::uint64_t>(holders));
  EXPECT_EQ(destroyed.load(), 0);
  release.open();
  for (auto& t : threads) t.join();
  EXPECT_EQ(destroyed.load(), holders);
  EXPECT_EQ(domain.stats().pending, 0u);
}

// The bound lfrc claims (bounds_garbage): a thread stalled inside an operation holds back only the
// node it counts, while another thread retires a thousand more, each freed as it is retired.
TEST(lfrc_scheme, a_stalled_reader_holds_back_only_the_node_it_counts) {
  std::atomic<long> destroyed{0};
  lfrc::domain domain;
  std::atomic<node*> link{domain.create<node>(destroyed, 1)};
  gate counted, release;
  std::thread stalled([&] {
    lfrc::guard g(domain);
    EXPECT_EQ(g.protect(link, 0)->payload, 1);
    counted.open();
    release.wait();  // stalled inside its operation, counting the node
  });
  counted.wait();
  {
    lfrc::guard g(domain);
    g.retire(link.exchange(nullptr));
  }
  std::uint64_t max_pending = 0;
  const long more = 1000;
  for (long i = 0; i < more; ++i) {
    node* n = domain.create<node>(destroyed, 2);
    link.store(n);
    lfrc::guard g(domain);
    g.retire(link.exchange(nullptr));
    max_pending = std::max(max_pending, domain.stats().pending);
  }
  EXPECT_EQ(max_pending, 1u) << "garbage beyond what the stalled thread counts";
  EXPECT_EQ(destroyed.load(), more);
  release.open();
  stalled.join();
  EXPECT_EQ(destroyed.load(), more + 1);
  const auto s = domain.stats();
  EXPECT_EQ(s.retired, static_cast<std::uint64_t>(more + 1));
  EXPECT_EQ(s.freed, s.retired);
}

TEST(lfrc_scheme, reclaimed_memory_is_made_into_the_domains_next_node) {
  std::atomic<long> destroyed{0};
  lfrc::domain domain;
  node* first = domain.create<node>(destroyed, 1);
  domain.retire(first);
  ASSERT_EQ(destroyed.load(), 1);
  node* second = domain.create<node>(destroyed, 2);
  EXPECT_EQ(second, first) << "the reclaimed block waits in the thread's cache for the next node";
  EXPECT_EQ(second->payload, 2);
  domain.retire(second);
}

// A domain's free blocks outlive it: they go to the process's stacks, and the next domain's nodes
// are made in them. Nothing lfrc ever allocated is given back.
TEST(lfrc_scheme, node_memory_outlives_its_domain_as_node_memory) {
  struct big : lfrc::node_base {  // a size of its own: no other test's blocks
    char bytes[1000];
  };
  std::set<const void*> seen;
  {
    lfrc::domain first;
    std::vector<big*> nodes;
    for (int i = 0; i < 64; ++i) nodes.push_back(first.create<big>());
    for (big* n : nodes) {
      seen.insert(n);
      first.retire(n);
    }
  }
  lfrc::domain second;
  std::vector<big*> nodes;
  bool reused = false;
  for (int i = 0; i < 64; ++i) {
    nodes.push_back(second.create<big>());
    reused = reused || seen.count(nodes.back()) > 0;
  }
  EXPECT_TRUE(reused) << "a destroyed domain's blocks were not recycled";
  for (big* n : nodes) second.retire(n);
}

// A reader that read a pointer before the node was reclaimed and counts it after its block was
// reused for another node: its count holds the new node back until it lets go (it validates and
// finds it gone), and reclaims nothing early. Simulated step by step on the header.
TEST(lfrc_scheme, a_count_through_a_stale_pointer_is_harmless) {
  std::atomic<long> destroyed{0};
  lfrc::domain domain;
  node* old = domain.create<node>(destroyed, 1);
  const void* stale = old;  // what the slow reader read from a link
  domain.retire(old);       // unlinked and reclaimed: nobody counted it
  ASSERT_EQ(destroyed.load(), 1);
  node* fresh = domain.create<node>(destroyed, 2);  // the same block, a new node
  ASSERT_EQ(static_cast<const void*>(fresh), stale);
  std::atomic<node*> link{fresh};
  {
    // The slow reader counts its stale pointer (now the new node's header), then re-reads its
    // link, which no longer holds what it read: that is the reader's validation failing. It lets
    // go only at the end.
    memory::header_of(stale)->refs.fetch_add(memory::count_one);
    domain.retire(link.exchange(nullptr));  // the new node goes: the stale count holds it back
    EXPECT_EQ(destroyed.load(), 1);
    EXPECT_EQ(fresh->payload, 2);
    // The reader's release through a guard slot: the same path as a failed validation's.
    std::atomic<const node*> stale_link{static_cast<const node*>(stale)};
    lfrc::guard reader(domain);
    EXPECT_EQ(reader.protect(stale_link, 0), stale);  // a second count, by the book
    memory::header_of(stale)->refs.fetch_sub(memory::count_one);  // the first one, by hand
  }  // the guard ends: its release is the last; the node is reclaimed now, once
  EXPECT_EQ(destroyed.load(), 2);
  EXPECT_EQ(domain.stats().pending, 0u);
}

}  // namespace
