// SPDX-License-Identifier: MIT
// Shared helpers for the reclaim test suite: the scheme lists the typed tests run over, a node type
// that reports its destruction, and how long stress tests run (shorter under sanitizers).
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <reclaim/reclaim.hpp>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RECLAIM_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define RECLAIM_TEST_SANITIZED 1
#endif
#endif
#ifndef RECLAIM_TEST_SANITIZED
#define RECLAIM_TEST_SANITIZED 0
#endif

#if defined(__SANITIZE_THREAD__)
#define RECLAIM_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RECLAIM_TEST_TSAN 1
#endif
#endif
#ifndef RECLAIM_TEST_TSAN
#define RECLAIM_TEST_TSAN 0
#endif

// The hazard-pointer family beyond hp (hp.hpp: its fences), in every scheme list: hp_asym,
// hp_mprotect, hp_splitcas, hazard_pop, epoch_pop. hp_mprotect and hp_splitcas only where they can
// run: x86, and a processor and kernel that tests/CMakeLists.txt found suitable at configure time
// (RECLAIM_TEST_NO_MPROTECT_BARRIER, RECLAIM_TEST_NO_SPLIT_LOCKS: it says why in its output).
#if (defined(__x86_64__) || defined(__i386__)) && !defined(RECLAIM_TEST_NO_MPROTECT_BARRIER)
#define RECLAIM_TEST_HP_MPROTECT reclaim::hp_mprotect<>,
#else
#define RECLAIM_TEST_HP_MPROTECT
#endif
#if (defined(__x86_64__) || defined(__i386__)) && !defined(RECLAIM_TEST_NO_SPLIT_LOCKS)
#define RECLAIM_TEST_HP_SPLITCAS reclaim::hp_splitcas<>,
#else
#define RECLAIM_TEST_HP_SPLITCAS
#endif
#define RECLAIM_TEST_HP_FAMILY                                                          \
  reclaim::hp_asym<>, RECLAIM_TEST_HP_MPROTECT RECLAIM_TEST_HP_SPLITCAS reclaim::hazard_pop<>, \
      reclaim::epoch_pop<>
// The era family and batch reference counting.
#define RECLAIM_TEST_ERA_AND_BATCH_SCHEMES                                                   \
  reclaim::he<>, reclaim::ibr<>, reclaim::wfe<>, reclaim::hyaline<>, reclaim::hyaline_1<>, \
      reclaim::hyaline_s<>, reclaim::hyaline_1s<>, reclaim::crystalline_l<>,               \
      reclaim::crystalline_w<>

namespace reclaim_test {

// The scheme lists the typed tests run over: add a scheme here and it runs every promise test.
// Every scheme, including the baseline that frees nothing while its domain lives.
using all_schemes =
    ::testing::Types<reclaim::none, reclaim::debra<>, reclaim::hp<>,
                     reclaim::debra<reclaim::check_every<5>>, reclaim::hp<reclaim::slots<8>>,
                     reclaim::ebr<>, reclaim::ner<>, reclaim::qsbr<>, reclaim::rcu<>,
                     reclaim::token_naive<>, reclaim::token_pass_first<>,
                     reclaim::token_periodic<>, reclaim::token_af<>,
                     reclaim::nbr<reclaim::scan_threshold<64>>,
                     reclaim::nbr_plus<reclaim::scan_threshold<64>>, reclaim::stamp_it<>,
                     reclaim::lfrc<>, RECLAIM_TEST_HP_FAMILY,
    RECLAIM_TEST_ERA_AND_BATCH_SCHEMES>;
// Schemes that free while the domain lives.
using reclaiming_schemes = ::testing::Types<
    reclaim::debra<>, reclaim::hp<>, reclaim::debra<reclaim::check_every<5>>,
    reclaim::hp<reclaim::slots<8>>, reclaim::debra<reclaim::amortized_free<1>>,
    reclaim::hp<reclaim::amortized_free<1>>, reclaim::ebr<>, reclaim::ner<>,
    reclaim::ner<reclaim::advance_every<5>>, reclaim::qsbr<>, reclaim::rcu<>,
    reclaim::rcu<reclaim::advance_every<4>, reclaim::scan_every<16>>, reclaim::token_naive<>,
    reclaim::token_pass_first<>, reclaim::token_periodic<>, reclaim::token_af<>,
    reclaim::nbr<reclaim::scan_threshold<64>>, reclaim::nbr_plus<reclaim::scan_threshold<64>>,
    reclaim::nbr<reclaim::scan_threshold<64>, reclaim::amortized_free<1>>, reclaim::stamp_it<>,
    reclaim::stamp_it<reclaim::amortized_free<1>>, reclaim::lfrc<>, RECLAIM_TEST_HP_FAMILY,
    RECLAIM_TEST_ERA_AND_BATCH_SCHEMES>;

// The containers as the lab runs them, int64 sets, as templates of the scheme alone (what the
// typed suites take as template template arguments). The suite calls the hash set hm_hashmap, as
// the lab does.
template <class S>
using lazy_list = reclaim::ds::lazy_list<std::int64_t, S>;
template <class S>
using hm_list = reclaim::ds::hm_list<std::int64_t, S>;
template <class S>
using hm_list_restart = reclaim::ds::hm_list_restart<std::int64_t, S>;
template <class S>
using hm_hashmap = reclaim::ds::hm_hashset<std::int64_t, S>;
template <class S>
using hm_hashmap_restart = reclaim::ds::hm_hashset_restart<std::int64_t, S>;
template <class S>
using harris_list = reclaim::ds::harris_list<std::int64_t, S>;
template <class S>
using dgt_bst = reclaim::ds::dgt_bst<std::int64_t, S>;
template <class S>
using guarded_hm_list = reclaim::ds::guarded_hm_list<std::int64_t, S>;
// lazy_skiplist protects a predecessor per level, more nodes at once than hp<> and nbr<> hold: it
// runs under the same schemes sized for it (reclaim::sized_for), as in the lab.
template <class S>
using lazy_skiplist = reclaim::ds::lazy_skiplist<
    std::int64_t, reclaim::sized_for<S, reclaim::ds::lazy_skiplist<std::int64_t, reclaim::none>>>;
template <class S>
using cuckoo_map = reclaim::ds::cuckoo_set<std::int64_t, S>;  // the set form, the lab's name
template <class S>
using abtree = reclaim::ds::abtree<std::int64_t, S>;
template <class S>
using occ_avl = reclaim::ds::occ_avl<std::int64_t, S>;
template <class S>
using nm_bst = reclaim::ds::nm_bst<std::int64_t, S>;

// Applies every deferred decrement of rc_ptr.hpp: a scheme's deleter may retire its block again,
// so one barrier may not be enough.
template <class S>
void settle_rc(typename S::domain& d) {
  for (int i = 0; i < 100; ++i) {
    d.barrier();
    if (d.stats().pending == 0) return;
  }
  ADD_FAILURE() << "garbage left after 100 barriers: " << d.stats().pending;
}

inline constexpr bool sanitized = RECLAIM_TEST_SANITIZED != 0;
inline constexpr bool tsan = RECLAIM_TEST_TSAN != 0;

inline long env_long(const char* name, long fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  return (end && *end == '\0' && n > 0) ? n : fallback;
}

// How long each timed stress test runs. RECLAIM_STRESS_MS overrides (e.g. for a long soak). 200 ms
// under the sanitizers keeps `make test` within its 30 minutes on 2 cores.
inline std::chrono::milliseconds stress_time() {
  return std::chrono::milliseconds(env_long("RECLAIM_STRESS_MS", sanitized ? 200 : 500));
}

// Operation counts for counted loops: full size in plain builds, smaller under sanitizers, which run
// the same code several times slower. RECLAIM_TEST_SCALE (percent) scales them further.
inline long scaled(long n) {
  long percent = env_long("RECLAIM_TEST_SCALE", 100);
  long divisor = tsan ? 4 : sanitized ? 2 : 1;
  long r = n * percent / 100 / divisor;
  return r > 0 ? r : 1;
}

// The longest any "eventually" loop waits before the test fails instead of hanging.
inline constexpr std::chrono::seconds patience{20};

// Calls step() until it returns true or `patience` runs out; returns whether it succeeded.
template <class Step>
bool eventually(Step step) {
  auto deadline = std::chrono::steady_clock::now() + patience;
  while (std::chrono::steady_clock::now() < deadline)
    if (step()) return true;
  return false;
}

// A node that counts its destruction in an external counter. Tests read only the counter, never a
// node that may have been freed (debug builds poison freed nodes). Declare the counter before the
// domain: a domain frees what is left when it is destroyed, and that must not outlive the counter.
template <class Scheme>
struct tracked : Scheme::node_base {
  explicit tracked(std::atomic<long>& counter, long value = 0) : destroyed(&counter), payload(value) {}
  ~tracked() { destroyed->fetch_add(1, std::memory_order_relaxed); }
  tracked(const tracked&) = delete;
  tracked& operator=(const tracked&) = delete;

  std::atomic<long>* destroyed;
  long payload;
};

// One operation that retires one fresh node: the unit of "work" that drives a scheme's machinery
// (bag rotation, epoch checks, scans).
template <class Scheme>
void retire_one(typename Scheme::domain& domain, std::atomic<long>& destroyed) {
  typename Scheme::guard g(domain);
  g.retire(new tracked<Scheme>(destroyed));
}

template <class Scheme>
void retire_many(typename Scheme::domain& domain, std::atomic<long>& destroyed, long n) {
  for (long i = 0; i < n; ++i) retire_one<Scheme>(domain, destroyed);
}

// A deleter that makes its thread's first use of another domain of the scheme, and builds, uses
// and destroys a third: what a deleter running at thread exit (hp's last scan, an amortized
// policy's drain) may do without deadlocking. Set `other` before retiring with it.
template <class Scheme>
struct other_domains {
  static inline typename Scheme::domain* other = nullptr;
  static inline std::atomic<long> deleter_runs{0};
};
template <class Scheme>
void deleter_using_other_domains(tracked<Scheme>* node) {
  {
    typename Scheme::guard g(*other_domains<Scheme>::other);
  }
  {
    typename Scheme::domain scratch;
    typename Scheme::guard g(scratch);
  }
  other_domains<Scheme>::deleter_runs.fetch_add(1);
  delete node;
}

// The garbage a scheme may rightly hold while one thread keeps running operations: what waits for
// its next scan or signal round, or the last three epochs of that thread's retires.
template <class Scheme>
std::uint64_t resting_garbage(const typename Scheme::domain& domain) {
  const std::uint64_t records = domain.stats().records;
  if constexpr (Scheme::family == reclaim::family::pointer)
    return domain.scan_threshold() + Scheme::slot_count * records;
  else if constexpr (Scheme::family == reclaim::family::neutralization)
    return Scheme::threshold + Scheme::reservation_count * records;
  else
    return 512;
}

// Work a thread leaves to a thread_local object's destructor: at_thread_exit<Tag>() builds the
// object on the thread's first call (so call it before the thread's first operation to test the
// order of destruction) and runs what was set in `run` when the thread exits. A function-local
// thread_local: GCC registers no destructor for a constant-initialized thread_local template.
struct thread_exit_work {
  std::function<void()> run;
  ~thread_exit_work() {
    if (run) run();
  }
};
template <class Tag>
thread_exit_work& at_thread_exit() {
  thread_local thread_exit_work work;
  return work;
}

// An operation that retires nothing.
template <class Scheme>
void empty_operation(typename Scheme::domain& domain) {
  typename Scheme::guard g(domain);
}

// A small deterministic generator (xorshift64*), cheaper than <random> engines under TSan.
class rng {
 public:
  explicit rng(std::uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ull + 1) {}
  std::uint64_t next() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return state_ * 0x2545F4914F6CDD1Dull;
  }
  // Uniform enough in [0, n) for tests.
  std::uint64_t below(std::uint64_t n) { return next() % n; }

 private:
  std::uint64_t state_;
};

}  // namespace reclaim_test

namespace reclaim_test {

// A one-shot signal between threads: wait() returns once open() was called (release/acquire, so
// what the opener did before happens before what the waiter does after).
class gate {
 public:
  void open() {
    opened_.store(true, std::memory_order_release);
    opened_.notify_all();
  }
  void wait() const {
#if RECLAIM_TEST_TSAN
    // ThreadSanitizer runs a signal's handler only once the thread leaves a blocking call it
    // intercepts; std::atomic::wait is a raw futex system call, which it does not, so a thread
    // waiting here would never answer hazard_pop's pings and its scanners would wait forever.
    // Sleeping is intercepted.
    while (!opened_.load(std::memory_order_acquire))
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
#else
    while (!opened_.load(std::memory_order_acquire)) opened_.wait(false, std::memory_order_acquire);
#endif
  }
  bool is_open() const { return opened_.load(std::memory_order_acquire); }

 private:
  std::atomic<bool> opened_{false};
};

// `threads` threads insert, erase and look up random keys of [0, keys) in `set` (one third each)
// for `time`; returns the inserts minus the erases that succeeded, which must be its size.
template <class Set>
long random_updates(Set& set, int threads, std::int64_t keys, std::chrono::milliseconds time) {
  std::atomic<bool> stop{false};
  std::atomic<long> net{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      std::uint64_t x = 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(t + 1);
      long mine = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        const auto key = static_cast<std::int64_t>(x % static_cast<std::uint64_t>(keys));
        switch ((x >> 8) % 3) {
          case 0: mine += set.insert(key) ? 1 : 0; break;
          case 1: mine -= set.erase(key) ? 1 : 0; break;
          default: (void)set.contains(key);
        }
      }
      net.fetch_add(mine);
    });
  std::this_thread::sleep_for(time);
  stop = true;
  for (auto& w : workers) w.join();
  return net.load();
}

// Runs `body` in a child process and returns "" if it exited with status 0 within `limit`, or what
// went wrong: a hang (a deadlock) is killed at the deadline and reported, not waited for.
template <class Body>
std::string in_child_process(std::chrono::seconds limit, Body body) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return "fork failed";
  if (pid == 0) {
    body();
    std::_Exit(::testing::Test::HasFailure() ? 1 : 0);
  }
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return "the child hung (deadlock) and was killed after " + std::to_string(limit.count()) +
             " s";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  if (WIFSIGNALED(status))
    return "the child was killed by signal " + std::to_string(WTERMSIG(status));
  return "the child exited with status " + std::to_string(WEXITSTATUS(status));
}

}  // namespace reclaim_test
