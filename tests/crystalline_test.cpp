// SPDX-License-Identifier: MIT
// The promises of the Crystalline schemes beyond the generic suites: garbage stays bounded while a
// thread stalls inside an operation holding a protection (only batches with a node born by the
// stalled era are kept, and young nodes are not kept for sharing a batch with an old one), the
// protected node is not freed while held, batches are freed by whichever thread releases the last
// reservation holding them (not only their retirer), nested guards keep the outer guard's
// protections, and short-lived threads lose no garbage. crystalline_w's slow path besides: reads
// answered by helpers return live nodes, inside a container too, with helpers still reading when
// their request is answered (holds), what the holds froze is released, and no helper reads the
// sources of a container destroyed after its operations returned. Lazy leave: a thread between
// operations keeps its reservations but no batch, and pays far below a double-width CAS each.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <reclaim/ds/hm_list.hpp>
#include <reclaim/ds/ms_queue.hpp>
#include <reclaim/schemes/crystalline.hpp>

#include "suite_support.hpp"
#include "test_support.hpp"

// A revocation of the calling thread's kept reservations (the domain's revoke()) cut where fork()
// may cut it: the revoker has taken the record (`revoking`) and slot 0's era (release_kept()'s
// exchange) and has not yet deactivated that slot's reservation. undo() puts both back.
struct reclaim::crystalline_test_peer {
  template <class D>
  static auto& mine(D& d) {
    return d.threads_.local();
  }
  template <class D>
  static reclaim::detail::era_t cut_revocation(D& d) {
    auto& r = mine(d);
    EXPECT_TRUE(r.between.begin_revoke()) << "the thread kept no reservation";
    return std::exchange(r.levels.slots[0].era, reclaim::detail::no_era);
  }
  template <class D>
  static void undo(D& d, reclaim::detail::era_t era) {
    auto& r = mine(d);
    r.levels.slots[0].era = era;
    r.between.end(true);  // kept again
  }
};

namespace {

using namespace reclaim_test;

// crystalline_w<fast_path<0>> sends a protect() to the slow path at its first era change.
using crystalline_schemes =
    ::testing::Types<reclaim::crystalline_l<>,
                     reclaim::crystalline_l<reclaim::slots<2>, reclaim::scan_every<16>,
                                            reclaim::advance_every<8>>,
                     reclaim::crystalline_w<>,
                     reclaim::crystalline_w<reclaim::fast_path<0>, reclaim::slots<2>,
                                            reclaim::scan_every<16>, reclaim::advance_every<8>>>;
RECLAIM_TYPED_SUITE(crystalline, crystalline_schemes);

// A node that knows who retired it: its destructor counts the frees done by another thread.
template <class S>
struct counted : S::node_base {
  counted(std::atomic<long>& destroyed, std::atomic<long>& remote, long value)
      : destroyed_(&destroyed), remote_(&remote), payload(value) {}
  ~counted() {
    if (std::this_thread::get_id() != retirer) remote_->fetch_add(1, std::memory_order_relaxed);
    payload = 0;
    destroyed_->fetch_add(1, std::memory_order_relaxed);
  }
  counted(const counted&) = delete;
  counted& operator=(const counted&) = delete;

  std::atomic<long>* destroyed_;
  std::atomic<long>* remote_;
  std::thread::id retirer;
  long payload;
};

template <class S>
void retire_counted(typename S::guard& g, counted<S>* n) {
  n->retirer = std::this_thread::get_id();
  g.retire(n);
}

// Replaces the node of sources[i % size] with a new one, n times, one operation each, retiring
// the old one; returns the highest pending seen.
template <class S>
std::uint64_t churn(typename S::domain& d, std::vector<std::atomic<counted<S>*>>& sources, long n,
                    std::atomic<long>& destroyed, std::atomic<long>& remote) {
  std::uint64_t max_pending = 0;
  for (long i = 0; i < n; ++i) {
    typename S::guard g(d);
    auto* fresh = g.template create<counted<S>>(destroyed, remote, i + 2);
    auto& src = sources[static_cast<std::size_t>(i) % sources.size()];
    retire_counted<S>(g, src.exchange(fresh, std::memory_order_acq_rel));
    if (i % 64 == 0) max_pending = std::max(max_pending, d.stats().pending);
  }
  return max_pending;
}

// A thread stalls inside a guard holding a protection (era E) while another retires 50,000 nodes.
// Only batches holding a node born by era E can be kept for it: the structure's S nodes and at
// most F x T nodes born while the clock stayed at E (F = advance_every, T threads), each keeping
// one batch of at most B = max(N, H + 1) nodes; plus each thread's unsealed batch (B). The victim
// it protects is not freed until it lets go, and then by a thread other than its retirer.
TYPED_TEST(crystalline, garbage_stays_bounded_while_a_thread_stalls_holding_a_protection) {
  using S = TypeParam;
  std::atomic<long> destroyed{0}, remote{0}, victim_destroyed{0}, victim_remote{0};
  {
    typename S::domain d;
    constexpr std::size_t structure = 16;
    std::vector<std::atomic<counted<S>*>> sources(structure);
    {
      typename S::guard g(d);
      sources[0] = g.template create<counted<S>>(victim_destroyed, victim_remote, 1);
      for (std::size_t i = 1; i < structure; ++i)
        sources[i] = g.template create<counted<S>>(destroyed, remote, 1);
    }
    gate inside, release, released;
    std::thread stalled([&] {
      {
        typename S::guard g(d);
        counted<S>* p = g.protect(sources[0], 0);
        EXPECT_EQ(p->payload, 1);
        inside.open();
        release.wait();
        EXPECT_EQ(p->payload, 1) << "the protected node was freed while held";
      }
      released.open();
    });
    inside.wait();
    const long retires = 50000;
    std::uint64_t max_pending = 0;
    std::thread worker([&] { max_pending = churn<S>(d, sources, retires, destroyed, remote); });
    worker.join();
    const std::uint64_t threads = 3;  // main, stalled, worker
    const std::uint64_t batch = d.batch_size();
    const std::uint64_t bound =
        batch * (structure + S::era_every * threads) + threads * batch;
    EXPECT_LE(max_pending, bound) << "batch " << batch;
    EXPECT_LE(d.stats().pending_peak, bound);
    EXPECT_LT(bound, static_cast<std::uint64_t>(retires) / 2) << "the bound says nothing";
    EXPECT_EQ(victim_destroyed.load(), 0) << "a node the stalled thread protects was freed";
    EXPECT_GT(destroyed.load(), retires / 2);
    release.open();
    released.wait();
    stalled.join();
    // The stalled thread's guard ended on its own thread: it released the batches it held,
    // freeing the victim's (retired by the worker) on the spot.
    EXPECT_EQ(victim_destroyed.load(), 1) << "the victim was not freed when its reader let go";
    EXPECT_EQ(victim_remote.load(), 1) << "the victim was not freed by the releasing thread";
    EXPECT_GT(remote.load(), 0);
    d.barrier();
    const reclaim::stats s = d.stats();
    EXPECT_EQ(s.retired, s.freed);
    EXPECT_EQ(s.pending, 0u);
    typename S::guard g(d);
    for (auto& src : sources) retire_counted<S>(g, src.exchange(nullptr));
  }
  EXPECT_EQ(destroyed.load() + victim_destroyed.load(), 50000 + 16);
}

// Beside a thread stalled holding a protection at era E, a long-lived population (born before the
// stall) is retired one node in `every` among young nodes. The stalled thread must keep the old
// nodes retired (it may read them), but a young node may not stay merely because its batch holds
// an old one (each thread sorts its batches by birth: detail/birth_sorted.hpp). Pending garbage
// stays within the old nodes retired plus, as the header's bound: the nodes born while the clock
// still read E (F x T), and per thread that retires, in batches of B: its two partial batches and
// the one it sealed before it first saw the stall. Before the sort, every batch held an old node,
// and garbage grew with the young nodes.
TYPED_TEST(crystalline, young_nodes_are_freed_beside_a_stalled_thread) {
  using S = TypeParam;
  constexpr long every = 8;
  const long retires = scaled(40'000);
  const long old_count = retires / every + 1;
  std::atomic<long> destroyed{0}, remote{0};
  typename S::domain d;
  std::vector<std::atomic<counted<S>*>> old_nodes(static_cast<std::size_t>(old_count));
  std::vector<std::atomic<counted<S>*>> hot(16);
  {
    typename S::guard g(d);
    for (auto& n : old_nodes) n = g.template create<counted<S>>(destroyed, remote, 1);
    for (auto& n : hot) n = g.template create<counted<S>>(destroyed, remote, 1);
  }
  gate inside, release;
  std::thread stalled([&] {
    typename S::guard g(d);
    EXPECT_EQ(g.protect(hot[0], 0)->payload, 1);
    inside.open();
    release.wait();
  });
  inside.wait();
  long old_retired = static_cast<long>(hot.size());  // the hot sources' first nodes are old too
  std::thread worker([&] {
    long next_old = 0;
    for (long i = 0; i < retires; ++i) {
      typename S::guard g(d);
      auto& src = i % every == 0 ? old_nodes[static_cast<std::size_t>(next_old++)]
                                 : hot[static_cast<std::size_t>(i) % hot.size()];
      retire_counted<S>(g, src.exchange(g.template create<counted<S>>(destroyed, remote, 2)));
    }
    old_retired += next_old;
  });
  worker.join();
  const reclaim::stats during = d.stats();
  const std::uint64_t threads = 3;  // main, stalled, worker
  const std::uint64_t slack = S::era_every * threads + 3 * d.batch_size();
  const auto old_count_retired = static_cast<std::uint64_t>(old_retired);
  EXPECT_LE(during.pending_peak, old_count_retired + slack)
      << "retired " << during.retired << ", old " << old_count_retired << ", batch "
      << d.batch_size();
  if (!tsan) {  // the bound means something: well under what was retired
    EXPECT_LT(old_count_retired + slack, during.retired / 2);
  }
  release.open();
  stalled.join();
  d.barrier();
  const reclaim::stats s = d.stats();
  EXPECT_EQ(s.retired, s.freed);
  typename S::guard g(d);
  for (auto& n : old_nodes) retire_counted<S>(g, n.exchange(nullptr));
  for (auto& n : hot) retire_counted<S>(g, n.exchange(nullptr));
}

// A reader's guard protects a node in reservation 0 and then opens a nested guard that reads many
// nodes through its own reservation 0 while the clock moves (its era changes every time): the
// outer protection must survive (a nested guard that shared the outer's reservation would detach
// the batches inserted for it).
TYPED_TEST(crystalline, a_nested_guard_keeps_the_outer_guards_protections) {
  using S = TypeParam;
  std::atomic<long> destroyed{0}, remote{0}, victim_destroyed{0}, victim_remote{0};
  typename S::domain d;
  std::vector<std::atomic<counted<S>*>> sources(8);
  {
    typename S::guard g(d);
    sources[0] = g.template create<counted<S>>(victim_destroyed, victim_remote, 1);
    for (std::size_t i = 1; i < sources.size(); ++i)
      sources[i] = g.template create<counted<S>>(destroyed, remote, 1);
  }
  {
    typename S::guard outer(d);
    counted<S>* victim = outer.protect(sources[0], 0);
    std::thread([&] {
      typename S::guard g(d);
      retire_counted<S>(g, sources[0].exchange(g.template create<counted<S>>(destroyed, remote, 2)));
    }).join();
    for (int round = 0; round < 200; ++round) {
      {
        typename S::guard inner(d);
        for (int k = 0; k < 8; ++k) {
          (void)inner.protect(sources[static_cast<std::size_t>(k)], 0);
          delete inner.template create<counted<S>>(destroyed, remote, 3);  // moves the clock
        }
      }
      std::thread([&] { (void)churn<S>(d, sources, 50, destroyed, remote); }).join();
    }
    EXPECT_EQ(victim_destroyed.load(), 0) << "a nested guard released the outer's protection";
    EXPECT_EQ(victim->payload, 1);
  }
  d.barrier();
  EXPECT_EQ(victim_destroyed.load(), 1);
  typename S::guard g(d);
  for (auto& src : sources) retire_counted<S>(g, src.exchange(nullptr));
}

// Threads that retire a few nodes each and exit seal their partial batch (padded with fillers,
// which the stats never count): nothing waits in the orphanage, and with no reservation active
// everything is freed by the time they have exited. With a stalled reader (protecting a node of
// the structure), the exited threads' sealed batches wait in its reservation, not lost: once it
// lets go, everything is freed, on its thread.
TYPED_TEST(crystalline, short_lived_threads_lose_no_garbage) {
  using S = TypeParam;
  std::atomic<long> destroyed{0}, remote{0};
  typename S::domain d;
  std::vector<std::atomic<counted<S>*>> sources(4);
  {
    typename S::guard g(d);
    for (auto& s : sources) s = g.template create<counted<S>>(destroyed, remote, 1);
  }
  for (int i = 0; i < 30; ++i) {
    std::thread([&] { (void)churn<S>(d, sources, 5, destroyed, remote); }).join();
    EXPECT_EQ(d.stats().pending, 0u) << "an exited thread left garbage behind";
  }
  EXPECT_EQ(destroyed.load(), 150);
  gate inside, release;
  std::thread stalled([&] {
    typename S::guard g(d);
    (void)g.protect(sources[0], 0);
    inside.open();
    release.wait();
  });
  inside.wait();
  for (int i = 0; i < 30; ++i)
    std::thread([&] { (void)churn<S>(d, sources, 5, destroyed, remote); }).join();
  release.open();
  stalled.join();
  EXPECT_EQ(d.stats().pending, 0u) << "the stalled reader's release freed nothing";
  EXPECT_EQ(destroyed.load(), 300);
  const reclaim::stats s = d.stats();
  EXPECT_EQ(s.retired, s.freed);
  typename S::guard g(d);
  for (auto& src : sources) retire_counted<S>(g, src.exchange(nullptr));
}

// A thread that exits inside a guard, holding a protection on a node another thread retired
// meanwhile (its batch went into the exiting thread's reservation): the exit releases the
// reservation and seals the thread's partial batch, so the node is freed, by the exiting thread,
// and nothing is left pending.
TYPED_TEST(crystalline, a_thread_exiting_inside_a_guard_releases_what_it_held) {
  using S = TypeParam;
  std::atomic<long> destroyed{0}, remote{0}, victim_destroyed{0}, victim_remote{0};
  typename S::domain d;
  std::atomic<counted<S>*> source{d.template create<counted<S>>(victim_destroyed, victim_remote, 1)};
  gate inside, retired;
  std::thread exiting([&] {
    // Never closed: the thread exits inside it. Built in static storage, never destroyed (a heap
    // object left behind would be a leak to LeakSanitizer).
    using guard_t = typename S::guard;
    alignas(guard_t) static unsigned char storage[sizeof(guard_t)];
    auto* g = ::new (static_cast<void*>(storage)) guard_t(d);
    EXPECT_EQ(g->protect(source, 0)->payload, 1);
    for (int i = 0; i < 3; ++i)  // a partial batch of its own, sealed at exit
      retire_counted<S>(*g, g->template create<counted<S>>(destroyed, remote, 2));
    inside.open();
    retired.wait();
  });
  inside.wait();
  {
    typename S::guard g(d);
    retire_counted<S>(g, source.exchange(nullptr));
  }
  d.flush();  // seals our batch: the victim's goes into the exiting thread's reservation
  EXPECT_EQ(victim_destroyed.load(), 0);
  retired.open();
  exiting.join();
  EXPECT_EQ(victim_destroyed.load(), 1) << "the exit did not release the reservation";
  EXPECT_EQ(victim_remote.load(), 1) << "the victim was not freed by the exiting thread";
  EXPECT_EQ(destroyed.load(), 3) << "the exiting thread's partial batch was not sealed";
  const reclaim::stats s = d.stats();
  EXPECT_EQ(s.retired, s.freed);
  EXPECT_EQ(s.pending, 0u);
}

// Lazy leave (crystalline.hpp, close()): an operation's end keeps its outermost reservations
// published, so while the clock stays the next operations publish nothing: far below one
// double-width CAS per operation (each paid two per slot it used). And a seal that would give a
// node to a thread between operations releases that thread's kept reservations instead: the nodes
// the idle reader read last are freed by the retirer's flush, not when the reader runs again.
TYPED_TEST(crystalline, a_thread_between_operations_keeps_no_batch) {
  using S = TypeParam;
  constexpr int operations = 1000;
  std::atomic<long> destroyed{0}, remote{0};
  typename S::domain d;
  std::vector<std::atomic<counted<S>*>> sources(4);
  for (auto& s : sources) s = d.template create<counted<S>>(destroyed, remote, 1);
  gate read, retired;
  std::thread reader([&] {
    for (int i = 0; i < operations; ++i) {
      typename S::guard g(d);
      EXPECT_EQ(g.protect(sources[i % 4], i % S::slot_count)->payload, 1);
    }
    read.open();
    retired.wait();  // between operations all along
  });
  read.wait();
  EXPECT_LT(d.stats().wide_cas, static_cast<std::uint64_t>(operations / 2))
      << "the reader's reservations were not kept between its operations";
  {
    typename S::guard g(d);
    for (auto& s : sources) retire_counted<S>(g, s.exchange(nullptr));
  }
  d.flush();
  EXPECT_EQ(destroyed.load(), 4) << "a thread between operations kept the nodes it read";
  retired.open();
  reader.join();
  const reclaim::stats s = d.stats();
  EXPECT_EQ(s.retired, s.freed);
  EXPECT_EQ(s.pending, 0u);
}

// fork() while another thread of the parent revokes the forking thread's kept reservations: in
// the child the revoker does not exist, and the forking thread's next operation must not wait for
// it (the registry tells the domain which record survives: fork_survivor()). The child reads,
// retires and runs a barrier; the node its cut slot protected stays alive until it is retired.
TYPED_TEST(crystalline, a_fork_cutting_a_revocation_leaves_the_forking_thread_working) {
  using S = TypeParam;
  std::atomic<long> destroyed{0}, remote{0};
  typename S::domain d;
  std::atomic<counted<S>*> source{d.template create<counted<S>>(destroyed, remote, 1)};
  {
    typename S::guard g(d);
    EXPECT_EQ(g.protect(source, 0)->payload, 1);  // kept at the guard's end: its list is empty
  }
  const reclaim::detail::era_t era = reclaim::crystalline_test_peer::cut_revocation(d);
  const std::string outcome = in_child_process(std::chrono::seconds(10), [&] {
    constexpr long n = 500;
    for (long i = 0; i < n; ++i) {
      typename S::guard g(d);
      EXPECT_EQ(g.protect(source, 0)->payload, 1);
      retire_counted<S>(g, g.template create<counted<S>>(destroyed, remote, 2));
    }
    EXPECT_TRUE(d.try_barrier(std::chrono::seconds(5)));
    EXPECT_EQ(destroyed.load(), n);
    {
      typename S::guard g(d);
      retire_counted<S>(g, source.exchange(nullptr));
    }
    EXPECT_TRUE(d.try_barrier(std::chrono::seconds(5)));
    EXPECT_EQ(destroyed.load(), n + 1);
  });
  EXPECT_EQ(outcome, "");
  reclaim::crystalline_test_peer::undo(d, era);
  {
    typename S::guard g(d);
    retire_counted<S>(g, source.exchange(nullptr));
  }
  EXPECT_TRUE(d.try_barrier(std::chrono::seconds(5)));
  EXPECT_EQ(destroyed.load(), 1);
}

// Readers protect the node a shared pointer holds and check it while a writer swaps in new nodes
// and retires the old ones, so that seals, insertions into the readers' reservations and their
// traversals race all the time: a freed node read would show (poisoned in debug builds, ASan).
TYPED_TEST(crystalline, protected_reads_racing_with_seals_never_see_a_freed_node) {
  using S = TypeParam;
  constexpr long magic = 0x5eed;
  std::atomic<long> destroyed{0}, remote{0};
  typename S::domain d;
  std::vector<std::atomic<counted<S>*>> shared(2);
  for (auto& s : shared) s = d.template create<counted<S>>(destroyed, remote, magic);
  const read_tally tally = reads_racing_with_swaps<S>(
      d, 8, magic,
      [&](typename S::guard& g, unsigned i) { return g.protect(shared[i % 2], i % S::slot_count); },
      [&](typename S::guard& g, long swaps) {
        auto* fresh = g.template create<counted<S>>(destroyed, remote, magic);
        retire_counted<S>(g, shared[static_cast<std::size_t>(swaps) % 2].exchange(fresh));
      });
  EXPECT_EQ(tally.bad, 0u) << "a protected read saw a node that was not intact";
  EXPECT_GT(destroyed.load(), 0);
  typename S::guard g(d);
  for (auto& s : shared) retire_counted<S>(g, s.exchange(nullptr));
}

// crystalline_w with every era change sent to the slow path and the clock advancing on every
// allocation: requests all the time, answered by the requester or by helpers (threads about to
// advance the clock), and helpers still reading when the answer comes (holds). Every read must
// return a node the source held, alive; the helpers must have answered some, and holds formed.
TEST(crystalline_w, helped_reads_return_live_nodes) {
  using S = reclaim::crystalline_w<reclaim::fast_path<0>, reclaim::advance_every<1>>;
  constexpr long magic = 0x77fe;
  std::atomic<long> destroyed{0}, remote{0};
  {
    S::domain d;
    std::atomic<counted<S>*> source{d.create<counted<S>>(destroyed, remote, magic)};
    std::atomic<long> bad{0};
    loop_on_threads_while(
        4,
        [&](int t) {
          S::guard g(d);
          counted<S>* p = g.protect(source, 0);
          if (!p || p->payload != magic) bad.fetch_add(1);
          counted<S>* fresh = g.create<counted<S>>(destroyed, remote, magic);
          counted<S>* expected = p;
          if (t < 2 && source.compare_exchange_strong(expected, fresh))
            retire_counted<S>(g, p);
          else
            delete fresh;  // never published
        },
        [&] {
          // Both hand-offs need two of the threads running at once: on a loaded 2-core machine
          // that can take seconds (hence `patience`, not the stress time); usually it takes
          // milliseconds.
          (void)eventually([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
            return d.helped_answers() > 0 && d.holds_made() > 0;
          });
        });
    EXPECT_EQ(bad.load(), 0);
    EXPECT_GT(d.helped_answers(), 0u) << "no request was answered by a helper";
    EXPECT_GT(d.holds_made(), 0u) << "no helper was still reading when its request was answered";
    S::guard g(d);
    retire_counted<S>(g, source.exchange(nullptr));
  }
  EXPECT_GT(destroyed.load(), 0);
}

// The same inside a container: hm_list's sources are links inside nodes, so helpers read them
// inside nodes the requester holds (frozen for them once the request is answered). The list must
// stay consistent (its size is the inserts minus the erases that succeeded), everything retired
// is freed after a barrier, and the reservations stay few (abandoned ones come back to the pools).
TEST(crystalline_w, a_list_read_through_helpers_stays_consistent) {
  using S = reclaim::crystalline_w<reclaim::fast_path<0>, reclaim::advance_every<1>>;
  S::domain domain;
  constexpr int threads_n = 4;
  {
    reclaim::ds::hm_list<std::int64_t, S> list(domain);
    // Rounds of updates until a helper has answered: the slow path needs two threads running at
    // once, which on a loaded 2-core machine can take more than one round (hence `patience`).
    long net = 0;
    EXPECT_TRUE(eventually([&] {
      net += random_updates(list, threads_n, 64, stress_time());
      return domain.helped_answers() + domain.holds_made() > 0;
    })) << "the slow path never helped";
    EXPECT_EQ(static_cast<long>(list.size()), net);
    EXPECT_GT(domain.stats().freed, 0u);
    // K per level plus a request reservation and what holds keep: a handful per thread.
    EXPECT_LE(domain.reservation_count(), (threads_n + 1) * 4u * S::slot_count);
  }
  domain.barrier();
  const reclaim::stats s = domain.stats();
  EXPECT_EQ(s.retired, s.freed);
  EXPECT_EQ(s.pending, 0u);
}

// crystalline_w's helpers may read the source of a protect() that has already returned (a helper
// confirmed the request pending, then was delayed until after the answer), so a container must
// not go while one may: its destructor waits for them (the domain's wait_for_source_readers()).
// Two threads make short-lived queues on the heap, use them and destroy them, with every era
// change sent to the slow path; two more only allocate, so they advance the clock (at every
// allocation) and help pending requests all the time. A helper's late read of a destroyed queue's
// head or tail would be a heap-use-after-free (ASan). Without the wait, ASan caught one in most
// runs of 200 ms on two cores.
TEST(crystalline_w, helpers_never_read_a_destroyed_containers_sources) {
  using S = reclaim::crystalline_w<reclaim::fast_path<0>, reclaim::advance_every<1>>;
  using queue = reclaim::ds::ms_queue<std::int64_t, S>;
  std::atomic<long> destroyed{0}, remote{0};
  S::domain d;
  std::atomic<bool> stop{false};
  std::vector<std::thread> helpers;
  for (int t = 0; t < 2; ++t)
    helpers.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed))
        delete d.create<counted<S>>(destroyed, remote, 0);  // never published
    });
  std::atomic<long> queues{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> users;
  for (int t = 0; t < 2; ++t)
    users.emplace_back([&] {
      long made = 0;
      while (!done.load(std::memory_order_relaxed) || made < 100) {
        auto q = std::make_unique<queue>(d);
        for (std::int64_t v = 0; v < 4; ++v) q->push(v);
        std::int64_t sum = 0;
        while (const std::optional<std::int64_t> v = q->pop()) sum += *v;
        EXPECT_EQ(sum, 6);
        q.reset();
        ++made;
      }
      queues.fetch_add(made);
    });
  std::this_thread::sleep_for(stress_time());
  // Until a helper has read for a requester at least once (on a loaded machine that may take
  // longer than the stress time: it needs two of the threads running at once).
  (void)eventually([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return d.helped_answers() + d.holds_made() > 0;
  });
  done = true;
  for (auto& t : users) t.join();
  stop = true;
  for (auto& t : helpers) t.join();
  EXPECT_GT(d.helped_answers() + d.holds_made(), 0u) << "no helper ever read for a requester";
  d.barrier();
  const reclaim::stats s = d.stats();
  EXPECT_EQ(s.retired, s.freed);
  EXPECT_GE(queues.load(), 200);
}

}  // namespace
