// SPDX-License-Identifier: MIT
// What the era schemes (he, ibr, wfe) promise beyond the typed suites: a thread stalled inside an
// operation holding a protection keeps bounded garbage (the nodes born before its reservation,
// plus each thread's scan interval) and never loses the node it protects; a node made without
// create() (birth first_era) is kept conservatively and freed once nothing covers it; wfe's slow
// path and its helpers hand out only live nodes and never read a container destroyed after its
// operations returned; and the double-width CAS they rest on is atomic.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include <reclaim/core/platform/dwcas.hpp>
#include <reclaim/ds/hm_list.hpp>
#include <reclaim/ds/ms_queue.hpp>
#include <reclaim/schemes/he.hpp>
#include <reclaim/schemes/ibr.hpp>
#include <reclaim/schemes/wfe.hpp>

#include "suite_support.hpp"
#include "test_support.hpp"

namespace {

using namespace reclaim_test;

// wfe<fast_path<0>> sends every protect() through the slow path (requests, helpers, answers).
using era_schemes = ::testing::Types<reclaim::he<>, reclaim::ibr<>, reclaim::wfe<>,
                                     reclaim::wfe<reclaim::fast_path<0>>,
                                     reclaim::he<reclaim::amortized_free<1>>>;

RECLAIM_TYPED_SUITE(era_scheme, era_schemes);

// A thread inside a guard that protected the node of `source`, asleep until released.
template <class S>
class stalled_reader {
 public:
  stalled_reader(typename S::domain& domain, std::atomic<tracked<S>*>& source)
      : thread_([this, &domain, &source] {
          {
            typename S::guard g(domain);
            tracked<S>* p = g.protect(source, 0);
            seen_payload_ = p ? p->payload : -1;
            inside_.open();
            while (!release_.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            // Still ours: read it again after everything the others retired meanwhile.
            seen_payload_ = p ? p->payload : -1;
          }
          released_.open();
        }) {
    inside_.wait();
  }
  ~stalled_reader() {
    release_ = true;
    thread_.join();
  }
  void release() {
    release_ = true;
    released_.wait();
  }
  long seen_payload() const { return seen_payload_; }

 private:
  long seen_payload_ = 0;
  std::atomic<bool> release_{false};
  gate inside_, released_;
  std::thread thread_;
};

// Inserts and erases one node `n` times, one operation each: a node made by create() goes into
// `slot` and the one it replaces is retired. Returns the highest pending seen.
template <class S>
std::uint64_t churn(typename S::domain& domain, std::atomic<tracked<S>*>& slot,
                    std::atomic<long>& destroyed, long n) {
  std::uint64_t max_pending = 0;
  for (long i = 0; i < n; ++i) {
    typename S::guard g(domain);
    tracked<S>* fresh = g.template create<tracked<S>>(destroyed, i);
    tracked<S>* old = slot.exchange(fresh);
    if (old) g.retire(old);
    if (i % 16 == 0) max_pending = std::max(max_pending, domain.stats().pending);
  }
  return max_pending;
}

// Bound: the stalled reservation keeps the protected node (the victim) and the nodes born in or
// before its era and retired after it: here the nodes the churning thread made before the clock
// moved past the reader's era, at most era_every (the churn protects nothing, so it reserves
// nothing itself). Every other node waits at most for its thread's next scan, which comes once R
// (scan_interval) more nodes wait than the last scan kept; the retire that triggers it counts
// first. So pending <= 1 + era_every + R + 1 (an amortized free policy may hold R more that a scan
// proved safe and it has not freed yet).
TYPED_TEST(era_scheme, garbage_stays_bounded_while_a_thread_stalls_holding_a_protection) {
  using S = TypeParam;
  std::atomic<long> victim_destroyed{0}, fillers{0};
  typename S::domain domain;
  std::atomic<tracked<S>*> source{domain.template create<tracked<S>>(victim_destroyed, 42)};
  stalled_reader<S> reader(domain, source);
  {
    typename S::guard g(domain);
    g.retire(source.exchange(nullptr));  // unlinked and retired while the reader holds it
  }
  std::atomic<tracked<S>*> slot{nullptr};
  const long n = scaled(50000);
  const std::uint64_t max_pending = churn<S>(domain, slot, fillers, n);
  // An amortized free policy keeps up to another R proven safe and not yet freed.
  const std::uint64_t policy = S::bounds_garbage ? 1 : 2;
  const std::uint64_t bound = 1 + S::era_every + policy * domain.scan_interval() + 1;
  EXPECT_LE(max_pending, bound) << "scan interval " << domain.scan_interval();
  EXPECT_LE(domain.stats().pending, bound);
  EXPECT_GE(fillers.load(), n - static_cast<long>(bound)) << "the churn's garbage was not freed";
  EXPECT_EQ(victim_destroyed.load(), 0) << "the node the stalled thread protects was freed";
  reader.release();
  EXPECT_EQ(reader.seen_payload(), 42) << "the protected node changed under its reader";
  EXPECT_TRUE(eventually([&] {
    domain.flush();
    return victim_destroyed.load() == 1;
  })) << "the protected node was never freed after the stalled operation ended";
  {
    typename S::guard g(domain);
    g.retire(slot.exchange(nullptr));
  }
}

// A node made with a plain new has birth first_era: any reservation at or before its retire era
// covers it, so a stalled reader of an unrelated node keeps it; once the reader leaves, it goes.
TYPED_TEST(era_scheme, a_node_without_a_birth_era_is_kept_conservatively_then_freed) {
  using S = TypeParam;
  std::atomic<long> anchor_destroyed{0}, plain_destroyed{0}, fillers{0};
  typename S::domain domain;
  std::atomic<tracked<S>*> source{domain.template create<tracked<S>>(anchor_destroyed, 7)};
  {
    // With no reservation anywhere, an era-less node is freed at the next scan.
    typename S::guard g(domain);
    g.retire(new tracked<S>(plain_destroyed));
  }
  domain.flush();
  EXPECT_EQ(plain_destroyed.load(), 1);
  stalled_reader<S> reader(domain, source);
  // Move the clock well past the reader's era; nodes born after it are not kept.
  std::atomic<tracked<S>*> slot{nullptr};
  (void)churn<S>(domain, slot, fillers, 8 * S::era_every);
  const long made = 8 * static_cast<long>(S::era_every);
  {
    typename S::guard g(domain);
    g.retire(new tracked<S>(plain_destroyed));
    g.retire(slot.exchange(nullptr));
  }
  domain.flush();
  EXPECT_EQ(plain_destroyed.load(), 1) << "an era-less node was freed under an older reservation";
  EXPECT_GE(fillers.load(), made - static_cast<long>(S::era_every) - 1)
      << "nodes born after the reservation were kept";
  EXPECT_EQ(anchor_destroyed.load(), 0);
  reader.release();
  domain.flush();
  EXPECT_EQ(plain_destroyed.load(), 2) << "the era-less node outlived every reservation";
  EXPECT_EQ(fillers.load(), made);
  delete source.exchange(nullptr);
}

// Readers protect a source that writers keep replacing (allocating fast: the clock advances on
// every allocation, so wfe's readers ask for help and the writers answer before each advance);
// every node a reader gets is intact until its guard ends. Debug builds poison freed nodes and
// AddressSanitizer catches any use after free.
TYPED_TEST(era_scheme, readers_racing_with_writers_only_see_live_nodes) {
  using S = TypeParam;
  constexpr long magic = 0x5eed;
  std::atomic<long> destroyed{0};
  typename S::domain domain;
  std::atomic<tracked<S>*> source{domain.template create<tracked<S>>(destroyed, magic)};
  std::atomic<bool> stop{false};
  std::atomic<long> bad{0}, reads{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        typename S::guard g(domain);
        tracked<S>* p = g.protect(source, 0);
        if (p && p->payload != magic) bad.fetch_add(1);
        reads.fetch_add(1, std::memory_order_relaxed);
      }
    });
  threads.emplace_back([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      typename S::guard g(domain);
      tracked<S>* fresh = g.template create<tracked<S>>(destroyed, magic);
      g.retire(source.exchange(fresh));
    }
  });
  std::this_thread::sleep_for(stress_time() / 2);
  stop = true;
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(reads.load(), 0);
  delete source.exchange(nullptr);
}

// wfe with the clock advancing on every allocation: the slow path under real contention, many
// requests answered by helpers. The result must be a node the source held, alive.
TEST(wfe_scheme, helped_reads_return_live_nodes) {
  using S = reclaim::wfe<reclaim::fast_path<0>, reclaim::advance_every<1>>;
  constexpr long magic = 0x77fe;
  std::atomic<long> destroyed{0};
  {
    S::domain domain;
    std::atomic<tracked<S>*> source{domain.create<tracked<S>>(destroyed, magic)};
    std::atomic<long> bad{0};
    loop_on_threads_while(
        3,
        [&](int t) {
          S::guard g(domain);
          tracked<S>* p = g.protect(source, 0);
          if (!p || p->payload != magic) bad.fetch_add(1);
          if (t == 0) {
            tracked<S>* fresh = g.create<tracked<S>>(destroyed, magic);
            tracked<S>* expected = p;
            if (source.compare_exchange_strong(expected, fresh))
              g.retire(p);
            else
              delete fresh;  // never published
          }
        },
        [] { std::this_thread::sleep_for(stress_time() / 2); });
    EXPECT_EQ(bad.load(), 0);
    EXPECT_GT(domain.era(), 100u);
    delete source.exchange(nullptr);
  }
}

// wfe's double-width CASes (its answer words) are counted in stats(), as crystalline's and
// hyaline's are: alone, every protect() of a fresh guard takes the slow path and answers its own
// request, with at least three (the pending answer's store, which reads the word first, and the
// requester's own answer), none failing.
TEST(wfe_scheme, the_answer_words_double_width_cases_are_counted) {
  using S = reclaim::wfe<reclaim::fast_path<0>>;
  constexpr std::uint64_t requests = 100;
  std::atomic<long> destroyed{0};
  S::domain domain;
  std::atomic<tracked<S>*> source{domain.create<tracked<S>>(destroyed, 1)};
  for (std::uint64_t i = 0; i < requests; ++i) {
    S::guard g(domain);
    EXPECT_EQ(g.protect(source, 0)->payload, 1);
  }
  const reclaim::stats s = domain.stats();
  EXPECT_GE(s.wide_cas, 3 * requests);
  EXPECT_EQ(s.wide_cas_failed, 0u);
  delete source.exchange(nullptr);
}

// The same inside a container: hm_list's sources are links inside nodes, so helpers read them
// under the requester's floor (wfe.hpp). Every protect asks for help and every insert advances the
// clock; the list must stay consistent (its size is the inserts minus the erases that succeeded).
TEST(wfe_scheme, a_list_read_through_helpers_stays_consistent) {
  using S = reclaim::wfe<reclaim::fast_path<0>, reclaim::advance_every<1>>;
  S::domain domain;
  reclaim::ds::hm_list<std::int64_t, S> list(domain);
  const long net = random_updates(list, 3, 64, stress_time() / 2);
  EXPECT_EQ(static_cast<long>(list.size()), net);
  EXPECT_GT(domain.stats().freed, 0u);
}

// Short-lived queues on one shared domain (the default one), each made, used and destroyed by
// one of many threads, every protect() asking for help: a helper may still be reading a queue's
// head_ or tail_ for a request its requester already answered itself, and the queue's destructor
// must wait for it (wait_for_source_readers()) before the queue's memory goes. AddressSanitizer
// reports a helper that reads a destroyed queue.
TEST(wfe_scheme, a_destroyed_container_is_never_read_by_a_late_helper) {
  using S = reclaim::wfe<reclaim::fast_path<0>, reclaim::advance_every<1>>;
  constexpr int threads = 32;
  std::atomic<bool> stop{false};
  std::atomic<long> queues{0}, lost{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        // On the heap, so that a late read of a destroyed queue finds freed memory (ASan's
        // quarantine) rather than the next queue built at the same address.
        auto queue = std::make_unique<reclaim::ds::ms_queue<long, S>>();  // S::default_domain()
        for (long i = 0; i < 4; ++i) queue->push(i);
        for (long i = 0; i < 4; ++i)
          if (queue->pop() != i) lost.fetch_add(1);
        queue.reset();
        queues.fetch_add(1, std::memory_order_relaxed);
      }
    });
  std::this_thread::sleep_for(stress_time());
  stop = true;
  for (auto& w : workers) w.join();
  EXPECT_EQ(lost.load(), 0);
  EXPECT_GT(queues.load(), threads);
}

// A node protected by an outer guard and retired by `nested(domain, source, slot, fillers)`, which
// runs nested guards and churn (into `slot`) meanwhile: it survives while the outer guard holds it,
// flush included, and the flush after the outer guard ends frees it.
template <class S, class Nested>
void check_outer_protection_outlives(long payload, Nested nested) {
  std::atomic<long> destroyed{0}, fillers{0};
  typename S::domain domain;
  std::atomic<tracked<S>*> source{domain.template create<tracked<S>>(destroyed, payload)};
  std::atomic<tracked<S>*> slot{nullptr};
  {
    typename S::guard outer(domain);
    tracked<S>* held = outer.protect(source, 0);
    nested(domain, source, slot, fillers);
    domain.flush();
    EXPECT_EQ(destroyed.load(), 0);
    EXPECT_EQ(held->payload, payload);
  }
  domain.flush();
  EXPECT_EQ(destroyed.load(), 1);
  delete slot.exchange(nullptr);
}

// ibr: nested guards share the thread's interval, and only the outermost end clears it: a node
// protected in the outer guard stays protected after an inner guard (a container operation inside
// the user's guard) ends.
TEST(ibr_scheme, an_inner_guard_does_not_end_the_outer_interval) {
  using S = reclaim::ibr<>;
  check_outer_protection_outlives<S>(3, [](auto& domain, auto& source, auto& slot, auto& fillers) {
    {
      S::guard inner(domain);
      inner.retire(source.exchange(nullptr));
    }
    std::thread other([&] { (void)churn<S>(domain, slot, fillers, 4 * S::era_every); });
    other.join();
  });
}

// he: each guard owns its slots; an inner guard's protect does not replace the outer's era.
TEST(he_scheme, an_inner_guard_does_not_take_over_the_outer_slots) {
  using S = reclaim::he<>;
  check_outer_protection_outlives<S>(5, [](auto& domain, auto& source, auto& slot, auto& fillers) {
    (void)churn<S>(domain, slot, fillers, 4 * S::era_every);  // nested guards, newer eras
    {
      S::guard inner(domain);
      inner.retire(source.exchange(nullptr));
      (void)inner.protect(slot, 0);
    }
    (void)churn<S>(domain, slot, fillers, 4 * S::era_every);
  });
}

// core::atomic_pair: two threads add to both words by compare-and-swap; no update is lost or torn.
// (It never calls libatomic: x86-64 is an inline lock cmpxchg16b, AArch64 an ldaxp/stlxp loop;
// only the TSan build uses the compiler's 16-byte builtins, which TSan models:
// core/platform/dwcas.hpp.)
TEST(atomic_pair, concurrent_increments_of_both_words_are_exact) {
  reclaim::core::atomic_pair pair{reclaim::core::word_pair{0, 1000}};
  const long n = scaled(200000);
  auto add = [&] {
    for (long i = 0; i < n; ++i) {
      reclaim::core::word_pair seen = pair.load();
      while (!pair.compare_exchange(seen, {seen.lo + 1, seen.hi + 3})) {
      }
    }
  };
  std::thread a(add), b(add);
  a.join();
  b.join();
  const reclaim::core::word_pair end = pair.load();
  EXPECT_EQ(end.lo, static_cast<std::uint64_t>(2 * n));
  EXPECT_EQ(end.hi, 1000 + static_cast<std::uint64_t>(6 * n));
  reclaim::core::word_pair wrong{1, 2};
  EXPECT_FALSE(pair.compare_exchange(wrong, {0, 0}));
  EXPECT_EQ(wrong, end) << "a failed compare-and-swap reports what the pair holds";
}

}  // namespace
