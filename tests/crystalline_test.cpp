// The promises of the Crystalline schemes beyond the generic suites: garbage stays bounded while a
// thread stalls inside an operation holding a protection (only batches with a node born by the
// stalled era are kept), the protected node is not freed while held, batches are freed by whichever
// thread releases the last reservation holding them (not only their retirer), nested guards keep
// the outer guard's protections, and short-lived threads lose no garbage. crystalline_w's slow
// path besides: reads answered by helpers return live nodes, inside a container too, with helpers
// still reading when their request is answered (holds), and what the holds froze is released.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <new>
#include <thread>
#include <vector>

#include <reclaim/ds/hm_list.hpp>
#include <reclaim/schemes/crystalline.hpp>

#include "test_support.hpp"

namespace {

using namespace reclaim_test;

template <class S>
class crystalline : public ::testing::Test {};
// crystalline_w<fast_path<0>> sends a protect() to the slow path at its first era change.
using crystalline_schemes =
    ::testing::Types<reclaim::crystalline_l<>,
                     reclaim::crystalline_l<reclaim::slots<2>, reclaim::scan_frequency<16>,
                                            reclaim::era_frequency<8>>,
                     reclaim::crystalline_w<>,
                     reclaim::crystalline_w<reclaim::fast_path<0>, reclaim::slots<2>,
                                            reclaim::scan_frequency<16>, reclaim::era_frequency<8>>>;
TYPED_TEST_SUITE(crystalline, crystalline_schemes);

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
// most F x T nodes born while the clock stayed at E (F = era_frequency, T threads), each keeping
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
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> bad{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t)
    readers.emplace_back([&] {
      std::uint64_t n = 0, wrong = 0;
      while (!stop.load(std::memory_order_relaxed) || n < 1000) {
        typename S::guard g(d);
        for (unsigned i = 0; i < 8; ++i, ++n) {
          counted<S>* p = g.protect(shared[i % 2], i % S::slot_count);
          if (p->payload != magic) ++wrong;
        }
      }
      bad += wrong;
    });
  long swaps = 0;
  const auto end = std::chrono::steady_clock::now() + stress_time();
  while (std::chrono::steady_clock::now() < end || swaps < 2000) {
    typename S::guard g(d);
    auto* fresh = g.template create<counted<S>>(destroyed, remote, magic);
    retire_counted<S>(g, shared[static_cast<std::size_t>(swaps) % 2].exchange(fresh));
    ++swaps;
  }
  stop = true;
  for (auto& r : readers) r.join();
  EXPECT_EQ(bad.load(), 0u) << "a protected read saw a node that was not intact";
  EXPECT_GT(destroyed.load(), 0);
  typename S::guard g(d);
  for (auto& s : shared) retire_counted<S>(g, s.exchange(nullptr));
}

// crystalline_w with every era change sent to the slow path and the clock advancing on every
// allocation: requests all the time, answered by the requester or by helpers (threads about to
// advance the clock), and helpers still reading when the answer comes (holds). Every read must
// return a node the source held, alive; the helpers must have answered some, and holds formed.
TEST(crystalline_w, helped_reads_return_live_nodes) {
  using S = reclaim::crystalline_w<reclaim::fast_path<0>, reclaim::era_frequency<1>>;
  constexpr long magic = 0x77fe;
  std::atomic<long> destroyed{0}, remote{0};
  {
    S::domain d;
    std::atomic<counted<S>*> source{d.create<counted<S>>(destroyed, remote, magic)};
    std::atomic<bool> stop{false};
    std::atomic<long> bad{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        while (!stop.load(std::memory_order_relaxed)) {
          S::guard g(d);
          counted<S>* p = g.protect(source, 0);
          if (!p || p->payload != magic) bad.fetch_add(1);
          counted<S>* fresh = g.create<counted<S>>(destroyed, remote, magic);
          counted<S>* expected = p;
          if (t < 2 && source.compare_exchange_strong(expected, fresh))
            retire_counted<S>(g, p);
          else
            delete fresh;  // never published
        }
      });
    const auto end = std::chrono::steady_clock::now() + 4 * stress_time();
    while (std::chrono::steady_clock::now() < end &&
           (d.helped_answers() == 0 || d.holds_made() == 0))
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    stop = true;
    for (auto& t : threads) t.join();
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
  using S = reclaim::crystalline_w<reclaim::fast_path<0>, reclaim::era_frequency<1>>;
  S::domain domain;
  constexpr int threads_n = 4;
  {
    reclaim::ds::hm_list<std::int64_t, S> list(domain);
    const long net = random_updates(list, threads_n, 64, stress_time());
    EXPECT_EQ(static_cast<long>(list.size()), net);
    EXPECT_GT(domain.stats().freed, 0u);
    EXPECT_GT(domain.helped_answers() + domain.holds_made(), 0u) << "the slow path never helped";
    // K per level plus a request reservation and what holds keep: a handful per thread.
    EXPECT_LE(domain.reservation_count(), (threads_n + 1) * 4u * S::slot_count);
  }
  domain.barrier();
  const reclaim::stats s = domain.stats();
  EXPECT_EQ(s.retired, s.freed);
  EXPECT_EQ(s.pending, 0u);
}

}  // namespace
