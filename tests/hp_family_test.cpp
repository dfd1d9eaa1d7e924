// SPDX-License-Identifier: MIT
// The promises of the hazard-pointer family beyond the generic scheme suite (which runs every
// member too): garbage stays bounded while a thread stalls, holding protections or only the epoch
// (epoch_pop), and while threads come and go; protected reads racing with scans never see a freed
// node, whichever side pays for the store-load order; Publish-on-Ping pings only the threads of
// its domain, reaches threads blocked in system calls, counts its signals, and epoch_pop sends
// none while no thread stalls; the barriers refuse machines they cannot work on.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "suite_support.hpp"
#include "test_support.hpp"

namespace {

using namespace reclaim_test;

// Every member, and hp with the naive scan the sorted one is measured against.
using hp_family_schemes =
    ::testing::Types<reclaim::hp<>, reclaim::hp<reclaim::scan_policy<reclaim::naive_scan>>,
                     RECLAIM_TEST_HP_FAMILY>;
RECLAIM_TYPED_SUITE(hp_family, hp_family_schemes);

// A thread that opens a guard, protects the nodes of `sources` (one slot each, at most K), and
// stays inside the guard, asleep, until released: a thread preempted or stalled in the middle of an
// operation. Under the POP schemes its sleep is interrupted by every ping, which it answers.
template <class S>
class stalled_holder {
 public:
  stalled_holder(typename S::domain& domain, std::vector<std::atomic<tracked<S>*>*> sources)
      : thread_([this, &domain, sources] {
          {
            typename S::guard g(domain);
            for (unsigned i = 0; i < sources.size(); ++i) {
              tracked<S>* p = g.protect(*sources[i], i);
              intact_ = intact_ && p != nullptr;
            }
            inside_.open();
            while (!release_.load())
              std::this_thread::sleep_for(std::chrono::milliseconds(1));
          }
          released_.open();
          may_exit_.wait();
        }) {
    inside_.wait();
  }
  ~stalled_holder() {
    release_ = true;
    may_exit_.open();
    thread_.join();
  }
  // Ends the stalled operation; the thread stays alive (its record in use).
  void release() {
    release_ = true;
    released_.wait();
  }

 private:
  bool intact_ = true;
  std::atomic<bool> release_{false};
  gate inside_, released_, may_exit_;
  std::thread thread_;
};

// Retires `n` fillers from this thread, one operation each; the highest pending seen.
template <class S>
std::uint64_t retire_and_watch(typename S::domain& domain, std::atomic<long>& fillers, long n) {
  std::uint64_t max_pending = 0;
  for (long i = 0; i < n; ++i) {
    retire_one<S>(domain, fillers);
    max_pending = std::max(max_pending, domain.stats().pending);
  }
  return max_pending;
}

// A thread stalled inside an operation holding K protections: the others' garbage stays within
// R + H per record, and only the protected nodes are kept. Under epoch_pop the stalled thread also
// holds the epoch, so the bound comes from its scans (pings the stalled thread answers).
TYPED_TEST(hp_family, garbage_stays_bounded_while_a_thread_stalls_holding_protections) {
  using S = TypeParam;
  std::atomic<long> victims_destroyed{0}, fillers{0};
  typename S::domain domain;
  std::vector<std::atomic<tracked<S>*>> shared(S::slot_count);
  std::vector<std::atomic<tracked<S>*>*> sources;
  for (auto& s : shared) {
    s = new tracked<S>(victims_destroyed, 1);
    sources.push_back(&s);
  }
  stalled_holder<S> holder(domain, sources);
  {
    typename S::guard g(domain);
    for (auto& s : shared) g.retire(s.exchange(nullptr));
  }
  const std::uint64_t threshold = domain.scan_threshold();
  const std::uint64_t hazards = S::slot_count * 2;  // two records
  const std::uint64_t max_pending =
      retire_and_watch<S>(domain, fillers, 20 * static_cast<long>(threshold));
  auto s = domain.stats();
  // As in the test below.
  const std::uint64_t slack = S::name == "epoch_pop" ? threshold / 16 : 0;
  EXPECT_LT(max_pending, threshold + slack + hazards) << "threshold " << threshold;
  EXPECT_LE(s.pending_peak, threshold + slack + hazards);
  EXPECT_GE(s.scans, 19u) << "no scan freed the garbage the stalled thread does not protect";
  EXPECT_EQ(victims_destroyed.load(), 0) << "a node the stalled thread protects was freed";
  if constexpr (S::fence::scheme_name == "hazard_pop") {
    // A ping still unanswered at the next scan is not sent again: that scan falls back.
    EXPECT_GE(s.signals + s.fallbacks, s.scans)
        << "a scan neither pinged the stalled thread nor fell back to the barrier";
  } else {
    EXPECT_EQ(s.signals, 0u);
  }
  holder.release();
  EXPECT_TRUE(eventually([&] {
    retire_one<S>(domain, fillers);
    return victims_destroyed.load() == static_cast<long>(S::slot_count);
  })) << "the protected nodes were never freed after the stalled operation ended";
}

// The lab's stalled thread (bench/trial.hpp): inside an operation, protecting nothing. Under hp it
// holds nothing back; under epoch_pop it holds the epoch, and the scans free everything.
TYPED_TEST(hp_family, garbage_stays_bounded_while_a_thread_stalls_protecting_nothing) {
  using S = TypeParam;
  std::atomic<long> fillers{0};
  typename S::domain domain;
  stalled_holder<S> holder(domain, {});
  const std::uint64_t threshold = domain.scan_threshold();
  const std::uint64_t max_pending =
      retire_and_watch<S>(domain, fillers, 20 * static_cast<long>(threshold));
  // epoch_pop scans once an attempt on the epoch finds it stuck; attempts come every R/16 retires.
  const std::uint64_t slack = S::name == "epoch_pop" ? threshold / 16 : 0;
  EXPECT_LT(max_pending, threshold + slack + S::slot_count * 2) << "threshold " << threshold;
  EXPECT_GT(fillers.load(), 0);
  holder.release();
}

// The family promises bounded garbage (bounds_garbage = true, "at most R + H per thread, whatever
// other threads do"). Garbage an exiting thread hands over is adopted only by a scan (or freed by
// epoch_pop's epoch), and a thread scans only when its own list reaches R. Here each thread retires
// fewer than R nodes and exits: a bounded scheme must not let the handed-over garbage pile up with
// the number of threads that came and went (each exiting thread scans once more).
TYPED_TEST(hp_family, garbage_stays_bounded_while_threads_come_and_go) {
  using S = TypeParam;
  std::atomic<long> destroyed{0};
  typename S::domain domain;
  const long per_thread = 100;  // below R = 100 + 2 x 4 x 1 = 108: no thread scans on its own
  std::uint64_t max_pending = 0;
  for (int i = 0; i < 50; ++i) {
    std::thread([&] { retire_many<S>(domain, destroyed, per_thread); }).join();
    max_pending = std::max(max_pending, domain.stats().pending);
  }
  const std::uint64_t bound = 2 * (domain.scan_threshold() + S::slot_count);
  EXPECT_LE(max_pending, bound) << "garbage of exited threads accumulates: " << max_pending
                                << " nodes pending with no thread alive and nothing protected";
}

// Readers protect the node a shared pointer holds and check it, while a writer swaps in a new node
// and retires the old one, so that scans (every R retires) run all the time: a reader whose
// protection a scan missed would read a freed node (poisoned in debug builds, reported by ASan).
// The asymmetric members' protections are a plain store that the scan's heavy side must reach.
TYPED_TEST(hp_family, protected_reads_racing_with_scans_never_see_a_freed_node) {
  using S = TypeParam;
  constexpr long magic = 0x5eed;
  std::atomic<long> destroyed{0};
  typename S::domain domain;
  std::atomic<tracked<S>*> shared{new tracked<S>(destroyed, magic)};
  const read_tally tally = reads_racing_with_swaps<S>(
      domain, 16, magic,
      [&](typename S::guard& g, unsigned i) { return g.protect(shared, i % S::slot_count); },
      [&](typename S::guard& g, long) {
        g.retire(shared.exchange(new tracked<S>(destroyed, magic), std::memory_order_acq_rel));
      });
  EXPECT_EQ(tally.bad, 0u) << "a protected read saw a node that was not intact";
  EXPECT_GT(tally.reads, 0u);
  EXPECT_GT(domain.stats().scans + domain.stats().epochs, 0u);
  EXPECT_GT(destroyed.load(), 0);
  delete shared.load();
}

// synchronize() must wait for every operation that began before it. Under the asymmetric members a
// reader's guard publishes its depth with a plain store (the light side of their slots), so a
// store-load reordering could let synchronize() read the depth from before the guard while the
// reader reads the structure from before the caller's change: synchronize() must run the heavy
// side of the fence before it reads the depths, as a scan does before it reads the slots. (The
// reordering itself is too rare to catch in a test on two cores; the model checker's mutant of
// this fix is the proof. Here: the heavy side runs, counted by a barrier that counts its runs.)
struct counting_barrier {
  static constexpr std::string_view scheme_name = "hp_counting_barrier";
  static inline std::atomic<long> runs{0};
  static void prepare() { reclaim::core::membarrier_barrier::prepare(); }
  static void run() noexcept {
    runs.fetch_add(1);
    reclaim::core::membarrier_barrier::run();
  }
};
TEST(hp_asymmetric, synchronize_runs_the_heavy_side_of_the_fence) {
  using S = reclaim::hp<reclaim::fence_policy<reclaim::core::asymmetric_fence<counting_barrier>>>;
  S::domain domain;
  empty_operation<S>(domain);
  const long before = counting_barrier::runs.load();
  domain.synchronize();
  EXPECT_EQ(counting_barrier::runs.load(), before + 1);
  EXPECT_TRUE(domain.try_synchronize(std::chrono::seconds(1)));
  EXPECT_EQ(counting_barrier::runs.load(), before + 2);
}

// ---------------------------------------------------------------------------------------------
// Publish-on-Ping

// Pings reach a thread blocked in a system call inside an operation (here a condition variable's
// futex wait, with a guard open): the handler answers, SA_RESTART resumes the wait, and the scan
// completes. (Under ThreadSanitizer, which runs handlers only when an intercepted call returns, the
// scans fall back to the process-wide barrier instead: either way each scan is answered.)
TEST(hazard_pop, pings_reach_a_thread_blocked_inside_an_operation) {
  using S = reclaim::hazard_pop<>;
  std::atomic<long> destroyed{0};
  S::domain domain;
  std::mutex m;
  std::condition_variable cv;
  bool go = false;
  gate inside;
  std::thread sleeper([&] {
    S::guard g(domain);  // active: a scan must ping it
    inside.open();
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return go; });
  });
  inside.wait();
  retire_many<S>(domain, destroyed, 3 * static_cast<long>(domain.scan_threshold()));
  const auto s = domain.stats();
  EXPECT_GE(s.scans, 2u);
  EXPECT_GE(s.signals, 1u);
  EXPECT_GE(s.signals + s.fallbacks, s.scans) << "a scan neither pinged the thread nor fell back";
  EXPECT_GT(destroyed.load(), 0);
  {
    std::lock_guard lock(m);
    go = true;
  }
  cv.notify_one();
  sleeper.join();
}

using pop_scheme_types = ::testing::Types<reclaim::hazard_pop<>, reclaim::epoch_pop<>>;
RECLAIM_TYPED_SUITE(pop_schemes, pop_scheme_types);

// Threads that used the domain and then block in system calls outside any operation are never
// signalled: nanosleep and poll, which no SA_RESTART resumes, never return EINTR, however many
// scans run (epoch_pop scans because a thread stalls inside an operation and holds the epoch; that
// thread alone is pinged).
TYPED_TEST(pop_schemes, threads_outside_operations_are_never_interrupted) {
  using S = TypeParam;
  std::atomic<long> fillers{0};
  typename S::domain domain;
  stalled_holder<S> holder(domain, {});
  std::atomic<bool> stop{false};
  std::atomic<long> calls{0}, interrupted{0};
  std::vector<std::thread> bystanders;
  for (int t = 0; t < 3; ++t)
    bystanders.emplace_back([&] {
      empty_operation<S>(domain);  // registered and bound: between operations from here on
      while (!stop.load()) {
        const timespec ms{0, 1'000'000};
        if (nanosleep(&ms, nullptr) != 0 && errno == EINTR) ++interrupted;
        if (poll(nullptr, 0, 1) < 0 && errno == EINTR) ++interrupted;
        calls += 2;
      }
    });
  while (calls.load() < 30) std::this_thread::yield();  // every bystander registered and asleep
  retire_many<S>(domain, fillers, 10 * static_cast<long>(domain.scan_threshold()));
  stop = true;
  for (auto& b : bystanders) b.join();
  const auto s = domain.stats();
  EXPECT_GE(s.scans, 5u);
  EXPECT_EQ(interrupted.load(), 0) << "of " << calls.load() << " calls outside any operation";
  EXPECT_LE(s.signals, s.scans) << "more than the stalled thread was pinged";
  EXPECT_GT(fillers.load(), 0);
}

// A thread inside an operation that blocks the signal gets one ping, not one per scan (pending
// real-time signals queue up, and their number is limited for the whole user), and holds up no
// scan: scans that get no answer fall back to the process-wide barrier and free as usual.
TYPED_TEST(pop_schemes, a_thread_that_blocks_the_signal_gets_one_ping_and_stops_no_scan) {
  using S = TypeParam;
  std::atomic<long> fillers{0};
  typename S::domain domain;
  const int sig = reclaim::pop_signal_t<>::number();
  gate blocked, done_retiring;
  std::atomic<int> queued{-1};
  std::thread holder([&] {
    {
      typename S::guard g(domain);  // active, bound (the signal unblocked), then blocked again
      sigset_t set;
      sigemptyset(&set);
      sigaddset(&set, sig);
      pthread_sigmask(SIG_BLOCK, &set, nullptr);
      blocked.open();
      done_retiring.wait();
      // How many pings wait for this thread: take them without running the handler.
      int n = 0;
      const timespec now{0, 0};
      while (sigtimedwait(&set, nullptr, &now) == sig) ++n;
      queued = n;
      pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
    }
  });
  blocked.wait();
  retire_many<S>(domain, fillers, 10 * static_cast<long>(domain.scan_threshold()));
  const auto s = domain.stats();
  done_retiring.open();
  holder.join();
  EXPECT_GE(s.scans, 5u);
  EXPECT_GE(s.fallbacks, 1u) << "no scan fell back to the barrier";
  EXPECT_LE(s.signals, 1u) << "pings piled up at a thread that blocks the signal";
  EXPECT_LE(queued.load(), 1);
  EXPECT_GT(fillers.load(), 0) << "the scans freed nothing";
}

// An application that replaces the ping's handler after the domain installed it (its own handler,
// SIG_IGN, SIG_DFL, which would kill the process at the next ping) is stopped at the next scan with
// a message that names the signal and the policy that changes it.
TEST(hazard_pop, a_replaced_handler_is_named) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  using S = reclaim::hazard_pop<>;
  const int sig = reclaim::pop_signal_t<>::number();
  for (void (*replacement)(int) : {SIG_IGN, SIG_DFL, +[](int) {}}) {
    EXPECT_DEATH(
        {
          std::atomic<long> fillers{0};
          S::domain domain;
          stalled_holder<S> holder(domain, {});  // active: a scan would ping it
          signal(sig, replacement);
          retire_many<S>(domain, fillers, 3 * static_cast<long>(domain.scan_threshold()));
        },
        "signal [0-9]+ \\(SIGRTMIN\\+5\\) was replaced.*rt_signal<K>");
  }
}

// Only threads of the domain are pinged, and a thread that exited is no longer waited for.
TEST(hazard_pop, pings_only_the_live_threads_of_its_domain) {
  using S = reclaim::hazard_pop<>;
  std::atomic<long> destroyed{0};
  S::domain domain, other;
  gate used_other, may_exit;
  std::thread outsider([&] {
    empty_operation<S>(other);  // a POP thread, but not of `domain`
    used_other.open();
    may_exit.wait();
  });
  used_other.wait();
  for (int i = 0; i < 8; ++i) std::thread([&] { empty_operation<S>(domain); }).join();
  retire_many<S>(domain, destroyed, 3 * static_cast<long>(domain.scan_threshold()));
  EXPECT_GE(domain.stats().scans, 2u);
  EXPECT_EQ(domain.stats().signals, 0u) << "a scan pinged a thread of another domain or one gone";
  may_exit.open();
  outsider.join();
}

// The ping's signal must be free: a foreign handler makes the domain's constructor throw, naming
// the signal and the policy to choose another.
TEST(hazard_pop, a_signal_with_a_foreign_handler_is_refused) {
  using S = reclaim::hazard_pop<reclaim::signal_number<SIGUSR2>>;
  struct sigaction action{}, old{};
  action.sa_handler = [](int) {};
  sigemptyset(&action.sa_mask);
  ASSERT_EQ(sigaction(SIGUSR2, &action, &old), 0);
  try {
    S::domain domain;
    ADD_FAILURE() << "the domain took a signal that has another handler";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("signal 12"), std::string::npos) << what;
    EXPECT_NE(what.find("rt_signal<K>"), std::string::npos) << what;
  }
  sigaction(SIGUSR2, &old, nullptr);
}

// nbr and the POP schemes signal with different signals by default and run in one process, one
// thread using both.
TEST(hazard_pop, runs_beside_nbr) {
  using P = reclaim::hazard_pop<>;
  using N = reclaim::nbr<reclaim::scan_threshold<64>>;
  std::atomic<long> destroyed{0};
  P::domain pop;
  N::domain neutral;
  std::atomic<bool> stop{false};
  std::thread both([&] {
    while (!stop.load()) {
      retire_one<P>(pop, destroyed);
      retire_one<N>(neutral, destroyed);
    }
  });
  retire_many<P>(pop, destroyed, 4 * static_cast<long>(pop.scan_threshold()));
  retire_many<N>(neutral, destroyed, 4 * 64);
  stop = true;
  both.join();
  EXPECT_GT(pop.stats().freed, 0u);
  EXPECT_GT(neutral.stats().freed, 0u);
}

// While every thread keeps passing through quiescent states, epoch_pop frees by the epoch alone:
// no scan, no signal, and garbage within R.
TEST(epoch_pop, sends_no_signal_while_no_thread_stalls) {
  using S = reclaim::epoch_pop<>;
  std::atomic<long> destroyed{0};
  S::domain domain;
  gate registered, may_exit;
  std::thread idle([&] {
    empty_operation<S>(domain);  // registered, between operations from here on
    registered.open();
    may_exit.wait();
  });
  registered.wait();
  const long n = 20 * static_cast<long>(domain.scan_threshold());
  const std::uint64_t max_pending = retire_and_watch<S>(domain, destroyed, n);
  const auto s = domain.stats();
  EXPECT_EQ(s.signals, 0u);
  EXPECT_EQ(s.scans, 0u);
  EXPECT_GT(s.epochs, 10u);
  EXPECT_LT(max_pending, domain.scan_threshold());
  EXPECT_GT(destroyed.load(), n / 2);
  may_exit.open();
  idle.join();
}

// ---------------------------------------------------------------------------------------------
// The barriers' refusals (core/platform/process_barrier.hpp), from the texts of /proc files.

TEST(process_barrier, split_locks_are_trapped_where_the_processor_detects_them) {
  using reclaim::core::split_locks_trapped;
  const std::string plain = "processor\t: 0\nflags\t\t: fpu sse2 pcid\nbugs\t\t:\n";
  const std::string detecting =
      "processor\t: 0\nflags\t\t: fpu split_lock_detect sse2\nbugs\t\t:\n";
  const std::string bus = "flags\t\t: fpu bus_lock_detect\n";
  EXPECT_EQ(split_locks_trapped(plain, "quiet"), "");
  EXPECT_NE(split_locks_trapped(detecting, "quiet").find("split_lock_detect"), std::string::npos);
  EXPECT_NE(split_locks_trapped(bus, "quiet").find("bus_lock_detect"), std::string::npos);
  EXPECT_EQ(split_locks_trapped(detecting, "quiet split_lock_detect=off"), "");
  // A flag's name inside another word is not the flag.
  EXPECT_EQ(split_locks_trapped("flags\t\t: fpu no_split_lock_detect_x\n", ""), "");
}

TEST(process_barrier, the_mprotect_barrier_refuses_tlb_flushes_without_interrupts) {
  using reclaim::core::tlb_flush_without_interrupts;
  EXPECT_EQ(tlb_flush_without_interrupts("flags\t\t: fpu invpcid pcid\n"), "");
  EXPECT_NE(tlb_flush_without_interrupts("flags\t\t: fpu invlpgb pcid\n").find("invlpgb"),
            std::string::npos);
}

// hp_asym uses membarrier wherever the kernel offers it, unless RECLAIM_MEMBARRIER=0 forces the
// mprotect fallback (the ctest hp_family.hp_asym_mprotect_fallback runs this suite so).
TEST(process_barrier, hp_asym_uses_membarrier_where_the_kernel_offers_it) {
  reclaim::hp_asym<>::domain domain;  // chooses the barrier
  const char* env = std::getenv("RECLAIM_MEMBARRIER");
  const bool forced_off = env && std::string(env) == "0";
  bool offered = false;
#if RECLAIM_HAVE_MEMBARRIER
  const long commands = ::syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  offered = commands > 0 && (commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0;
#endif
  EXPECT_EQ(reclaim::core::membarrier_barrier::uses_membarrier(), offered && !forced_off);
}

}  // namespace
