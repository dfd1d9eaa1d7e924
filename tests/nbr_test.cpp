// SPDX-License-Identifier: MIT
// The promises of nbr and nbr_plus that go beyond the generic scheme suite: neutralization of
// readers, reservations of writers, the wait for signalled readers, bounded garbage with stalled
// threads, coexistence with the application's own signal handlers, and NBR+'s saving in signals.
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "suite_support.hpp"
#include "test_support.hpp"

namespace {

using namespace reclaim_test;
using reclaim::scan_threshold;
using reclaim::nbr;
using reclaim::nbr_plus;

// A small bag, so that a few dozen retires run a signal round.
constexpr std::size_t small_bag = 64;
using small_nbr = nbr<scan_threshold<small_bag>>;
using small_nbr_plus = nbr_plus<scan_threshold<small_bag>>;

using nbr_schemes = ::testing::Types<small_nbr, small_nbr_plus>;
RECLAIM_TYPED_SUITE(nbr_family, nbr_schemes);

// A thread that sits in a read phase until told to stop, reading the node `shared` points to on
// every step. A neutralizing signal sends it back to the start of the read phase, where it reads
// `shared` afresh: once the node was unlinked (shared == nullptr) it leaves. Counts the read phases
// it started (the first plus one per restart) and whether every read saw the node intact.
template <class S>
class stalled_reader {
 public:
  stalled_reader(typename S::domain& domain, std::atomic<tracked<S>*>& shared)
      : domain_(domain), shared_(shared), thread_([this] { run(); }) {
    reading_.wait();
  }
  ~stalled_reader() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  void join() { thread_.join(); }
  long read_phases() const { return read_phases_.load(); }
  bool saw_intact() const { return intact_.load(); }
  bool left_after_unlink() const { return left_after_unlink_.load(); }

 private:
  void run() {
    typename S::guard g(domain_);
    RECLAIM_READ_PHASE(g);
    // Only atomics outside this frame are modified after the restart point.
    read_phases_.fetch_add(1);
    tracked<S>* p = g.protect(shared_, 0);
    if (p == nullptr) {
      left_after_unlink_.store(true);
      return;
    }
    reading_.open();
    while (!stop_.load(std::memory_order_relaxed))
      if (p->payload != 42) intact_.store(false);
  }

  typename S::domain& domain_;
  std::atomic<tracked<S>*>& shared_;
  std::atomic<long> read_phases_{0};
  std::atomic<bool> intact_{true}, left_after_unlink_{false}, stop_{false};
  gate reading_;
  std::thread thread_;
};

// Retires `n` fresh nodes from a guard of its own (not in a read phase).
template <class S>
void retire_fillers(typename S::domain& domain, std::atomic<long>& destroyed, long n) {
  retire_many<S>(domain, destroyed, n);
}

TYPED_TEST(nbr_family, a_reader_stalled_in_a_read_phase_is_neutralized_and_restarts) {
  using S = TypeParam;
  std::atomic<long> victim_destroyed{0}, fillers{0};
  typename S::domain domain;
  std::atomic<tracked<S>*> shared{new tracked<S>(victim_destroyed, 42)};
  stalled_reader<S> reader(domain, shared);
  {
    typename S::guard g(domain);
    g.retire(shared.exchange(nullptr));
  }
  // Enough for a round: the round signals the reader, waits until it left the read phase, and
  // only then frees the victim.
  retire_fillers<S>(domain, fillers, S::threshold);
  EXPECT_EQ(victim_destroyed.load(), 1) << "a full bag was not reclaimed";
  reader.join();
  EXPECT_TRUE(reader.saw_intact()) << "the reader read the node after it was freed";
  EXPECT_TRUE(reader.left_after_unlink()) << "the restarted read phase did not start from the root";
  EXPECT_EQ(reader.read_phases(), 2) << "one restart expected";
  EXPECT_GE(domain.restarts(), 1u);
  EXPECT_GE(domain.stats().signals, 1u);
}

// A thread in a write phase is not restarted: what it reserved survives every round until its
// operation ends, and nothing else is held back.
TYPED_TEST(nbr_family, a_writer_keeps_what_it_reserved_and_nothing_else) {
  using S = TypeParam;
  std::atomic<long> victims_destroyed{0}, bystander_destroyed{0}, fillers{0};
  typename S::domain domain;
  constexpr unsigned R = S::reservation_count;
  std::atomic<tracked<S>*> shared[R];
  for (auto& s : shared) s = new tracked<S>(victims_destroyed, 42);
  std::atomic<tracked<S>*> bystander{new tracked<S>(bystander_destroyed, 7)};
  gate reserved, may_write, wrote;
  std::atomic<bool> intact{false};
  std::thread writer([&] {
    typename S::guard g(domain);
    RECLAIM_READ_PHASE(g);
    tracked<S>* p[R];
    for (unsigned i = 0; i < R; ++i) p[i] = g.protect(shared[i], i);
    (void)g.protect(bystander, R);  // read, but not reserved
    [&]<std::size_t... I>(std::index_sequence<I...>) { g.write_phase(p[I]...); }(
        std::make_index_sequence<R>{});
    reserved.open();
    may_write.wait();
    bool ok = true;
    for (tracked<S>* q : p) ok = ok && q->payload == 42;
    intact = ok;
    wrote.open();
  });
  reserved.wait();
  {
    typename S::guard g(domain);
    for (auto& s : shared) g.retire(s.exchange(nullptr));
    g.retire(bystander.exchange(nullptr));
  }
  retire_fillers<S>(domain, fillers, 5 * static_cast<long>(S::threshold));
  EXPECT_EQ(victims_destroyed.load(), 0) << "a reserved node was freed during its write phase";
  EXPECT_EQ(bystander_destroyed.load(), 1) << "an unreserved node was held back";
  EXPECT_GT(fillers.load(), 0);
  may_write.open();
  wrote.wait();
  writer.join();
  EXPECT_TRUE(intact.load());
  EXPECT_TRUE(eventually([&] {
    retire_fillers<S>(domain, fillers, 16);
    return victims_destroyed.load() == static_cast<long>(R);
  })) << "reservations were not dropped when the operation ended";
}

// Garbage stays under the bound the scheme claims while one thread sleeps inside a read phase and
// another sleeps in a write phase holding R reservations: a bag never exceeds the threshold (R x
// records < threshold here), whatever the stalled threads do.
TYPED_TEST(nbr_family, garbage_stays_bounded_while_threads_stall_in_read_and_write_phases) {
  using S = TypeParam;
  std::atomic<long> held_destroyed{0}, fillers{0};
  typename S::domain domain;
  constexpr unsigned R = S::reservation_count;
  std::atomic<tracked<S>*> held[R];
  for (auto& h : held) h = new tracked<S>(held_destroyed, 1);
  std::atomic<bool> stop{false};
  std::atomic<long> sleeper_read_phases{0};
  gate sleeping, holding;
  std::thread sleeper([&] {
    typename S::guard g(domain);
    RECLAIM_READ_PHASE(g);
    sleeper_read_phases.fetch_add(1);
    sleeping.open();
    // Sleeps inside the read phase; each signal interrupts the sleep and restarts the phase.
    while (!stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  std::thread holder([&] {
    typename S::guard g(domain);
    RECLAIM_READ_PHASE(g);
    tracked<S>* p[R];
    for (unsigned i = 0; i < R; ++i) p[i] = g.protect(held[i], i);
    [&]<std::size_t... I>(std::index_sequence<I...>) { g.write_phase(p[I]...); }(
        std::make_index_sequence<R>{});
    holding.open();
    while (!stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  sleeping.wait();
  holding.wait();
  {
    typename S::guard g(domain);
    for (auto& h : held) g.retire(h.exchange(nullptr));
  }
  const std::uint64_t records = 3;
  const std::uint64_t bound = std::max<std::uint64_t>(S::threshold, R * records + 1);
  std::uint64_t max_pending = 0;
  const long n = 20 * static_cast<long>(S::threshold);
  for (long i = 0; i < n; ++i) {
    retire_one<S>(domain, fillers);
    max_pending = std::max(max_pending, domain.stats().pending);
  }
  auto s = domain.stats();
  EXPECT_EQ(s.records, records);
  EXPECT_LE(max_pending, bound) << "garbage grew past the bound with stalled threads";
  EXPECT_GE(s.epochs, static_cast<std::uint64_t>(n) / S::threshold / 2)
      << "rounds did not complete while a thread slept in a read phase";
  EXPECT_GE(fillers.load(), n - static_cast<long>(bound));
  EXPECT_EQ(held_destroyed.load(), 0) << "reserved nodes freed while their writer sleeps";
  EXPECT_GT(sleeper_read_phases.load(), 1) << "the sleeping reader was never restarted";
  stop.store(true);
  sleeper.join();
  holder.join();
}

// The variant of S with a bag of 8 and 2 reservations: a round every few retires, a storm of
// signals when many threads retire.
template <class S>
using storm_of = reclaim::basic_nbr<std::conditional_t<S::name == std::string_view("nbr"),
                                                       reclaim::detail::nbr_variant,
                                                       reclaim::detail::nbr_plus_variant>,
                                    scan_threshold<8>, reclaim::slots<2>>;

// Many threads retire into a list with a tiny bag: rounds overlap, signals cross, a reclaimer is
// signalled by another reclaimer. The list stays consistent and nothing is lost or freed twice
// (AddressSanitizer checks the accesses).
TYPED_TEST(nbr_family, a_signal_storm_leaves_the_structure_and_the_counts_consistent) {
  using S = storm_of<TypeParam>;
  typename S::domain domain;
  reclaim::ds::lazy_list<std::int64_t, S> list(domain);
  constexpr int threads = 6;
  const long ops = scaled(20000);
  std::vector<std::int64_t> sums(threads, 0);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      rng r(t + 1);
      std::int64_t sum = 0;
      for (long i = 0; i < ops; ++i) {
        const auto key = static_cast<std::int64_t>(r.below(64));
        if (r.below(2) == 0) {
          if (list.insert(key)) sum += key;
        } else if (list.erase(key)) {
          sum -= key;
        }
      }
      sums[t] = sum;
    });
  for (auto& w : workers) w.join();
  std::int64_t expected = 0;
  for (auto s : sums) expected += s;
  EXPECT_TRUE(list.unsafe_well_formed());
  EXPECT_EQ(list.unsafe_key_sum(), expected);
  auto s = domain.stats();
  EXPECT_GT(s.signals, 0u) << "no thread was ever signalled: the storm did not happen";
  EXPECT_GT(s.freed, 0u);
  EXPECT_LE(s.freed, s.retired);
  // Each exited thread left at most max(threshold, R x records + 1) nodes to the orphanage.
  const std::uint64_t per_thread = std::max<std::uint64_t>(8, 2 * threads + 1);
  EXPECT_LE(s.retired - s.freed, threads * per_thread) << "garbage beyond the per-thread bound";
}

// Threads that exit in the middle of a read phase or of a write phase (their guard never ends)
// block nothing: their records leave the phase and drop their reservations at exit.
TYPED_TEST(nbr_family, threads_that_exit_inside_a_phase_block_nothing) {
  using S = TypeParam;
  std::atomic<long> victim_destroyed{0}, fillers{0};
  typename S::domain domain;
  std::atomic<tracked<S>*> shared{new tracked<S>(victim_destroyed, 42)};
  // A guard that is never destroyed: the thread leaves with its operation open.
  auto exit_without_ending = [&](bool write) {
    std::thread([&] {
      alignas(typename S::guard) unsigned char storage[sizeof(typename S::guard)];
      auto* g = new (storage) typename S::guard(domain);
      RECLAIM_READ_PHASE(*g);
      tracked<S>* p = g->protect(shared, 0);
      if (write) g->write_phase(p);
    }).join();
  };
  // pthread_exit inside the phase: the stack unwinds, and the guard ends on the way out.
  auto exit_by_pthread_exit = [&](bool write) {
    std::thread([&] {
      typename S::guard g(domain);
      RECLAIM_READ_PHASE(g);
      tracked<S>* p = g.protect(shared, 0);
      if (write) g.write_phase(p);
      pthread_exit(nullptr);
    }).join();
  };
  exit_without_ending(false);
  exit_without_ending(true);
  exit_by_pthread_exit(false);
  exit_by_pthread_exit(true);
  EXPECT_EQ(domain.stats().threads, 0u);
  {
    typename S::guard g(domain);
    g.retire(shared.exchange(nullptr));
  }
  // Would hang if a round waited for the exited reader; the writer's reservation is gone.
  retire_fillers<S>(domain, fillers, S::threshold);
  EXPECT_EQ(victim_destroyed.load(), 1);
  EXPECT_EQ(domain.restarts(), 0u) << "nobody was in a read phase to restart";
}

// Garbage that exited threads leave behind is adopted by the next retire of a live thread and
// reclaimed with its bag: it does not pile up with the number of threads that came and went.
TYPED_TEST(nbr_family, garbage_of_exited_threads_stays_bounded) {
  using S = TypeParam;
  std::atomic<long> destroyed{0};
  typename S::domain domain;
  std::uint64_t max_pending = 0;
  for (int i = 0; i < 50; ++i) {
    std::thread([&] { retire_many<S>(domain, destroyed, S::threshold - 1); }).join();
    retire_one<S>(domain, destroyed);
    max_pending = std::max(max_pending, domain.stats().pending);
  }
  EXPECT_LE(max_pending, 2 * S::threshold);
}

// A guard of domain A, in a write phase, runs an operation on domain B (nesting across domains);
// when that operation ends, the thread's neutralizable phase is A's again: a later read phase of
// the outer guard is restarted by A's reclaimers, who would otherwise wait until it ended on its
// own. The reader here never ends on its own until told to.
TYPED_TEST(nbr_family, an_outer_guard_is_neutralizable_after_an_operation_nested_on_another_domain) {
  using S = TypeParam;
  std::atomic<long> victim_destroyed{0}, fillers{0};
  typename S::domain a, b;
  reclaim::ds::lazy_list<std::int64_t, S> list_on_b(b);
  std::atomic<tracked<S>*> shared{new tracked<S>(victim_destroyed, 42)};
  std::atomic<long> read_phases{0};
  std::atomic<bool> stop{false}, left_after_unlink{false};
  gate reading;
  std::thread reader([&] {
    typename S::guard g(a);
    RECLAIM_READ_PHASE(g);
    g.write_phase();
    list_on_b.insert(1);  // a whole operation of another domain, nested in A's write phase
    list_on_b.erase(1);
    RECLAIM_READ_PHASE(g);
    read_phases.fetch_add(1);
    tracked<S>* p = g.protect(shared, 0);
    if (p == nullptr) {
      left_after_unlink.store(true);
      return;
    }
    reading.open();
    while (!stop.load(std::memory_order_relaxed)) {
    }
  });
  reading.wait();
  // Reclaim on A in a thread of its own, so that a reclaimer that waits for ever is noticed.
  std::atomic<bool> reclaimed{false};
  std::thread reclaimer([&] {
    {
      typename S::guard g(a);
      g.retire(shared.exchange(nullptr));
    }
    retire_many<S>(a, fillers, S::threshold);
    reclaimed.store(true);
  });
  const bool in_time = eventually([&] { return reclaimed.load(); });
  stop.store(true);  // unblocks a reclaimer that could not neutralize the reader
  reclaimer.join();
  reader.join();
  EXPECT_TRUE(in_time) << "A's reclaimer waited for a read phase it could not neutralize";
  EXPECT_TRUE(left_after_unlink.load()) << "the read phase was not restarted from its root";
  EXPECT_EQ(victim_destroyed.load(), 1);
  EXPECT_GE(a.restarts(), 1u);
}

// The application keeps its own handler for another signal (SIGUSR1 here), and sees every one of
// its signals while threads are being neutralized; a domain asked to use a signal that already has
// a foreign handler refuses, naming the signal and the policy to pick another.
std::atomic<long> usr1_seen{0};
extern "C" void count_usr1(int) { usr1_seen.fetch_add(1, std::memory_order_relaxed); }

TEST(nbr_scheme, the_applications_own_signal_handlers_keep_working) {
  struct sigaction action{}, old{};
  action.sa_handler = &count_usr1;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  ASSERT_EQ(sigaction(SIGUSR1, &action, &old), 0);
  usr1_seen = 0;

  using S = nbr<scan_threshold<16>>;
  {
    S::domain domain;
    reclaim::ds::lazy_list<std::int64_t, S> list(domain);
    std::atomic<bool> stop{false};
    std::vector<std::thread> workers;
    for (int t = 0; t < 3; ++t)
      workers.emplace_back([&, t] {
        rng r(t + 7);
        while (!stop.load()) {
          const auto key = static_cast<std::int64_t>(r.below(32));
          if (r.below(2)) list.insert(key); else list.erase(key);
        }
      });
    // Each signal is seen before the next is sent: a standard signal still pending when the
    // next one arrives is merged with it, so sending faster than a loaded (sanitized, 2-core)
    // machine schedules the workers would count merges, not lost signals.
    constexpr int sent = 100;
    for (int i = 0; i < sent; ++i) {
      const long before = usr1_seen.load();
      pthread_kill(workers[i % workers.size()].native_handle(), SIGUSR1);
      if (!eventually([&] { return usr1_seen.load() > before; })) {
        ADD_FAILURE() << "signal " << i << " never reached the application's handler";
        break;  // the workers are joined below
      }
    }
    EXPECT_EQ(usr1_seen.load(), sent);
    stop = true;
    for (auto& w : workers) w.join();
    EXPECT_TRUE(list.unsafe_well_formed());
    EXPECT_GT(domain.stats().signals, 0u);
    struct sigaction now{};
    sigaction(SIGUSR1, nullptr, &now);
    EXPECT_EQ(now.sa_handler, &count_usr1) << "nbr replaced the application's handler";
  }

  try {
    nbr<reclaim::signal_number<SIGUSR1>>::domain clash;
    ADD_FAILURE() << "a domain took over a signal that has the application's handler";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(std::to_string(SIGUSR1)), std::string::npos) << what;
    EXPECT_NE(what.find("rt_signal"), std::string::npos) << what;
  }
  sigaction(SIGUSR1, &old, nullptr);
}

// NBR+ piggybacks on other threads' rounds: with two threads retiring at the same pace, half a bag
// apart, one runs the rounds and the other reclaims by watching them, so NBR+ sends about half the
// signals NBR sends for the same retires. Two readers stay in read phases throughout, so that
// every round has threads to signal.
template <class S>
std::uint64_t signals_for_lockstep_work(long retires_each) {
  std::atomic<long> destroyed{0}, leftover{0};
  typename S::domain domain;
  std::atomic<tracked<S>*> shared{new tracked<S>(leftover, 42)};
  std::atomic<bool> stop{false};
  std::vector<std::thread> readers;
  std::atomic<int> reading{0};
  for (int i = 0; i < 2; ++i)
    readers.emplace_back([&] {
      typename S::guard g(domain);
      RECLAIM_READ_PHASE(g);
      tracked<S>* p = g.protect(shared, 0);
      reading.fetch_add(1);
      // Sleeps inside the read phase (leaving the cores to the retirers); signals cut the sleep.
      while (!stop.load(std::memory_order_relaxed)) {
        if (p->payload != 42) std::abort();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
  while (reading.load() < 2) std::this_thread::yield();
  // Two retirers take turns, one retire each; the second starts a quarter of a bag late.
  std::atomic<long> turn{0};
  const long lead = static_cast<long>(S::threshold / 4);
  auto retirer = [&](int id) {
    const long own_lead = id == 0 ? lead : 0;
    for (long i = 0; i < retires_each + own_lead; ++i) {
      const bool alone = i < own_lead;
      if (!alone) {
        const long slot = 2 * (i - own_lead) + id;
        while (turn.load() != slot) std::this_thread::yield();
      }
      retire_one<S>(domain, destroyed);
      if (!alone) turn.fetch_add(1);
    }
  };
  std::thread a(retirer, 0), b(retirer, 1);
  a.join();
  b.join();
  stop = true;
  for (auto& r : readers) r.join();
  delete shared.load();
  return domain.stats().signals;
}

TEST(nbr_plus_scheme, sends_fewer_signals_than_nbr_for_the_same_work) {
  const long retires = 16 * static_cast<long>(small_bag);
  const std::uint64_t plain = signals_for_lockstep_work<small_nbr>(retires);
  const std::uint64_t plus = signals_for_lockstep_work<small_nbr_plus>(retires);
  EXPECT_GT(plain, 0u);
  EXPECT_LT(plus, plain) << "nbr sent " << plain << " signals, nbr_plus " << plus;
  std::printf("signals for the same work: nbr %llu, nbr_plus %llu\n",
              static_cast<unsigned long long>(plain), static_cast<unsigned long long>(plus));
}

// A reader that blocks the signal inside its read phase cannot be neutralized: the rounds wait
// until it leaves the read phase on its own, and meanwhile send it one signal, not one per resend
// (pending real-time signals queue up, against a limit for the whole user).
TYPED_TEST(nbr_family, a_reader_that_blocks_the_signal_gets_one_signal) {
  using S = TypeParam;
  std::atomic<long> destroyed{0};
  typename S::domain domain;
  const int sig = domain.signal_number();
  gate reading;
  std::atomic<int> queued{-1};
  std::atomic<long> phases{0};
  std::thread reader([&] {
    typename S::guard g(domain);
    RECLAIM_READ_PHASE(g);
    phases.fetch_add(1);  // atomics outside this frame only, after the restart point
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    reading.open();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // a slow read phase
    g.write_phase();
    // The signals that wait for this thread: taken without running the handler.
    int n = 0;
    const timespec now{0, 0};
    while (sigtimedwait(&set, nullptr, &now) == sig) ++n;
    queued.store(n);
    pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  });
  reading.wait();
  retire_fillers<S>(domain, destroyed, 4 * static_cast<long>(small_bag));  // rounds wait for it
  reader.join();
  EXPECT_EQ(phases.load(), 1) << "a blocked signal restarted the read phase";
  EXPECT_LE(queued.load(), 1) << "signals piled up at a reader that blocks them";
  EXPECT_GE(queued.load(), 0);
  EXPECT_GT(destroyed.load(), 0);
}

// A comparison that allocates (std::string keys built for each comparison, and a comparator that
// allocates on its own) runs in a window no neutralizing signal cuts: a jump out of malloc would
// leave its lock held, and the next allocation would deadlock. Under a storm of signals the lists
// stay consistent and nothing hangs.
struct allocating_less {
  bool operator()(const std::string& a, const std::string& b) const {
    // Allocates and frees several times (each string is longer than the SSO buffer), so that most
    // of a comparison runs inside malloc and free.
    std::string x = a, y = b;
    for (int i = 0; i < 4; ++i) {
      x = "key:" + x;
      y = "key:" + y;
    }
    return x < y;
  }
};
TYPED_TEST(nbr_family, comparisons_that_allocate_are_never_cut_by_a_restart) {
  using S = storm_of<TypeParam>;
  typename S::domain domain;
  reclaim::ds::lazy_list<std::string, S, allocating_less> list(domain);
  constexpr int threads = 6;
  const long ops = scaled(12000);
  std::vector<long> counts(threads, 0);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      rng r(t + 3);
      long count = 0;
      for (long i = 0; i < ops; ++i) {
        const std::string key = "a fairly long key to defeat the SSO #" + std::to_string(r.below(48));
        if (r.below(2) == 0) {
          count += list.insert(key);
        } else {
          count -= list.erase(key);
        }
      }
      counts[t] = count;
    });
  for (auto& w : workers) w.join();
  long expected = 0;
  for (long c : counts) expected += c;
  EXPECT_TRUE(list.unsafe_well_formed());
  EXPECT_EQ(static_cast<long>(list.size()), expected);
  EXPECT_GT(domain.stats().signals, 0u) << "no thread was ever signalled: the storm did not happen";
}

// An application that replaces nbr's handler after the domain installed it (SIG_IGN here: the
// rounds would wait for restarts that never come; SIG_DFL would kill the process) is stopped at
// the next round with a message that names the signal and the policy that changes it.
TEST(nbr_scheme, a_replaced_handler_is_named) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  using S = small_nbr;
  EXPECT_DEATH(
      {
        std::atomic<long> destroyed{0};
        S::domain domain;
        std::atomic<tracked<S>*> shared{new tracked<S>(destroyed, 42)};
        stalled_reader<S> reader(domain, shared);  // in a read phase: a round signals it
        signal(domain.signal_number(), SIG_IGN);
        retire_fillers<S>(domain, destroyed, 2 * static_cast<long>(small_bag));
      },
      "signal [0-9]+ \\(SIGRTMIN\\+4\\) was replaced \\(now SIG_IGN\\).*rt_signal<K>");
}

#ifndef NDEBUG
// nbr tells the application's handlers from its read phases by the signal mask, which a handler
// installed with SA_NODEFER leaves as it was: debug builds name such a handler when a thread binds.
TEST(nbr_scheme, a_handler_installed_with_sa_nodefer_is_named) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        struct sigaction action{};
        action.sa_handler = &count_usr1;
        sigemptyset(&action.sa_mask);
        action.sa_flags = SA_NODEFER;
        sigaction(SIGUSR1, &action, nullptr);
        small_nbr::domain domain;
        empty_operation<small_nbr>(domain);
      },
      "signal 10 is installed with SA_NODEFER.*sa_mask");
}
#endif

TEST(nbr_scheme, policies_set_the_threshold_reservations_watermark_and_signal) {
  static_assert(nbr<>::threshold == 1024 && nbr<>::reservation_count == 8);
  static_assert(nbr<>::low_watermark_size == nbr<>::threshold);
  static_assert(nbr_plus<>::low_watermark_size == nbr_plus<>::threshold / 2);
  static_assert(
      nbr_plus<scan_threshold<100>, reclaim::low_watermark<25>>::low_watermark_size == 25);
  static_assert(nbr<reclaim::slots<3>, reclaim::amortized_free<1>>::reservation_count == 3);
  static_assert(nbr<>::guard::neutralizable && !reclaim::debra<>::guard::validates);
  static_assert(reclaim::neutralizable_guard<nbr<>::guard> &&
                reclaim::neutralizable_guard<nbr_plus<>::guard> &&
                !reclaim::neutralizable_guard<reclaim::debra<>::guard> &&
                !reclaim::neutralizable_guard<reclaim::hp<>::guard>);
  static_assert(reclaim::scheme<nbr<>> && reclaim::scheme<nbr_plus<>>);
  static_assert(nbr<>::family == reclaim::family::neutralization &&
                nbr<>::needs == reclaim::needs_restartable_read_phases);
  static_assert(nbr<>::bounds_garbage && nbr_plus<>::bounds_garbage &&
                !nbr<reclaim::amortized_free<1>>::bounds_garbage);
  static_assert(reclaim::protects<nbr<>, reclaim::ds::lazy_list<std::int64_t, nbr<>>>);
  // hm_list under nbr is the restarting form; Michael's Find, asked for by name, is refused.
  static_assert(reclaim::protects<nbr<>, reclaim::ds::hm_list<std::int64_t, nbr<>>>);
  using michaels_find =
      reclaim::ds::basic_hm_list<std::int64_t, void, nbr<>, std::less<std::int64_t>,
                                 reclaim::ds::detail::hm_search::resume_after_helping>;
  static_assert(!reclaim::protects<nbr<>, michaels_find>);
  static_assert(reclaim::restart_safe<int*, std::pair<int*, long>> &&
                !reclaim::restart_safe<int*, std::string>);
  EXPECT_EQ(nbr<>::name, "nbr");
  EXPECT_EQ(nbr_plus<>::name, "nbr_plus");
  nbr<>::domain d;
  EXPECT_EQ(d.signal_number(), SIGRTMIN + 4);
  nbr<reclaim::rt_signal<6>>::domain d6;
  EXPECT_EQ(d6.signal_number(), SIGRTMIN + 6);
}

// For any other scheme RECLAIM_READ_PHASE is the guard's no-op: it compiles in a non-template
// function, and nothing restarts.
TEST(nbr_scheme, read_phase_marker_is_a_no_op_for_other_schemes) {
  reclaim::debra<>::domain domain;
  int runs = 0;
  {
    reclaim::debra<>::guard g(domain);
    RECLAIM_READ_PHASE(g);
    ++runs;
    g.write_phase(&runs);
  }
  EXPECT_EQ(runs, 1);
}

}  // namespace
