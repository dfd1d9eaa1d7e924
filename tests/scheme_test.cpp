// SPDX-License-Identifier: MIT
// The promises every reclamation scheme makes, checked for each scheme by typed tests: add a scheme
// to the lists below and it runs the whole suite.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "suite_support.hpp"
#include "test_support.hpp"

namespace {

using namespace reclaim_test;
using reclaim::debra;
using reclaim::ebr;
using reclaim::hp;
using reclaim::ner;
using reclaim::none;
using reclaim::qsbr;
using reclaim::rcu;
using reclaim::token_af;
using reclaim::token_naive;
using reclaim::token_pass_first;
using reclaim::token_periodic;

RECLAIM_TYPED_SUITE(every_scheme, all_schemes);

RECLAIM_TYPED_SUITE(reclaiming_scheme, reclaiming_schemes);

// The counter that shows a scheme's reclamation machinery at work: scans for pointer schemes (and
// epoch advances: epoch_pop scans only when its epoch is stuck), epoch advances for epoch schemes,
// reclamation passes for neutralization.
template <class S>
std::uint64_t progress_of(const reclaim::stats& s) {
  if constexpr (S::family == reclaim::family::pointer || S::family == reclaim::family::era)
    return s.scans + s.epochs;
  else if constexpr (S::family == reclaim::family::neutralization)
    return s.scans;
  else if constexpr (S::family == reclaim::family::epoch)
    return s.epochs;
  else if constexpr (S::family == reclaim::family::reference_counting)
    return s.freed;  // no machinery: a node goes with its last reference
  else
    return 0;
}

// rcu moves its epoch and scans only on retires (every N and M of them), nbr only when a bag is
// full, epoch_pop tries to advance its epoch only from retires (and scans only when that fails):
// operations that retire nothing make them free nothing, and the retires that drive them leave
// their own garbage pending.
template <class S>
constexpr bool reclaims_only_on_retires = [] {
  if constexpr (S::name == "epoch_pop") return true;
  return requires { S::empty_frequency; } || S::family == reclaim::family::neutralization;
}();

// An amortized free policy frees K proven-safe nodes per operation: while a thread retires K nodes
// per operation, a batch always waits on its freeable list and freed never catches up with retired.
template <class S>
constexpr bool frees_amortized = [] {
  if constexpr (requires { typename S::free_policy; })
    return !std::is_same_v<typename S::free_policy, reclaim::batch_free>;
  else
    return false;
}();

// Schemes whose protector frees the victim as its protection ends: under stamp_it the thread that
// leaves the pool last frees what the others handed over; under lfrc a node goes with its last
// reference.
template <class S>
constexpr bool frees_as_protection_ends =
    requires { S::handover_threshold; } || S::family == reclaim::family::reference_counting;

// One step of work by a live thread that lets the scheme reclaim: an epoch scheme needs operations
// (it frees when it sees the epoch move), a pointer scheme or rcu needs retires (it frees when it
// scans).
template <class S>
void make_progress(typename S::domain& domain, std::atomic<long>& fillers_destroyed) {
  if constexpr (S::family == reclaim::family::pointer || S::family == reclaim::family::era ||
                reclaims_only_on_retires<S>)
    retire_one<S>(domain, fillers_destroyed);
  else
    empty_operation<S>(domain);
}

// Enough retires to force several scans or epoch attempts.
template <class S>
long churn_count() {
  return std::max<long>(scaled(4000), 2000);
}

// A thread that protects a node (the victim) the way the scheme requires: it holds a guard started
// before the victim is retired and, for pointer schemes, the victim in hazard slot `slot`. It keeps
// the protection until told to release, reads the victim once more, ends its guard and then stays
// alive (its record in use) until told to exit, so that what frees the victim is the guard's end,
// not the thread's exit.
template <class S>
class protector {
 public:
  // victim_destroyed must outlive the domain: the domain may be what frees the victim.
  protector(typename S::domain& domain, std::atomic<long>& victim_destroyed, bool nested,
            unsigned slot = 0)
      : victim_destroyed(victim_destroyed), domain_(domain),
        shared_(new tracked<S>(victim_destroyed, 42)) {
    thread_ = std::thread([this, nested, slot] { run(nested, slot); });
    protecting_.wait();
  }
  ~protector() {
    may_release_.open();
    may_exit_.open();
    if (thread_.joinable()) thread_.join();
  }

  // On the calling thread: unlink the victim from where the protector read it, and retire it.
  void unlink_and_retire() {
    typename S::guard g(domain_);
    tracked<S>* victim = shared_.exchange(nullptr, std::memory_order_acq_rel);
    g.retire(victim);
  }
  void release() {
    may_release_.open();
    released_.wait();
  }
  void exit() {
    may_exit_.open();
    thread_.join();
  }
  bool read_intact_victim() const { return intact_.load(); }

  std::atomic<long>& victim_destroyed;

 private:
  void run(bool nested, unsigned slot) {
    {
      typename S::guard g(domain_);
      RECLAIM_READ_PHASE(g);
      tracked<S>* p = g.protect(shared_, slot);
      g.write_phase(p);  // nbr: the reservation is the protection; a no-op for the others
      if (nested) {
        // An inner guard on the same thread protects another node (in another slot) and ends;
        // the outer guard's protection must survive that.
        typename S::guard inner(domain_);
        tracked<S>* b = inner.protect(bystander_, slot + 1);
        bystander_ok_ = b != nullptr && b->payload == 7;
      }
      protecting_.open();
      may_release_.wait();
      intact_ = p != nullptr && p->payload == 42 && (!nested || bystander_ok_);
    }
    // qsbr: a live thread that runs no operations holds the epoch back (documented); one that
    // idles says so, as its users must.
    if constexpr (requires { domain_.thread_offline(); }) domain_.thread_offline();
    released_.open();
    may_exit_.wait();
  }

  typename S::domain& domain_;
  std::atomic<tracked<S>*> shared_;
  std::atomic<long> bystander_destroyed_{0};
  std::unique_ptr<tracked<S>> bystander_owner_ = std::make_unique<tracked<S>>(bystander_destroyed_, 7);
  std::atomic<tracked<S>*> bystander_{bystander_owner_.get()};
  bool bystander_ok_ = false;
  std::atomic<bool> intact_{false};
  gate protecting_, may_release_, released_, may_exit_;
  std::thread thread_;
};

// ---------------------------------------------------------------------------------------------
// 1 and 6: protection

// The start of the protection checks: a victim that a protector holds is unlinked and retired,
// then enough fillers to have freed it were it unprotected. The protector ends first, then the
// domain (which may free the victim), then the counters.
template <class S>
struct retired_while_protected {
  std::atomic<long> victim_destroyed{0}, fillers{0};
  typename S::domain domain;
  protector<S> p;

  explicit retired_while_protected(bool nested) : p(domain, victim_destroyed, nested) {
    p.unlink_and_retire();
    retire_many<S>(domain, fillers, churn_count<S>());
  }
};

template <class S>
void check_survives_while_protected(bool nested) {
  retired_while_protected<S> r(nested);
  auto& [victim_destroyed, fillers, domain, p] = r;
  EXPECT_EQ(p.victim_destroyed.load(), 0) << "freed while a thread still protected it";
  if constexpr (S::family == reclaim::family::pointer) {
    // The churn did run scans, and they freed the unprotected nodes: only the victim was kept.
    EXPECT_GT(domain.stats().scans, 0u);
    EXPECT_GT(fillers.load(), 0);
  }
  p.release();
  EXPECT_TRUE(p.read_intact_victim()) << "the protector saw a damaged node";
  // Under stamp_it the protector, the oldest thread inside, is the last one out, and frees on its
  // way out what the others handed over, the victim with the fillers; under lfrc its release was
  // the victim's last reference.
  if constexpr (!frees_as_protection_ends<S>) {
    EXPECT_EQ(p.victim_destroyed.load(), 0);
  }
  p.exit();
}

template <class S>
void check_freed_once_protection_ends(bool nested) {
  retired_while_protected<S> r(nested);
  auto& [victim_destroyed, fillers, domain, p] = r;
  ASSERT_EQ(p.victim_destroyed.load(), 0);
  p.release();
  // The protector's thread is still alive (its record in use); only its guard ended.
  bool freed = eventually([&] {
    for (int i = 0; i < 64; ++i) retire_one<S>(domain, fillers);
    return p.victim_destroyed.load() == 1;
  });
  EXPECT_TRUE(freed) << "the victim was never freed after its protection ended";
  EXPECT_TRUE(p.read_intact_victim());
  p.exit();
  EXPECT_EQ(p.victim_destroyed.load(), 1);
}

TYPED_TEST(reclaiming_scheme, retired_node_survives_while_protected) {
  check_survives_while_protected<TypeParam>(false);
}

TYPED_TEST(reclaiming_scheme, retired_node_is_freed_once_protection_ends) {
  check_freed_once_protection_ends<TypeParam>(false);
}

TYPED_TEST(reclaiming_scheme, nested_guard_ending_keeps_outer_protection) {
  check_survives_while_protected<TypeParam>(true);
}

TYPED_TEST(reclaiming_scheme, nested_guards_release_at_outermost_end) {
  check_freed_once_protection_ends<TypeParam>(true);
}

// ---------------------------------------------------------------------------------------------
// 2: everything retired is freed

TYPED_TEST(every_scheme, everything_retired_is_freed_by_domain_destruction) {
  using S = TypeParam;
  std::atomic<long> destroyed{0};
  constexpr int thread_count = 4;
  const long per_thread = scaled(5000);
  auto domain = std::make_unique<typename S::domain>();
  std::vector<std::thread> threads;
  for (int t = 0; t < thread_count; ++t)
    threads.emplace_back([&] { retire_many<S>(*domain, destroyed, per_thread); });
  for (auto& t : threads) t.join();
  auto s = domain->stats();
  EXPECT_EQ(s.retired, static_cast<std::uint64_t>(thread_count * per_thread));
  EXPECT_EQ(s.freed, static_cast<std::uint64_t>(destroyed.load()));
  domain.reset();
  EXPECT_EQ(destroyed.load(), thread_count * per_thread);
}

// For hazard pointers the bound holds whatever the threads do, so two workers run. For an epoch
// scheme it holds only while no thread is held up inside an operation, and with two workers one of
// them may be preempted there at any time (the stall test below pins that down): one worker runs,
// so that the bound is deterministic.
TYPED_TEST(reclaiming_scheme, operations_keep_pending_bounded_and_freed_growing) {
  using S = TypeParam;
  std::atomic<long> destroyed{0};
  typename S::domain domain;
  std::atomic<bool> stop{false};
  constexpr int workers = S::family == reclaim::family::pointer ? 2 : 1;
  std::vector<std::thread> threads;
  for (int t = 0; t < workers; ++t)
    threads.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) retire_one<S>(domain, destroyed);
    });
  std::uint64_t max_pending = 0;
  std::vector<std::uint64_t> freed_while_running;
  auto end = std::chrono::steady_clock::now() + stress_time();
  while (std::chrono::steady_clock::now() < end) {
    auto s = domain.stats();  // stats() does not register the sampling thread
    max_pending = std::max(max_pending, s.pending);
    freed_while_running.push_back(s.freed);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // The claim is that freeing goes on while operations run, not that it does within a given
  // stretch of wall time: a worker preempted for the second half of a short run (a sanitizer on a
  // loaded 2-core machine) frees nothing then. So the run goes on until it frees again, for up to
  // 10 s.
  const std::uint64_t freed_at_half = freed_while_running[freed_while_running.size() / 2];
  for (auto patience = std::chrono::steady_clock::now() + std::chrono::seconds(10);
       freed_while_running.back() <= freed_at_half && std::chrono::steady_clock::now() < patience;
       std::this_thread::sleep_for(std::chrono::milliseconds(1))) {
    auto s = domain.stats();
    max_pending = std::max(max_pending, s.pending);
    freed_while_running.push_back(s.freed);
  }
  stop = true;
  for (auto& t : threads) t.join();
  auto s = domain.stats();
  ASSERT_GE(freed_while_running.size(), 4u);
  EXPECT_GT(freed_at_half, 0u);
  EXPECT_GT(freed_while_running.back(), freed_at_half)
      << "nothing was freed in the second half of the run, nor in 10 s more";
  EXPECT_GT(s.freed, 0u);
  if constexpr (S::family == reclaim::family::pointer) {
    // Each thread holds at most R retired nodes before it scans, plus the nodes protected then.
    const std::uint64_t bound = workers * (domain.scan_threshold() + S::slot_count * workers);
    EXPECT_LE(max_pending, bound);
  } else if constexpr (S::family == reclaim::family::neutralization) {
    // nbr, one thread that reserves nothing: a round empties the bag whenever it is full.
    EXPECT_LE(max_pending, S::threshold);
  } else if constexpr (requires { S::check_interval; }) {
    // DEBRA, one thread: the epoch advances every K operations and each of the three bags holds
    // the retires of one epoch.
    const std::uint64_t bound = 3 * (S::check_interval + 1);
    EXPECT_LE(max_pending, bound) << "retired " << s.retired;
  } else {
    EXPECT_LT(max_pending, s.retired / 4) << "retired " << s.retired;
  }
}

// ---------------------------------------------------------------------------------------------
// 3: stats

TYPED_TEST(every_scheme, stats_count_retires_and_frees) {
  using S = TypeParam;
  std::atomic<long> destroyed{0};
  typename S::domain domain;
  EXPECT_EQ(domain.stats().retired, 0u);
  const long n = churn_count<S>();
  retire_many<S>(domain, destroyed, n);
  auto s = domain.stats();
  EXPECT_EQ(s.retired, static_cast<std::uint64_t>(n));
  EXPECT_LE(s.freed, s.retired);
  EXPECT_EQ(s.freed, static_cast<std::uint64_t>(destroyed.load())) << "freed must count destructions";
  EXPECT_EQ(s.pending, s.retired - s.freed);
  EXPECT_GE(s.pending_peak, s.pending);
  EXPECT_EQ(s.threads, 1u);
  EXPECT_EQ(s.signals, 0u);
  if constexpr (S::family == reclaim::family::none) {
    EXPECT_EQ(s.freed, 0u);
    EXPECT_EQ(s.pending_peak, static_cast<std::uint64_t>(n));
  } else {
    EXPECT_GT(progress_of<S>(s), 0u) << "no scan or epoch advance after " << n << " retires";
    EXPECT_GT(s.freed, 0u);
  }
}

TYPED_TEST(every_scheme, stats_sum_over_threads) {
  using S = TypeParam;
  std::atomic<long> destroyed{0};
  typename S::domain domain;
  constexpr int thread_count = 4;
  const long per_thread = scaled(2000);
  std::atomic<int> done{0};
  gate may_exit;
  retire_one<S>(domain, destroyed);  // main registers too
  std::vector<std::thread> threads;
  for (int t = 0; t < thread_count; ++t)
    threads.emplace_back([&] {
      retire_many<S>(domain, destroyed, per_thread);
      done.fetch_add(1);
      may_exit.wait();
    });
  while (done.load() < thread_count) std::this_thread::yield();
  auto s = domain.stats();
  EXPECT_EQ(s.threads, static_cast<std::uint64_t>(thread_count + 1));
  EXPECT_EQ(s.retired, static_cast<std::uint64_t>(thread_count * per_thread + 1));
  EXPECT_EQ(s.pending, s.retired - s.freed);
  may_exit.open();
  for (auto& t : threads) t.join();
  s = domain.stats();
  EXPECT_EQ(s.threads, 1u);
  EXPECT_EQ(s.retired, static_cast<std::uint64_t>(thread_count * per_thread + 1));
  EXPECT_LE(s.freed, s.retired);
  EXPECT_EQ(s.freed, static_cast<std::uint64_t>(destroyed.load()));
  EXPECT_EQ(s.pending, s.retired - s.freed);
  EXPECT_GE(s.pending_peak, s.pending);
}

// ---------------------------------------------------------------------------------------------
// 4: garbage of exited threads

TYPED_TEST(reclaiming_scheme, garbage_of_an_exited_thread_is_freed_by_live_threads) {
  using S = TypeParam;
  std::atomic<long> victim_destroyed{0}, others_destroyed{0}, fillers{0};
  typename S::domain domain;
  // A protector keeps the victim alive while its retiring thread exits, so that the thread cannot
  // free it on its way out (whatever it does at exit): the victim must be handed over.
  protector<S> p(domain, victim_destroyed, false);
  const long others = 49;  // with the victim, below hp's scan threshold
  std::thread([&] {
    p.unlink_and_retire();
    retire_many<S>(domain, others_destroyed, others);
  }).join();
  auto s = domain.stats();
  EXPECT_EQ(s.retired, static_cast<std::uint64_t>(others + 1));
  EXPECT_EQ(s.threads, 1u) << "only the protector's record is still in use";
  EXPECT_GT(s.pending, 0u);
  EXPECT_EQ(p.victim_destroyed.load(), 0);
  p.release();  // the protector's thread stays alive; only its guard ends

  // A live thread that keeps running operations frees the handed-over garbage before the domain
  // dies.
  std::thread live([&] {
    bool all = eventually([&] {
      make_progress<S>(domain, fillers);
      auto now = domain.stats();
      if constexpr (reclaims_only_on_retires<S> || frees_amortized<S>)
        return p.victim_destroyed.load() == 1 && others_destroyed.load() == others;
      else
        return p.victim_destroyed.load() == 1 && now.freed == now.retired;
    });
    EXPECT_TRUE(all) << "garbage of the exited thread was not adopted: victim freed "
                     << p.victim_destroyed.load() << ", others freed " << others_destroyed.load()
                     << " of " << others;
  });
  live.join();
  s = domain.stats();
  EXPECT_EQ(others_destroyed.load(), others);
  if constexpr (!reclaims_only_on_retires<S>) {
    EXPECT_EQ(s.pending, 0u);
    EXPECT_EQ(s.freed, s.retired);
  }
  p.exit();
}

// ---------------------------------------------------------------------------------------------
// 5 and 9: the thread registry seen through a scheme

TYPED_TEST(every_scheme, registers_a_thread_on_first_use_and_releases_it_on_exit) {
  using S = TypeParam;
  std::atomic<long> destroyed{0};
  typename S::domain domain;
  EXPECT_EQ(domain.stats().threads, 0u) << "stats() must not register the caller";
  retire_one<S>(domain, destroyed);
  EXPECT_EQ(domain.stats().threads, 1u);
  retire_one<S>(domain, destroyed);
  EXPECT_EQ(domain.stats().threads, 1u) << "a second use must not register again";

  gate used, may_exit;
  std::thread other([&] {
    retire_one<S>(domain, destroyed);
    used.open();
    may_exit.wait();
  });
  used.wait();
  EXPECT_EQ(domain.stats().threads, 2u);
  may_exit.open();
  other.join();
  EXPECT_EQ(domain.stats().threads, 1u) << "an exited thread's record is still in use";
  EXPECT_EQ(domain.stats().retired, 3u);
}

TYPED_TEST(every_scheme, exited_threads_release_their_records) {
  using S = TypeParam;
  std::atomic<long> destroyed{0};
  typename S::domain domain;
  constexpr int rounds = 50;
  for (int i = 0; i < rounds; ++i) {
    std::thread([&] { retire_many<S>(domain, destroyed, 3); }).join();
    ASSERT_EQ(domain.stats().threads, 0u) << "after thread " << i;
  }
  auto s = domain.stats();
  EXPECT_EQ(s.retired, 3u * rounds);
  EXPECT_EQ(s.freed, static_cast<std::uint64_t>(destroyed.load()));
}

TYPED_TEST(every_scheme, domain_may_be_destroyed_before_a_thread_that_used_it_exits) {
  using S = TypeParam;
  std::atomic<long> destroyed{0};
  auto first = std::make_unique<typename S::domain>();
  std::unique_ptr<typename S::domain> second;
  gate used_first, first_gone, used_second, may_exit;
  std::uint64_t threads_on_second = 0;
  std::thread user([&] {
    retire_one<S>(*first, destroyed);
    used_first.open();
    first_gone.wait();
    // A domain made after the first died (quite possibly at the same address) is a new domain:
    // this thread registers there afresh.
    retire_one<S>(*second, destroyed);
    threads_on_second = second->stats().threads;
    used_second.open();
    may_exit.wait();
  });
  used_first.wait();
  first.reset();
  EXPECT_EQ(destroyed.load(), 1) << "the first domain must free its garbage when destroyed";
  second = std::make_unique<typename S::domain>();
  first_gone.open();
  used_second.wait();
  EXPECT_EQ(threads_on_second, 1u);
  may_exit.open();
  user.join();  // exits after the first domain died: must not touch it
  EXPECT_EQ(second->stats().threads, 0u);
  EXPECT_EQ(second->stats().retired, 1u);
  second.reset();
  EXPECT_EQ(destroyed.load(), 2);
}

TYPED_TEST(every_scheme, a_thread_alternating_between_domains_keeps_one_record_in_each) {
  using S = TypeParam;
  std::atomic<long> destroyed{0};
  typename S::domain first, second;
  gate done, may_exit;
  std::thread user([&] {
    for (int i = 0; i < 100; ++i) {
      retire_one<S>(first, destroyed);
      retire_one<S>(second, destroyed);
    }
    done.open();
    may_exit.wait();
  });
  done.wait();
  for (auto* d : {&first, &second}) {
    EXPECT_EQ(d->stats().threads, 1u);
    EXPECT_EQ(d->stats().retired, 100u);
    if constexpr (requires { d->scan_threshold(); }) {
      EXPECT_EQ(d->scan_threshold(), 100u + 2u * S::slot_count) << "more than one record per domain";
    }
  }
  may_exit.open();
  user.join();
  EXPECT_EQ(first.stats().threads, 0u);
  EXPECT_EQ(second.stats().threads, 0u);
}

// A thread's exit and its domain's destruction may happen at the same time: either the thread hands
// its garbage over first, or it finds the domain closed and leaves it alone.
TYPED_TEST(every_scheme, a_thread_may_exit_while_its_domain_is_destroyed) {
  using S = TypeParam;
  std::atomic<long> destroyed{0};
  const int rounds = static_cast<int>(scaled(40));
  for (int i = 0; i < rounds; ++i) {
    auto domain = std::make_unique<typename S::domain>();
    gate used, go;
    std::thread user([&] {
      retire_one<S>(*domain, destroyed);
      used.open();
      go.wait();
    });
    used.wait();
    go.open();
    domain.reset();  // races with the user's exit
    user.join();
  }
  EXPECT_EQ(destroyed.load(), rounds);
}

// One long-lived thread using many short-lived domains, one after another.
TYPED_TEST(every_scheme, a_thread_may_use_many_short_lived_domains) {
  using S = TypeParam;
  std::atomic<long> destroyed{0};
  constexpr int domains = 100;
  for (int i = 0; i < domains; ++i) {
    typename S::domain domain;
    retire_one<S>(domain, destroyed);
    retire_one<S>(domain, destroyed);
    EXPECT_EQ(domain.stats().threads, 1u);
    EXPECT_EQ(domain.stats().retired, 2u);
  }
  EXPECT_EQ(destroyed.load(), 2 * domains);
}

// ---------------------------------------------------------------------------------------------
// 8: custom deleter

template <class S>
struct deleter_calls {
  static inline std::atomic<int> count{0};
};

template <class S>
void counting_deleter(tracked<S>* node) {
  deleter_calls<S>::count.fetch_add(1);
  delete node;
}

TYPED_TEST(every_scheme, custom_deleter_runs_exactly_once) {
  using S = TypeParam;
  deleter_calls<S>::count = 0;
  std::atomic<long> destroyed{0}, fillers{0};
  {
    typename S::domain domain;
    {
      typename S::guard g(domain);
      g.template retire<&counting_deleter<S>>(new tracked<S>(destroyed));
    }
    if constexpr (S::family != reclaim::family::none) {
      bool freed = eventually([&] {
        for (int i = 0; i < 64; ++i) retire_one<S>(domain, fillers);
        return deleter_calls<S>::count.load() > 0;
      });
      EXPECT_TRUE(freed);
      EXPECT_EQ(deleter_calls<S>::count.load(), 1);
    } else {
      EXPECT_EQ(deleter_calls<S>::count.load(), 0);
    }
  }
  EXPECT_EQ(deleter_calls<S>::count.load(), 1);
  EXPECT_EQ(destroyed.load(), 1);
}

// ---------------------------------------------------------------------------------------------
// Scheme-specific promises

TEST(none_scheme, frees_nothing_until_the_domain_is_destroyed) {
  std::atomic<long> destroyed{0};
  const long n = scaled(5000);
  {
    none::domain domain;
    std::thread([&] { retire_many<none>(domain, destroyed, n); }).join();
    retire_many<none>(domain, destroyed, n);
    auto s = domain.stats();
    EXPECT_EQ(destroyed.load(), 0);
    EXPECT_EQ(s.freed, 0u);
    EXPECT_EQ(s.pending, static_cast<std::uint64_t>(2 * n));
    EXPECT_EQ(s.epochs + s.scans, 0u);
  }
  EXPECT_EQ(destroyed.load(), 2 * n);
}

// 7: hazard pointers bound garbage whatever other threads do.
TEST(hp_scheme, garbage_stays_bounded_while_a_thread_holds_protections_forever) {
  using S = hp<>;
  std::atomic<long> victims_destroyed{0}, fillers{0};
  S::domain domain;
  std::atomic<tracked<S>*> shared[S::slot_count];
  for (auto& s : shared) s = new tracked<S>(victims_destroyed, 1);
  gate protecting, may_release, released;
  std::thread holder([&] {
    {
      S::guard g(domain);
      for (unsigned i = 0; i < S::slot_count; ++i) g.protect(shared[i], i);
      protecting.open();
      may_release.wait();
    }
    released.open();
  });
  protecting.wait();
  {
    S::guard g(domain);
    for (auto& s : shared) g.retire(s.exchange(nullptr));
  }
  const std::uint64_t threshold = domain.scan_threshold();
  const std::uint64_t hazards = S::slot_count * 2;  // two records
  std::uint64_t max_pending = 0;
  const long n = 20 * static_cast<long>(threshold);
  for (long i = 0; i < n; ++i) {
    retire_one<S>(domain, fillers);
    max_pending = std::max(max_pending, domain.stats().pending);
  }
  auto s = domain.stats();
  EXPECT_LT(max_pending, threshold + hazards) << "threshold " << threshold;
  EXPECT_LE(s.pending_peak, threshold + hazards);
  EXPECT_GE(s.pending_peak + reclaim::core::pending_gauge::flush_interval, threshold)
      << "pending_peak misses the garbage held just before a scan";
  EXPECT_GE(s.scans, static_cast<std::uint64_t>(n) / threshold - 1);
  EXPECT_EQ(victims_destroyed.load(), 0);
  may_release.open();
  released.wait();
  bool freed = eventually([&] {
    retire_one<S>(domain, fillers);
    return victims_destroyed.load() == static_cast<long>(S::slot_count);
  });
  EXPECT_TRUE(freed);
  holder.join();
}

// 5: a record per thread at a time, not per thread ever; with hp the scan threshold shows it.
TEST(hp_scheme, sequential_threads_reuse_one_record) {
  using S = hp<>;
  std::atomic<long> destroyed{0};
  S::domain domain;
  for (int i = 0; i < 50; ++i) {
    std::thread([&] { retire_many<S>(domain, destroyed, 3); }).join();
    ASSERT_EQ(domain.stats().threads, 0u);
  }
  // R = 100 + 2 x slots x records: one record was created and reused by all 50 threads.
  EXPECT_EQ(domain.scan_threshold(), 100u + 2u * S::slot_count);
}

// Records are created for the peak number of threads alive at once, then reused.
TEST(hp_scheme, records_grow_only_to_the_peak_number_of_concurrent_threads) {
  using S = hp<>;
  std::atomic<long> destroyed{0};
  S::domain domain;
  constexpr int wave = 8;
  for (int round = 0; round < 4; ++round) {
    std::atomic<int> arrived{0};
    gate may_exit;
    std::vector<std::thread> threads;
    for (int t = 0; t < wave; ++t)
      threads.emplace_back([&] {
        retire_one<S>(domain, destroyed);
        arrived.fetch_add(1);
        may_exit.wait();
      });
    while (arrived.load() < wave) std::this_thread::yield();
    EXPECT_EQ(domain.stats().threads, static_cast<std::uint64_t>(wave));
    may_exit.open();
    for (auto& t : threads) t.join();
    EXPECT_EQ(domain.stats().threads, 0u);
    EXPECT_EQ(domain.scan_threshold(), 100u + 2u * S::slot_count * wave) << "round " << round;
  }
}

// hp's bound while threads come and go, and while a thread stalls: tests/hp_family_test.cpp, over
// every member of the family.

// A node read under a hazard may be freed once the hazard moves on to another node; the reads made
// under it must happen before that free. Only the slot carries that order from the reader to the
// reclaimer (the reader and the reclaimer synchronize through nothing else here), so the store that
// moves the hazard must be a release, as the store that clears it in end() is. A relaxed store is a
// data race in the C++ memory model (and a real one on ARM or POWER, where the earlier load may be
// satisfied after the new hazard is visible); ThreadSanitizer reports it.
TEST(hp_scheme, moving_a_hazard_orders_earlier_reads_before_the_free) {
  using S = hp<>;
  std::atomic<long> a_destroyed{0}, b_destroyed{0}, fillers{0};
  S::domain domain;
  auto* a = new tracked<S>(a_destroyed, 1);
  auto* b = new tracked<S>(b_destroyed, 2);
  std::atomic<tracked<S>*> src_a{a}, src_b{b};
  std::atomic<bool> moved{false};  // relaxed on purpose: it must not synchronize
  std::atomic<long> seen{0};
  gate may_exit;
  std::thread reader([&] {
    S::guard g(domain);
    tracked<S>* p = g.protect(src_a, 0);
    long v = p->payload;           // a plain read under the hazard
    tracked<S>* q = g.protect(src_b, 0);  // the hazard moves on to b
    seen.store(v + q->payload, std::memory_order_relaxed);
    moved.store(true, std::memory_order_relaxed);
    may_exit.wait();
  });
  while (!moved.load(std::memory_order_relaxed)) std::this_thread::yield();
  {
    S::guard g(domain);
    g.retire(src_a.exchange(nullptr));
  }
  EXPECT_TRUE(eventually([&] {
    retire_one<S>(domain, fillers);
    return a_destroyed.load() == 1;
  }));
  EXPECT_EQ(b_destroyed.load(), 0);
  may_exit.open();
  reader.join();
  EXPECT_EQ(seen.load(), 3);
  delete src_b.load();
}

TEST(hp_scheme, slots_policy_gives_that_many_slots) {
  using S = hp<reclaim::slots<8>>;
  static_assert(S::slot_count == 8 && S::guard::slot_count == 8);
  static_assert(hp<>::slot_count == 4);
  static_assert(std::is_same_v<hp<reclaim::slots<8>, reclaim::batch_free>::free_policy,
                               reclaim::batch_free>);
  std::atomic<long> victims_destroyed{0}, fillers{0};
  S::domain domain;
  std::atomic<tracked<S>*> shared[8];
  for (auto& s : shared) s = new tracked<S>(victims_destroyed, 1);
  gate protecting, may_release;
  std::thread holder([&] {
    S::guard g(domain);
    for (unsigned i = 0; i < 8; ++i) g.protect(shared[i], i);
    protecting.open();
    may_release.wait();
  });
  protecting.wait();
  {
    S::guard g(domain);
    for (auto& s : shared) g.retire(s.exchange(nullptr));
  }
  EXPECT_EQ(domain.scan_threshold(), 100u + 2u * 8u * 2u);
  retire_many<S>(domain, fillers, 10 * static_cast<long>(domain.scan_threshold()));
  EXPECT_EQ(victims_destroyed.load(), 0) << "a node protected in one of the 8 slots was freed";
  EXPECT_GT(fillers.load(), 0);
  may_release.open();
  holder.join();
  EXPECT_TRUE(eventually([&] {
    retire_one<S>(domain, fillers);
    return victims_destroyed.load() == 8;
  }));
}

// 7: the epoch schemes stop reclaiming while a thread stalls inside an operation (as documented):
// the epoch moves at most once past it, and garbage grows with every retire. With
// `pins_the_gauge` (debra's test, which pins that behaviour down) also the pending gauge: its peak
// saw all the garbage, and it is empty once the stalled thread resumed and everything was freed.
template <class S>
void check_garbage_grows_while_a_thread_stalls(bool pins_the_gauge = false) {
  std::atomic<long> destroyed{0};
  typename S::domain domain;
  gate stalled, may_resume;
  std::thread staller([&] {
    typename S::guard g(domain);
    stalled.open();
    may_resume.wait();
  });
  stalled.wait();
  // Token schemes: a token picked up at the stalled thread's entry may complete a round, and its
  // operation announces the round after it; the ring goes round once more, then waits for it.
  const std::uint64_t at_stall = domain.stats().epochs;
  const std::uint64_t most_epochs = requires { S::frees_in_batches; } ? at_stall + 1 : 1;
  const long n = scaled(4000);
  retire_many<S>(domain, destroyed, n);
  auto s1 = domain.stats();
  retire_many<S>(domain, destroyed, n);
  auto s2 = domain.stats();
  if (pins_the_gauge) {
    EXPECT_EQ(s1.freed, 0u);
  }
  EXPECT_EQ(s2.freed, 0u) << "freed while a thread that may hold the nodes is inside an operation";
  EXPECT_EQ(s1.pending, static_cast<std::uint64_t>(n));
  EXPECT_EQ(s2.pending, static_cast<std::uint64_t>(2 * n)) << "garbage grows with every retire";
  EXPECT_LE(s2.epochs, most_epochs) << "the epoch moved past a thread stalled in an older epoch";
  if (pins_the_gauge) {
    EXPECT_GE(s2.pending_peak + reclaim::core::pending_gauge::flush_interval,
              static_cast<std::uint64_t>(2 * n));
  }
  may_resume.open();
  staller.join();
  EXPECT_TRUE(eventually([&] {
    empty_operation<S>(domain);
    return destroyed.load() == 2 * n;
  })) << "garbage was not freed after the stalled thread resumed";
  if (pins_the_gauge) {
    EXPECT_EQ(domain.stats().pending, 0u);
  }
}

TEST(debra_scheme, garbage_grows_while_a_thread_stalls_in_an_operation) {
  check_garbage_grows_while_a_thread_stalls<debra<>>(/*pins_the_gauge=*/true);
}

// Why DEBRA needs three bags: a node retired by a thread that announced epoch e can still be read by
// a thread that began its operation in e+1 (after the epoch moved, before the node was unlinked),
// and that reader lets the epoch reach e+2. The retirer sees two epoch changes, e+1 and e+2; if it
// freed the node then (two bags), the reader would be reading freed memory.
TEST(debra_scheme, node_survives_a_reader_that_began_one_epoch_after_the_retirer) {
  using S = debra<>;
  std::atomic<long> victim_destroyed{0};
  S::domain domain;
  auto epochs = [&] { return domain.stats().epochs; };
  std::atomic<tracked<S>*> shared{new tracked<S>(victim_destroyed, 42)};
  gate retirer_in_op, advanced, reader_in_op, retirer_churned, may_release, released, may_finish;
  std::atomic<bool> reader_saw_intact{false}, freed_in_the_end{false};

  std::thread retirer([&] {
    {
      S::guard g(domain);  // announces epoch e
      retirer_in_op.open();
      reader_in_op.wait();
      g.retire(shared.exchange(nullptr));  // unlinked while the reader holds it
    }
    // Plenty of operations: the retirer sees the epoch move to e+1 and e+2, no further.
    for (int i = 0; i < 2000; ++i) empty_operation<S>(domain);
    retirer_churned.open();
    may_finish.wait();
    freed_in_the_end = eventually([&] {
      empty_operation<S>(domain);
      return victim_destroyed.load() == 1;
    });
  });
  std::thread reader([&] {
    advanced.wait();
    // Its operation announces epoch e+1.
    protect_until_released<S>(domain, shared, reader_in_op, may_release, released,
                              reader_saw_intact);
  });

  retirer_in_op.wait();
  const std::uint64_t e0 = epochs();
  // Move the epoch to e+1 (the retirer announced e, the current one, so that is allowed); it cannot
  // go further while the retirer stays in its operation.
  ASSERT_TRUE(eventually([&] {
    empty_operation<S>(domain);
    return epochs() == e0 + 1;
  }));
  advanced.open();
  retirer_churned.wait();
  EXPECT_EQ(epochs(), e0 + 2) << "the epoch should have moved once past the retirer, then stopped "
                                 "at the reader";
  EXPECT_EQ(victim_destroyed.load(), 0) << "freed after two epoch changes while a reader of e+1 "
                                           "still held it";
  may_release.open();
  released.wait();
  EXPECT_TRUE(reader_saw_intact.load());
  may_finish.open();
  retirer.join();
  reader.join();
  EXPECT_TRUE(freed_in_the_end.load());
}

// 5: DEBRA checks every record, in use or not, before it advances the epoch; with check_every<1>
// one thread advances the epoch once per (records) operations. That it still advances about once
// per operation after 50 threads came and went shows that they all shared one record.
TEST(debra_scheme, sequential_threads_reuse_one_record) {
  using S = debra<reclaim::check_every<1>>;
  S::domain domain;
  for (int i = 0; i < 50; ++i) {
    std::thread([&] {
      for (int k = 0; k < 5; ++k) empty_operation<S>(domain);
    }).join();
    ASSERT_EQ(domain.stats().threads, 0u);
  }
  const std::uint64_t before = domain.stats().epochs;
  constexpr int ops = 200;
  std::thread([&] {
    for (int k = 0; k < ops; ++k) empty_operation<S>(domain);
  }).join();
  const std::uint64_t advances = domain.stats().epochs - before;
  EXPECT_GE(advances, static_cast<std::uint64_t>(ops / 2))
      << "epoch advances need a pass over every record: about " << ops / std::max<std::uint64_t>(advances, 1)
      << " records exist for 1 thread at a time";
}

// The epoch advances a fresh domain of S makes in `ops` operations of one thread that retire nothing.
template <class S>
std::uint64_t epochs_after(int ops) {
  typename S::domain domain;
  for (int i = 0; i < ops; ++i) empty_operation<S>(domain);
  return domain.stats().epochs;
}

TEST(debra_scheme, check_every_policy_sets_the_check_interval) {
  static_assert(debra<>::check_interval == 20);
  static_assert(debra<reclaim::check_every<5>>::check_interval == 5);
  static_assert(debra<reclaim::batch_free, reclaim::check_every<5>>::check_interval == 5);
  static_assert(debra<reclaim::check_every<5>, reclaim::batch_free>::check_interval == 5);
  constexpr int ops = 200;
  // One thread, one record: an advance every K operations.
  EXPECT_GE(epochs_after<debra<reclaim::check_every<5>>>(ops), static_cast<std::uint64_t>(ops / 5 - 1));
  EXPECT_LE(epochs_after<debra<>>(ops), static_cast<std::uint64_t>(ops / 20 + 1));
}

TEST(ebr_scheme, garbage_grows_while_a_thread_stalls_in_an_operation) {
  check_garbage_grows_while_a_thread_stalls<ebr<>>();
}

TEST(ner_scheme, garbage_grows_while_a_thread_stalls_in_an_operation) {
  check_garbage_grows_while_a_thread_stalls<ner<>>();
}

// ebr and ner try to advance every K region entries (64 and 100 by default; Fraser's ebr on every
// entry): one thread alone advances the epoch once per K entries.
TEST(ner_scheme, advance_every_policy_sets_how_often_the_epoch_may_advance) {
  static_assert(ebr<>::advance_interval == 64 && ner<>::advance_interval == 100);
  static_assert(ner<reclaim::advance_every<5>, reclaim::batch_free>::advance_interval == 5);
  constexpr int ops = 1000;
  EXPECT_EQ(epochs_after<ebr<reclaim::advance_every<1>>>(ops), static_cast<std::uint64_t>(ops));
  EXPECT_EQ(epochs_after<ebr<>>(ops), static_cast<std::uint64_t>(ops / 64));
  EXPECT_EQ(epochs_after<ner<>>(ops), static_cast<std::uint64_t>(ops / 100));
  EXPECT_EQ(epochs_after<ner<reclaim::advance_every<5>>>(ops), static_cast<std::uint64_t>(ops / 5));
}

// qsbr: readers announce nothing when an operation starts; the end of an operation is the quiescent
// state. A node retired while another thread's operation runs is not freed until that thread ends
// the operation, however many operations the retiring thread runs.
TEST(qsbr_scheme, node_is_not_freed_until_a_running_operation_passes_a_quiescent_state) {
  using S = qsbr<>;
  std::atomic<long> victim_destroyed{0}, fillers{0};
  S::domain domain;
  std::atomic<tracked<S>*> shared{new tracked<S>(victim_destroyed, 42)};
  gate reading, may_finish, finished, may_exit;
  std::atomic<bool> intact{false};
  std::thread reader([&] {
    // The end of its operation is the quiescent state.
    protect_until_released<S>(domain, shared, reading, may_finish, finished, intact);
    // Keep passing quiescent states, as a live qsbr thread must.
    while (!may_exit.is_open()) empty_operation<S>(domain);
  });
  reading.wait();
  {
    S::guard g(domain);
    g.retire(shared.exchange(nullptr));
  }
  retire_many<S>(domain, fillers, scaled(4000));
  EXPECT_EQ(victim_destroyed.load(), 0) << "freed before the reader passed a quiescent state";
  EXPECT_LE(domain.stats().epochs, 1u) << "the epoch moved twice past a thread inside an operation";
  may_finish.open();
  finished.wait();
  EXPECT_TRUE(eventually([&] {
    empty_operation<S>(domain);
    return victim_destroyed.load() == 1;
  })) << "not freed after the reader passed quiescent states";
  may_exit.open();
  reader.join();
  EXPECT_TRUE(intact.load());
}

// qsbr: a live thread that has stopped calling operations holds the epoch back (as documented);
// thread_offline() releases it, and an exited thread never holds it.
TEST(qsbr_scheme, an_idle_live_thread_blocks_reclamation_until_it_goes_offline) {
  using S = qsbr<>;
  std::atomic<long> destroyed{0};
  S::domain domain;
  gate used, may_go_offline, offline, may_exit;
  std::thread idler([&] {
    empty_operation<S>(domain);  // online, then idle
    used.open();
    may_go_offline.wait();
    domain.thread_offline();
    offline.open();
    may_exit.wait();
  });
  used.wait();
  const long n = scaled(2000);
  retire_many<S>(domain, destroyed, n);
  EXPECT_EQ(destroyed.load(), 0) << "a live thread that ran no operation since was ignored";
  may_go_offline.open();
  offline.wait();
  EXPECT_TRUE(eventually([&] {
    empty_operation<S>(domain);
    return destroyed.load() == n;
  })) << "an offline thread still blocks reclamation";
  may_exit.open();
  idler.join();
  std::thread([&] { empty_operation<S>(domain); }).join();  // used, then exited
  retire_many<S>(domain, destroyed, n);
  EXPECT_TRUE(eventually([&] {
    empty_operation<S>(domain);
    return destroyed.load() == 2 * n;
  })) << "an exited thread blocks reclamation";
}

// rcu: a node is freed only when its retire epoch is below every reservation. A reader that reserved
// an epoch at or before the node's retire keeps it, however many epochs and scans pass; once the
// reader's operation ends, the next scans free it.
TEST(rcu_scheme, node_survives_while_a_reservation_no_newer_than_its_retire_exists) {
  using S = rcu<reclaim::advance_every<4>, reclaim::scan_every<16>>;
  std::atomic<long> victim_destroyed{0}, fillers{0};
  S::domain domain;
  // Its operation reserves the current epoch, and its end clears the reservation (no operation, no
  // reservation); then it stays alive and idle, which blocks nothing.
  protector<S> reader(domain, victim_destroyed, /*nested=*/false);
  reader.unlink_and_retire();
  const long n = scaled(4000);
  retire_many<S>(domain, fillers, n);
  auto s = domain.stats();
  EXPECT_EQ(victim_destroyed.load(), 0) << "freed while an older reservation existed";
  EXPECT_GE(s.epochs, static_cast<std::uint64_t>(n / 4)) << "the epoch moves every 4 retires";
  EXPECT_EQ(s.freed, 0u) << "every filler was retired at or after the reader's reservation";
  reader.release();
  EXPECT_TRUE(eventually([&] {
    retire_one<S>(domain, fillers);
    return victim_destroyed.load() == 1;
  })) << "not freed after the reservation was cleared";
  EXPECT_GT(fillers.load(), 0);
  reader.exit();
  EXPECT_TRUE(reader.read_intact_victim());
  static_assert(rcu<>::epoch_frequency == 32 && rcu<>::empty_frequency == 128);
  static_assert(S::epoch_frequency == 4 && S::empty_frequency == 16);
}

// ---------------------------------------------------------------------------------------------
// token_scheme: Token-EBR's four variants (paper 001, section 4)

using token_schemes =
    ::testing::Types<token_naive<>, token_pass_first<>, token_periodic<>, token_af<>>;
RECLAIM_TYPED_SUITE(token_scheme, token_schemes);

// A thread stalled inside an operation keeps the token: nobody receives it again, so nothing is
// freed and garbage grows with every retire.
TYPED_TEST(token_scheme, garbage_grows_while_a_thread_stalls_in_an_operation) {
  check_garbage_grows_while_a_thread_stalls<TypeParam>();
}

// The paper's ring needs every thread to start operations; ours skips a thread between operations
// and a record whose thread exited, so one live thread alone keeps reclaiming.
TYPED_TEST(token_scheme, an_idle_or_exited_thread_does_not_stall_the_ring) {
  using S = TypeParam;
  std::atomic<long> destroyed{0};
  typename S::domain domain;
  gate used, may_exit;
  std::thread idler([&] {
    empty_operation<S>(domain);
    used.open();
    may_exit.wait();  // alive, between operations
  });
  used.wait();
  const long exited_retires = 10;
  std::thread([&] { retire_many<S>(domain, destroyed, exited_retires); }).join();
  const long n = scaled(2000);
  retire_many<S>(domain, destroyed, n);
  EXPECT_TRUE(eventually([&] {
    empty_operation<S>(domain);
    return destroyed.load() == n + exited_retires;
  })) << "freed " << destroyed.load() << " of " << n + exited_retires;
  auto s = domain.stats();
  EXPECT_EQ(s.threads, 2u);
  EXPECT_GT(s.epochs, 2u) << "the token stopped going round";
  may_exit.open();
  idler.join();
}

// Exactly one token: whatever threads did, once none is inside an operation the token rests in
// exactly one place (parked, or waiting on a record), and it still goes round.
TYPED_TEST(token_scheme, one_token_circulates_while_threads_come_and_go) {
  using S = TypeParam;
  std::atomic<long> destroyed{0};
  typename S::domain domain;
  EXPECT_EQ(domain.tokens_at_rest(), 1u) << "a new domain starts with the token parked";
  std::atomic<bool> stop{false};
  std::vector<std::thread> workers;
  for (int t = 0; t < 3; ++t)
    workers.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) retire_one<S>(domain, destroyed);
    });
  const auto end = std::chrono::steady_clock::now() + stress_time();
  int visitors = 0;
  while (std::chrono::steady_clock::now() < end) {
    std::thread([&] { retire_many<S>(domain, destroyed, 20); }).join();
    ++visitors;
  }
  stop = true;
  for (auto& t : workers) t.join();
  EXPECT_EQ(domain.tokens_at_rest(), 1u) << "after " << visitors << " threads came and went";
  const std::uint64_t rounds = domain.stats().epochs;
  for (int i = 0; i < 10; ++i) empty_operation<S>(domain);
  EXPECT_GT(domain.stats().epochs, rounds) << "the token was lost";
  EXPECT_EQ(domain.tokens_at_rest(), 1u);
}

// The token skips a thread whose operation began in the current round (that operation read the
// round count after everything the round's frees may reach was unlinked) and waits for one that
// began in an earlier round. So a thread that is always inside an operation, beginning a new one
// now and then (a preempted thread when threads outnumber cores), lets the ring go one round
// further per operation, and not two: the second would free what the operation may hold.
TYPED_TEST(token_scheme, an_operation_holds_the_token_only_once_a_later_round_has_begun) {
  using S = TypeParam;
  std::atomic<long> destroyed{0};
  typename S::domain domain;
  constexpr int operations = 4;
  // More operations than it takes to pick up a parked token, so that the ring can go round.
  constexpr int retires = 50;
  static_assert(retires > int{S::pick_up_every});
  std::atomic<int> entered{0}, may_leave{0};
  std::thread inside([&] {
    for (int i = 1; i <= operations; ++i) {
      typename S::guard g(domain);
      entered.store(i);
      while (may_leave.load() < i) std::this_thread::yield();
    }
  });
  for (int i = 1; i <= operations; ++i) {
    while (entered.load() < i) std::this_thread::yield();
    const std::uint64_t before = domain.stats().epochs;
    for (int op = 0; op < retires; ++op) retire_one<S>(domain, destroyed);
    EXPECT_EQ(domain.stats().epochs, before + 1)
        << "operation " << i << ": the ring must go round once past an operation of the current "
        << "round, then wait for it";
    may_leave.store(i);
  }
  inside.join();
  EXPECT_TRUE(eventually([&] {
    empty_operation<S>(domain);
    return destroyed.load() == retires * operations;
  })) << "freed " << destroyed.load() << " of " << retires * operations;
}

// A deleter that frees slowly and notes the completed rounds (stats().epochs) at the first and the
// last free of a batch of `batch` nodes.
template <class S>
struct slow_free_probe {
  static inline typename S::domain* domain = nullptr;
  static inline long batch = 0;
  static inline long calls = 0;  // the freeing thread's only
  static inline std::uint64_t rounds_at_first = 0, rounds_at_last = 0;

  static void slow_delete(tracked<S>* node) {
    ++calls;
    if (calls == 1) rounds_at_first = domain->stats().epochs;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
    if (calls == batch) rounds_at_last = domain->stats().epochs;
    delete node;
  }
};

// Rounds the token completes while one thread frees a bag of 1000 slow nodes in one batch, with a
// second thread running operations all along.
template <class S>
std::uint64_t rounds_while_a_large_bag_is_freed() {
  using probe = slow_free_probe<S>;
  std::atomic<long> destroyed{0};
  typename S::domain domain;
  probe::domain = &domain;
  probe::batch = 1000;
  probe::calls = 0;
  std::atomic<bool> stop{false};
  gate running;
  std::thread worker([&] {
    empty_operation<S>(domain);
    running.open();
    while (!stop.load(std::memory_order_relaxed)) empty_operation<S>(domain);
  });
  running.wait();
  std::thread freer([&] {
    {
      typename S::guard g(domain);
      for (long i = 0; i < probe::batch; ++i)
        g.template retire<&probe::slow_delete>(new tracked<S>(destroyed));
    }
    // The bag is freed inside one operation, on the second receipt after the retires.
    while (probe::calls < probe::batch) empty_operation<S>(domain);
  });
  freer.join();
  stop = true;
  worker.join();
  EXPECT_EQ(destroyed.load(), probe::batch);
  return probe::rounds_at_last - probe::rounds_at_first;
}

// The periodic variant looks for the token every 100 frees and passes it on at once, so the ring
// keeps going round while the bag is freed; the check really runs between frees.
TEST(token_scheme, periodic_passes_the_token_on_while_it_frees_a_large_bag) {
  static_assert(token_periodic<>::frees_per_check == 100);
  std::uint64_t rounds = rounds_while_a_large_bag_is_freed<token_periodic<>>();
  EXPECT_GE(rounds, 3u) << "the token stopped at the freeing thread (10 checks in the batch)";
}

// Pass-first hands the token on before freeing, but when it comes back during the batch it waits
// until the batch is done (the paper's garbage pile-up); naive frees with the token in hand.
TEST(token_scheme, pass_first_and_naive_hold_the_token_while_they_free) {
  EXPECT_LE(rounds_while_a_large_bag_is_freed<token_pass_first<>>(), 1u);
  EXPECT_EQ(rounds_while_a_large_bag_is_freed<token_naive<>>(), 0u);
}

// token_af: a safe bag goes to the freeable list; each operation frees K of it.
template <class S>
void check_frees_k_per_operation(long k) {
  std::atomic<long> destroyed{0};
  typename S::domain domain;
  {
    typename S::guard g(domain);
    for (int i = 0; i < 100; ++i) g.retire(new tracked<S>(destroyed));
  }
  ASSERT_TRUE(eventually([&] {
    empty_operation<S>(domain);
    return destroyed.load() > 0;
  }));
  EXPECT_EQ(destroyed.load(), k) << "the operation that found the bag safe";
  for (long i = 2; i <= 10; ++i) {
    empty_operation<S>(domain);
    EXPECT_EQ(destroyed.load(), i * k) << "after operation " << i;
  }
  EXPECT_EQ(domain.stats().freed, static_cast<std::uint64_t>(10 * k));
  EXPECT_EQ(domain.stats().pending, static_cast<std::uint64_t>(100 - 10 * k));
}

TEST(token_scheme, token_af_frees_k_objects_per_operation) {
  static_assert(std::is_same_v<token_af<>, token_pass_first<reclaim::amortized_free<1>>>);
  check_frees_k_per_operation<token_af<>>(1);
  check_frees_k_per_operation<token_pass_first<reclaim::amortized_free<4>>>(4);
}

TEST(token_scheme, variants_are_named_as_in_the_lab) {
  EXPECT_EQ(token_naive<>::name, "token_naive");
  EXPECT_EQ(token_pass_first<>::name, "token_pass_first");
  EXPECT_EQ(token_periodic<>::name, "token_periodic");
  EXPECT_EQ(token_af<>::name, "token_af");
  static_assert(token_periodic<reclaim::check_every<10>>::frees_per_check == 10);
  static_assert(token_pass_first<>::frees_per_check == 0);
  static_assert(reclaim::scheme<token_af<>> && !token_af<>::bounds_garbage &&
                token_af<>::family == reclaim::family::epoch &&
                token_af<>::needs == reclaim::needs_nothing);
}

// The scheme concept and each scheme's declarations.
TEST(scheme_declarations, every_scheme_satisfies_the_concept_and_declares_itself) {
  static_assert(reclaim::scheme<none>);
  static_assert(reclaim::scheme<debra<>>);
  static_assert(reclaim::scheme<hp<>>);
  static_assert(reclaim::scheme<debra<reclaim::check_every<5>>>);
  static_assert(reclaim::scheme<hp<reclaim::slots<8>>>);
  static_assert(reclaim::scheme<ebr<>> && reclaim::scheme<ner<>> && reclaim::scheme<qsbr<>> &&
                reclaim::scheme<rcu<>>);
  static_assert(!ebr<>::bounds_garbage && !ner<>::bounds_garbage && !qsbr<>::bounds_garbage &&
                !rcu<>::bounds_garbage);
  static_assert(ebr<>::family == reclaim::family::epoch && ner<>::family == reclaim::family::epoch &&
                qsbr<>::family == reclaim::family::epoch && rcu<>::family == reclaim::family::epoch);
  static_assert(ebr<>::needs == reclaim::needs_nothing && ner<>::needs == reclaim::needs_nothing &&
                qsbr<>::needs == reclaim::needs_nothing && rcu<>::needs == reclaim::needs_nothing);
  EXPECT_EQ(ebr<>::name, "ebr");
  EXPECT_EQ(ner<>::name, "ner");
  EXPECT_EQ(qsbr<>::name, "qsbr");
  EXPECT_EQ(rcu<>::name, "rcu");
  static_assert(!reclaim::scheme<int>);
  static_assert(hp<>::bounds_garbage && !debra<>::bounds_garbage && !none::bounds_garbage);
  // hp's bound holds only with a free policy that keeps nothing safe waiting: an amortized policy
  // lets the freeable list grow when the retire rate exceeds its K (or adaptive_free's Max).
  static_assert(reclaim::batch_free::bounded && !reclaim::amortized_free<1>::bounded &&
                !reclaim::amortized_free<64>::bounded && !reclaim::adaptive_free::bounded);
  static_assert(hp<reclaim::slots<8>, reclaim::batch_free>::bounds_garbage &&
                !hp<reclaim::amortized_free<1>>::bounds_garbage &&
                !hp<reclaim::slots<8>, reclaim::amortized_free<4>>::bounds_garbage &&
                !hp<reclaim::adaptive_free>::bounds_garbage);
  static_assert(!debra<reclaim::batch_free>::bounds_garbage &&
                !debra<reclaim::amortized_free<1>>::bounds_garbage);
  static_assert(hp<>::family == reclaim::family::pointer);
  static_assert(debra<>::family == reclaim::family::epoch);
  static_assert(none::family == reclaim::family::none);
  static_assert(hp<>::needs == reclaim::needs_validated_reads);
  static_assert(debra<>::needs == reclaim::needs_nothing && none::needs == reclaim::needs_nothing);
  static_assert(hp<>::guard::validates && !debra<>::guard::validates && !none::guard::validates);
  EXPECT_EQ(hp<>::name, "hp");
  EXPECT_EQ(debra<>::name, "debra");
  EXPECT_EQ(none::name, "none");
  EXPECT_EQ(reclaim::to_string(hp<>::family), "pointer");
  EXPECT_EQ(reclaim::to_string(debra<>::family), "epoch");
  // The default domains are one object per scheme.
  EXPECT_EQ(&hp<>::default_domain(), &hp<>::default_domain());
  EXPECT_EQ(&none::default_domain(), &none::default_domain());
}

}  // namespace
