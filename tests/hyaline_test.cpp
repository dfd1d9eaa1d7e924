// SPDX-License-Identifier: MIT
// The promises of the Hyaline schemes beyond the generic suites: a stalled thread holds a bounded
// amount of garbage under the robust variants (hyaline_s, hyaline_1s), and no young node merely for
// sharing a batch with an old one, and everything retired since it stalled under the others
// (hyaline, hyaline_1: not robust); a protected node survives other threads' retires; batches are
// freed by the threads that were reading them, not by the retirer (balanced reclamation); flush
// retires a short batch; short-lived threads lose nothing; hyaline and hyaline_s keep their slot
// between operations (lazy leave) without a thread idle there holding garbage.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "suite_support.hpp"
#include "test_support.hpp"

namespace {

using namespace reclaim_test;
using namespace std::chrono_literals;

using hyaline_schemes =
    ::testing::Types<reclaim::hyaline<>, reclaim::hyaline_1<>, reclaim::hyaline_s<>,
                     reclaim::hyaline_1s<>, reclaim::hyaline<reclaim::amortized_free<1>>,
                     reclaim::hyaline_s<reclaim::slots<4>, reclaim::advance_every<8>>>;
RECLAIM_TYPED_SUITE(hyaline_all, hyaline_schemes);

using robust_schemes =
    ::testing::Types<reclaim::hyaline_s<>, reclaim::hyaline_1s<>,
                     reclaim::hyaline_s<reclaim::slots<8>, reclaim::advance_every<8>,
                                        reclaim::stall_threshold<16>>,
                     reclaim::hyaline_1s<reclaim::advance_every<8>>>;
RECLAIM_TYPED_SUITE(hyaline_robust, robust_schemes);

using plain_schemes = ::testing::Types<reclaim::hyaline<>, reclaim::hyaline_1<>,
                                       reclaim::hyaline<reclaim::amortized_free<1>>>;
RECLAIM_TYPED_SUITE(hyaline_plain, plain_schemes);

// A node with a value to read.
template <class S>
struct item : S::node_base {
  explicit item(long v) : value(v) {}
  long value;
};

// Cells of a tiny structure: `cells` slots, each holding one node; an update replaces a cell's
// node with a new one and retires the old (an insert and an erase), a read protects a cell's node
// and reads it.
template <class S>
struct cells {
  static constexpr int count = 16;
  std::atomic<item<S>*> cell[count] = {};

  void fill(typename S::domain& d) {
    typename S::guard g(d);
    for (auto& c : cell) c.store(g.template create<item<S>>(1), std::memory_order_release);
  }
  void update(typename S::guard& g, int i) {
    item<S>* n = g.template create<item<S>>(1);
    item<S>* old = cell[i % count].exchange(n, std::memory_order_acq_rel);
    if (old) g.retire(old);
  }
  long read(typename S::guard& g, int i) {
    item<S>* p = static_cast<item<S>*>(g.protect(cell[i % count], 0));
    return p ? p->value : 0;
  }
  void clear() {
    for (auto& c : cell) delete c.exchange(nullptr);
  }
};

// A thread that enters an operation, protects cell 0's node, and sleeps inside until released.
template <class S>
class stalled_reader {
 public:
  stalled_reader(typename S::domain& d, cells<S>& c) {
    thread_ = std::thread([&d, &c, this] {
      typename S::guard g(d);
      seen_.store(c.read(g, 0));
      inside_.store(true);
      while (!release_.load()) std::this_thread::sleep_for(1ms);
    });
    while (!inside_.load()) std::this_thread::yield();
  }
  ~stalled_reader() {
    release_.store(true);
    thread_.join();
  }
  long seen() const { return seen_.load(); }

 private:
  std::atomic<bool> inside_{false}, release_{false};
  std::atomic<long> seen_{0};
  std::thread thread_;
};

// `workers` threads update and read cells `per_worker` times each.
template <class S>
void churn(typename S::domain& d, cells<S>& c, int workers, long per_worker) {
  std::vector<std::thread> ts;
  for (int w = 0; w < workers; ++w)
    ts.emplace_back([&, w] {
      long sum = 0;
      for (long i = 0; i < per_worker; ++i) {
        typename S::guard g(d);
        c.update(g, static_cast<int>(i * 7 + w));
        sum += c.read(g, static_cast<int>(i * 3 + w + 1));
      }
      EXPECT_GT(sum, 0);
    });
  for (auto& t : ts) t.join();
}

// Robust: while a thread stalls inside an operation holding a protection, 50,000 retires leave
// pending garbage under the bound the header states. A batch holds one node per slot plus the
// reference node; the stalled thread holds (1) batches with a node born no later than its slot's
// era: the cells' nodes then and what the threads created before the clock passed that era
// (fewer than advance_every allocations per thread); (2) hyaline_s: the batches pushed onto its
// slot before the slot is seen overloaded (stall_threshold plus one per thread entering then);
// beside it, every thread's partial batch.
TYPED_TEST(hyaline_robust, stalled_thread_holds_bounded_garbage) {
  using S = TypeParam;
  cells<S> c;
  typename S::domain d;
  c.fill(d);
  constexpr int workers = 2;
  const long retires = scaled(50'000);
  long held_bound = 0;
  {
    stalled_reader<S> stalled(d, c);
    EXPECT_EQ(stalled.seen(), 1);
    churn<S>(d, c, workers, retires / workers);
    const reclaim::stats s = d.stats();
    EXPECT_GE(s.retired, static_cast<std::uint64_t>(retires));
    const std::uint64_t batch =
        S::shared_slots ? S::slot_count + 1 : static_cast<std::uint64_t>(s.records) + 1;
    const std::uint64_t threads = workers + 2;
    const std::uint64_t old_nodes = cells<S>::count + threads * S::era_every;
    const std::uint64_t stall = S::shared_slots ? S::stall_owed + threads : 0;
    const std::uint64_t bound = (old_nodes + stall + threads) * batch;
    held_bound = static_cast<long>(bound);
    EXPECT_LT(s.pending, bound) << "retired " << s.retired << ", batch " << batch;
    // The bound means something: under what was retired (TSan runs a quarter of the retires).
    if (!tsan) {
      EXPECT_LT(bound, s.retired);
    }
  }
  d.barrier();
  const reclaim::stats s = d.stats();
  EXPECT_EQ(s.retired, s.freed);
  EXPECT_EQ(s.pending, 0u);
  c.clear();
  (void)held_bound;
}

// Robust: beside a thread stalled at era s, a long-lived population (born before the stall) is
// retired one node in `every` among young nodes. The stalled thread must keep the old nodes
// retired (it may read them), but a young node may not stay merely because its batch holds an old
// one (each thread sorts its batches by birth: detail/birth_sorted.hpp). Pending garbage stays
// within the old nodes retired plus, as the header's bound: the nodes born while the clock still
// read s (fewer than advance_every per thread), and per worker, in batches: its two partial
// batches and two sorted before it saw the stall (the young batch being filled, and a first
// threshold taken from the live slots alone), and under hyaline_s the batches its slot took before
// it was seen overloaded. Before the sort, nearly every batch held an old node, and garbage grew
// with the young nodes.
TYPED_TEST(hyaline_robust, young_nodes_are_freed_beside_a_stalled_thread) {
  using S = TypeParam;
  constexpr int workers = 2;
  constexpr long every = 8;
  const long retires = scaled(40'000);
  const long old_count = retires / every + workers;
  typename S::domain d;
  std::vector<std::atomic<item<S>*>> old_cells(static_cast<std::size_t>(old_count));
  {
    typename S::guard g(d);
    for (auto& c : old_cells) c.store(g.template create<item<S>>(1), std::memory_order_release);
  }
  cells<S> hot;
  hot.fill(d);
  std::atomic<long> old_retired{cells<S>::count};  // the hot cells' first nodes are old too
  std::atomic<long> next_old{0};
  reclaim::stats during{};
  {
    stalled_reader<S> stalled(d, hot);
    std::vector<std::thread> ts;
    for (int w = 0; w < workers; ++w)
      ts.emplace_back([&, w] {
        for (long i = 0; i < retires / workers; ++i) {
          typename S::guard g(d);
          if (i % every == 0) {
            auto& c = old_cells[static_cast<std::size_t>(next_old.fetch_add(1))];
            g.retire(c.exchange(g.template create<item<S>>(1), std::memory_order_acq_rel));
            old_retired.fetch_add(1);
          } else {
            hot.update(g, static_cast<int>(i * 7 + w));
          }
        }
      });
    for (auto& t : ts) t.join();
    during = d.stats();
  }
  const std::uint64_t batch =
      S::shared_slots ? S::slot_count + 1 : static_cast<std::uint64_t>(during.records) + 1;
  const std::uint64_t threads = workers + 2;
  const std::uint64_t born_at_s = threads * S::era_every;
  const std::uint64_t overloaded = S::shared_slots ? S::stall_owed + threads : 0;
  const std::uint64_t slack = born_at_s + (workers * 4 + overloaded) * batch;
  const auto old_nodes = static_cast<std::uint64_t>(old_retired.load());
  EXPECT_LE(during.pending_peak, old_nodes + slack)
      << "retired " << during.retired << ", old " << old_nodes << ", batch " << batch;
  if (!tsan) {  // the bound means something: well under what was retired
    EXPECT_LT(old_nodes + slack, during.retired / 2);
  }
  d.barrier();
  const reclaim::stats s = d.stats();
  EXPECT_EQ(s.retired, s.freed);
  for (auto& c : old_cells) delete c.exchange(nullptr);
  hot.clear();
}

// Not robust: the same stall keeps everything retired since (hyaline and hyaline_1 bound nothing).
TYPED_TEST(hyaline_plain, stalled_thread_holds_everything_retired_since) {
  using S = TypeParam;
  static_assert(!S::bounds_garbage);
  cells<S> c;
  typename S::domain d;
  c.fill(d);
  constexpr int workers = 2;
  const long retires = scaled(50'000);
  {
    stalled_reader<S> stalled(d, c);
    churn<S>(d, c, workers, retires / workers);
    d.flush();
    const reclaim::stats s = d.stats();
    EXPECT_EQ(s.freed, 0u) << "a batch pushed onto the stalled thread's slot was freed";
    EXPECT_EQ(s.pending, s.retired);
  }
  d.barrier();
  const reclaim::stats s = d.stats();
  EXPECT_EQ(s.retired, s.freed);
  c.clear();
}

// A thread that runs one operation (a read of cell 0) and then waits, between operations, on a
// condition variable until released; then it runs one more and exits. Under hyaline and hyaline_s
// it stays counted in its slot while it waits (lazy leave: nothing was pushed while it was
// inside), until another thread's retire or barrier revokes it.
template <class S>
class idle_reader {
 public:
  idle_reader(typename S::domain& d, cells<S>& c) {
    thread_ = std::thread([&d, &c, this] {
      {
        typename S::guard g(d);
        seen_ = c.read(g, 0);
      }
      std::unique_lock lock(mutex_);
      state_ = 1;
      changed_.notify_all();
      changed_.wait(lock, [this] { return state_ == 2; });
      lock.unlock();
      typename S::guard g(d);
      seen_ += c.read(g, 1);
    });
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return state_ == 1; });
  }
  ~idle_reader() { join(); }
  // Releases the thread, which runs its last operation and exits.
  void join() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard lock(mutex_);
      state_ = 2;
    }
    changed_.notify_all();
    thread_.join();
  }
  long seen() const { return seen_; }  // after join()

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int state_ = 0;
  long seen_ = 0;
  std::thread thread_;
};

// Lazy leave: a thread alone, whose operations retire nothing, enters its slot once; later
// operations resume with no double-width CAS (hyaline, hyaline_s; hyaline_1, hyaline_1s use none).
TYPED_TEST(hyaline_all, operations_without_retires_enter_the_slot_once) {
  using S = TypeParam;
  cells<S> c;
  typename S::domain d;
  c.fill(d);  // an operation that retires nothing
  const std::uint64_t before = d.stats().wide_cas;
  long sum = 0;
  for (int i = 0; i < 1000; ++i) {
    typename S::guard g(d);
    sum += c.read(g, i);
  }
  EXPECT_EQ(sum, 1000);
  EXPECT_EQ(d.stats().wide_cas, before);
  c.clear();
}

// An idle thread kept in its slot does not hold garbage: while it waits after one operation,
// another thread's retires revoke it (leave its slot on its behalf) and free their batches. So
// pending garbage stays within a few batches, where a thread counted for ever would keep every
// batch pushed onto its slot; then it resumes (enters again) and exits, and a barrier frees the
// rest.
TYPED_TEST(hyaline_all, idle_kept_thread_holds_no_garbage) {
  using S = TypeParam;
  std::atomic<long> destroyed{0};
  cells<S> c;
  typename S::domain d;
  c.fill(d);
  {
    idle_reader<S> idle(d, c);
    std::thread([&] {
      const long n = scaled(5'000);
      retire_many<S>(d, destroyed, n);
      const reclaim::stats s = d.stats();
      const std::uint64_t batch = S::shared_slots ? S::slot_count + 1 : s.records + 1;
      EXPECT_GE(s.retired, static_cast<std::uint64_t>(n));
      // One batch the idle thread may hold (pushed before its revocation), and the partial ones.
      EXPECT_LE(s.pending, 3 * batch) << "retired " << s.retired << ", freed " << s.freed;
    }).join();
    idle.join();
    EXPECT_EQ(idle.seen(), 2);
  }
  d.barrier();
  const reclaim::stats s = d.stats();
  EXPECT_EQ(s.retired, s.freed);
  EXPECT_EQ(static_cast<std::uint64_t>(destroyed.load()), s.freed);
  c.clear();
}

// A barrier while another thread is kept in its slot between operations (and the caller in
// its own, after its retires): the barrier leaves both slots, so it does not wait for the idle
// thread, and frees everything retired before it.
TYPED_TEST(hyaline_all, barrier_with_a_kept_thread) {
  using S = TypeParam;
  std::atomic<long> destroyed{0};
  cells<S> c;
  typename S::domain d;
  c.fill(d);
  idle_reader<S> idle(d, c);
  retire_many<S>(d, destroyed, 100);
  d.barrier();
  EXPECT_EQ(destroyed.load(), 100);
  const reclaim::stats s = d.stats();
  EXPECT_EQ(s.retired, s.freed);
  idle.join();
  c.clear();
}

// A thread that exits while kept in its slot leaves it: a batch retired afterwards and flushed by
// another thread (which leaves its own kept slot first) meets no one inside and is freed at once.
TYPED_TEST(hyaline_all, exit_while_kept_leaves_the_slot) {
  using S = TypeParam;
  std::atomic<long> destroyed{0};
  cells<S> c;
  typename S::domain d;
  c.fill(d);
  idle_reader<S>(d, c).join();
  retire_many<S>(d, destroyed, 10);
  d.flush();
  EXPECT_EQ(destroyed.load(), 10);
  const reclaim::stats s = d.stats();
  EXPECT_EQ(s.retired, s.freed);
  c.clear();
}

// A node protected by a reader is not destroyed while the reader holds it, whatever others retire
// meanwhile; it is destroyed once the reader lets go.
TYPED_TEST(hyaline_all, protected_node_survives_other_retires) {
  using S = TypeParam;
  std::atomic<long> held_destroyed{0}, others_destroyed{0};
  typename S::domain d;
  std::atomic<tracked<S>*> src{nullptr};
  {
    typename S::guard g(d);
    src.store(g.template create<tracked<S>>(held_destroyed, 42));
  }
  std::atomic<bool> holding{false}, release{false};
  std::thread reader([&] {
    typename S::guard g(d);
    auto* p = static_cast<tracked<S>*>(g.protect(src, 0));
    ASSERT_NE(p, nullptr);
    holding.store(true);
    while (!release.load()) std::this_thread::sleep_for(1ms);
    EXPECT_EQ(p->payload, 42);  // still alive
  });
  while (!holding.load()) std::this_thread::yield();
  std::thread retirer([&] {
    typename S::guard g(d);
    g.retire(src.exchange(nullptr));
  });
  retirer.join();
  std::vector<std::thread> others;
  for (int t = 0; t < 2; ++t)
    others.emplace_back([&] {
      for (long i = 0; i < scaled(5'000); ++i) {
        typename S::guard g(d);
        g.retire(g.template create<tracked<S>>(others_destroyed, 1));
      }
      d.flush();
    });
  for (auto& t : others) t.join();
  d.flush();
  EXPECT_EQ(held_destroyed.load(), 0);
  release.store(true);
  reader.join();
  d.barrier();
  EXPECT_EQ(held_destroyed.load(), 1);
  const reclaim::stats s = d.stats();
  EXPECT_EQ(s.retired, s.freed);
  EXPECT_EQ(static_cast<std::uint64_t>(others_destroyed.load() + 1), s.freed);
}

// Balanced reclamation: batches retired while another thread is inside are freed by that thread
// when it leaves, never by the retirer. Each node records which thread destroyed it.
template <class S>
struct witnessed : S::node_base {
  static inline std::atomic<long> by_retirer{0}, by_reader{0}, by_other{0};
  static inline std::thread::id retirer{}, reader{};
  ~witnessed() {
    const auto me = std::this_thread::get_id();
    (me == retirer ? by_retirer : me == reader ? by_reader : by_other).fetch_add(1);
  }
};

TYPED_TEST(hyaline_plain, batches_are_freed_by_the_reader_not_the_retirer) {
  using S = TypeParam;
  using W = witnessed<S>;
  W::by_retirer = 0;
  W::by_reader = 0;
  W::by_other = 0;
  typename S::domain d;
  const long n = scaled(2'000);
  std::atomic<bool> inside{false}, release{false}, left{false};
  std::thread reader([&] {
    W::reader = std::this_thread::get_id();
    {
      typename S::guard g(d);
      inside.store(true);
      while (!release.load()) std::this_thread::sleep_for(1ms);
    }
    left.store(true);
  });
  while (!inside.load()) std::this_thread::yield();
  std::thread retirer([&] {
    W::retirer = std::this_thread::get_id();
    for (long i = 0; i < n; ++i) {
      typename S::guard g(d);
      g.retire(new W);
    }
  });
  retirer.join();  // its partial batch went to the orphanage
  EXPECT_EQ(W::by_retirer.load(), 0);
  release.store(true);
  reader.join();
  // Everything the retirer pushed while the reader was inside was freed by the reader's leave.
  const reclaim::stats s = d.stats();
  EXPECT_EQ(static_cast<std::uint64_t>(W::by_reader.load()), s.freed);
  EXPECT_GT(W::by_reader.load(), n / 2);
  EXPECT_EQ(W::by_retirer.load(), 0);
  d.barrier();
  EXPECT_EQ(W::by_reader.load() + W::by_other.load() + W::by_retirer.load(), n);
  EXPECT_EQ(d.stats().freed, static_cast<std::uint64_t>(n));
}

// flush() retires a batch shorter than the slots need (padded): with nobody inside, it is freed.
TYPED_TEST(hyaline_all, flush_frees_a_short_batch) {
  using S = TypeParam;
  std::atomic<long> destroyed{0};
  typename S::domain d;
  retire_one<S>(d, destroyed);  // a batch needs at least two nodes (one slot, one reference)
  EXPECT_EQ(destroyed.load(), 0);
  d.flush();
  EXPECT_EQ(destroyed.load(), 1);
  const reclaim::stats s = d.stats();
  EXPECT_EQ(s.retired, 1u);
  EXPECT_EQ(s.freed, 1u);  // the padding is not counted
}

// Many short-lived threads, each retiring fewer nodes than a batch: their partial batches are
// adopted by later retires, and a barrier frees the rest; retired == freed + pending throughout.
TYPED_TEST(hyaline_all, short_lived_threads_lose_nothing) {
  using S = TypeParam;
  std::atomic<long> destroyed{0};
  typename S::domain d;
  const int rounds = static_cast<int>(scaled(40));
  for (int r = 0; r < rounds; ++r) {
    std::vector<std::thread> ts;
    for (int t = 0; t < 3; ++t)
      ts.emplace_back([&] {
        for (int i = 0; i < 5; ++i) {
          typename S::guard g(d);
          g.retire(g.template create<tracked<S>>(destroyed));
        }
      });
    for (auto& t : ts) t.join();
    const reclaim::stats s = d.stats();
    EXPECT_EQ(s.retired, s.freed + s.pending);
  }
  const long total = rounds * 3 * 5;
  // Orphans were adopted: most of it is freed already (all but about one batch and the orphans
  // the last threads left).
  const std::uint64_t batch = S::shared_slots ? S::slot_count + 1 : d.stats().records + 1;
  EXPECT_LE(static_cast<std::uint64_t>(total - destroyed.load()), 2 * batch + 3 * 5);
  d.barrier();
  EXPECT_EQ(destroyed.load(), total);
  const reclaim::stats s = d.stats();
  EXPECT_EQ(s.retired, static_cast<std::uint64_t>(total));
  EXPECT_EQ(s.freed, s.retired);
}

// A thread that exits inside a guard leaves its slot: nothing stays held.
TYPED_TEST(hyaline_all, exit_inside_a_guard_leaves_the_slot) {
  using S = TypeParam;
  std::atomic<long> destroyed{0};
  typename S::domain d;
  // The guard lives in storage of the test and is never destroyed: the thread exits inside it.
  alignas(typename S::guard) unsigned char storage[sizeof(typename S::guard)];
  std::thread([&] {
    auto* g = ::new (static_cast<void*>(storage)) typename S::guard(d);
    g->retire(g->template create<tracked<S>>(destroyed));
  }).join();
  retire_many<S>(d, destroyed, scaled(200));
  d.barrier();
  const reclaim::stats s = d.stats();
  EXPECT_EQ(s.retired, s.freed);
  EXPECT_EQ(static_cast<std::uint64_t>(destroyed.load()), s.freed);
}

}  // namespace
