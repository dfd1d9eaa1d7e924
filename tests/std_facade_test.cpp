// SPDX-License-Identifier: MIT
// The C++26-shaped facades (include/reclaim/std/) against what the proposals specify, in our
// words: hazard pointers (P2530) over the hazard-pointer schemes, read-copy update (P2545) over
// the epoch schemes. Each object counts its deletion, so that "not freed yet" and "freed once" are
// observed, never inferred; a config-pointer stress under each facade checks that readers never
// see a torn or freed configuration, and that the scheme's stats add up afterwards.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "test_support.hpp"

namespace {

using namespace reclaim_test;
using namespace std::chrono_literals;
namespace cxx26 = reclaim::cxx26;

// How long a "not yet" check waits.
constexpr auto settle = 50ms;

// The object base of each facade, as a template of the object and its deleter.
template <class S>
struct hazard_facade {
  template <class T, class D>
  using obj_base = cxx26::hazard_pointer_obj_base<T, D, S>;
};
template <class S>
struct rcu_facade {
  template <class T, class D>
  using obj_base = cxx26::rcu_obj_base<T, D, S>;
};

// A deleter with state, kept in the object: counts its runs for the object it was given for.
struct counting_delete {
  std::vector<std::atomic<int>>* runs;
  std::size_t id;
  template <class T>
  void operator()(T* object) const noexcept {
    (*runs)[id].fetch_add(1, std::memory_order_relaxed);
    delete object;
  }
};

struct default_deleter {};  // config<F>'s D: std::default_delete<config<F>>
template <class T, class D>
using deleter_t = std::conditional_t<std::is_same_v<D, default_deleter>, std::default_delete<T>, D>;

// A configuration whose fields must agree (doubled == 2 x version), and which counts its deletion.
// Its destructor poisons the fields, so that a reader of a freed one sees them disagree (the
// sanitizers see the read itself).
template <class Facade, class D = default_deleter>
struct config : Facade::template obj_base<config<Facade, D>, deleter_t<config<Facade, D>, D>> {
  config(long v, std::atomic<long>& counter) : version(v), doubled(2 * v), deleted(&counter) {}
  ~config() {
    version = -1;
    deleted->fetch_add(1, std::memory_order_relaxed);
  }
  bool intact() const { return version >= 0 && doubled == 2 * version; }

  long version, doubled;
  std::atomic<long>* deleted;
};

// Readers check each configuration they see while a writer swaps and retires them.
struct stress_result {
  long swaps = 0;
  long reads = 0;
  long failures = 0;  // torn, freed or older than one seen before
};
template <class Config, class Read, class Replace>
stress_result config_pointer_stress(Read read, Replace replace) {
  stress_result result;
  std::atomic<bool> stop{false};
  std::atomic<long> reads{0}, failures{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&] {
      long n = 0, bad = 0, newest = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        read([&](const Config& c) {
          if (!c.intact() || c.version < newest) ++bad;
          newest = c.version;
        });
        ++n;
      }
      reads += n;
      failures += bad;
    });
  }
  const auto end = std::chrono::steady_clock::now() + stress_time();
  while (std::chrono::steady_clock::now() < end) replace(++result.swaps);
  stop = true;
  for (auto& r : readers) r.join();
  result.reads = reads;
  result.failures = failures;
  return result;
}

// ---------------------------------------------------------------------------------------------
// Hazard pointers (P2530) over hp<> and its free-policy variants (hp_af, hp_afa). They use the
// scheme's default domain, so every test ends with a barrier there, and counters are static.

template <class S>
class hazard_pointer_facade : public ::testing::Test {
 protected:
  using node = config<hazard_facade<S>>;
  using hazard_pointer = cxx26::basic_hazard_pointer<S>;
  static auto& domain() { return S::default_domain(); }
};
using hazard_schemes = ::testing::Types<reclaim::hp<>, reclaim::hp<reclaim::amortized_free<1>>,
                                        reclaim::hp<reclaim::adaptive_free>, reclaim::hp_asym<>,
                                        reclaim::hazard_pop<>, reclaim::epoch_pop<>>;
TYPED_TEST_SUITE(hazard_pointer_facade, hazard_schemes);

static_assert(std::is_same_v<cxx26::hazard_pointer, cxx26::basic_hazard_pointer<reclaim::hp<>>>);
static_assert(std::is_same_v<decltype(cxx26::make_hazard_pointer()), cxx26::hazard_pointer>);
static_assert(std::is_nothrow_move_constructible_v<cxx26::hazard_pointer> &&
              std::is_nothrow_move_assignable_v<cxx26::hazard_pointer> &&
              !std::is_copy_constructible_v<cxx26::hazard_pointer>);
// An object protects only under the scheme its base names.
static_assert(cxx26::hazard_protectable<config<hazard_facade<reclaim::hp<>>>, reclaim::hp<>>);
static_assert(!cxx26::hazard_protectable<config<hazard_facade<reclaim::hp<>>>,
                                         reclaim::hp<reclaim::amortized_free<1>>>);
static_assert(!cxx26::hazard_protectable<std::string, reclaim::hp<>>);
using hp_spelled_out =
    reclaim::hp<reclaim::fence_policy<reclaim::core::symmetric_fence>, reclaim::slots<2>>;
static_assert(cxx26::hazard_pointer_scheme<hp_spelled_out> &&
              !cxx26::hazard_pointer_scheme<reclaim::debra<>> &&
              !cxx26::hazard_pointer_scheme<reclaim::none>);

TYPED_TEST(hazard_pointer_facade, default_and_moved_from_hazard_pointers_are_empty) {
  typename TestFixture::hazard_pointer a;
  EXPECT_TRUE(a.empty());
  auto b = cxx26::make_hazard_pointer<TypeParam>();
  EXPECT_FALSE(b.empty());
  auto c = std::move(b);
  EXPECT_TRUE(b.empty());
  EXPECT_FALSE(c.empty());
  a = std::move(c);  // move-assignment leaves the source empty too (not with our old slot)
  EXPECT_TRUE(c.empty());
  EXPECT_FALSE(a.empty());
  swap(a, c);
  EXPECT_TRUE(a.empty());
  EXPECT_FALSE(c.empty());
  a.swap(c);
  EXPECT_FALSE(a.empty());
  EXPECT_TRUE(c.empty());
  auto d = cxx26::make_hazard_pointer<TypeParam>();
  d = std::move(a);  // d's own hazard pointer is destroyed, not handed to a
  EXPECT_TRUE(a.empty());
  EXPECT_FALSE(d.empty());
}

// protect() returns what the source holds, and that object survives its retirement until the
// protection ends, in each of the ways it can end.
TYPED_TEST(hazard_pointer_facade, protect_keeps_the_object_until_reset_destroy_or_move_assign) {
  using node = typename TestFixture::node;
  using hazard_pointer = typename TestFixture::hazard_pointer;
  static std::atomic<long> deleted{0};
  auto protected_until = [&](auto end_protection) {
    deleted = 0;
    std::atomic<node*> src{new node(7, deleted)};
    auto h = cxx26::make_hazard_pointer<TypeParam>();
    node* p = h.protect(src);
    EXPECT_EQ(p, src.load());
    src.exchange(nullptr)->retire();
    this->domain().flush();  // a scan: frees what no hazard protects
    EXPECT_EQ(deleted.load(), 0) << "freed while protected";
    EXPECT_TRUE(p->intact());
    end_protection(h);
    this->domain().barrier();
    EXPECT_EQ(deleted.load(), 1);
  };
  protected_until([](hazard_pointer& h) { h.reset_protection(); });
  protected_until([](hazard_pointer& h) { h.reset_protection(nullptr); });
  protected_until([](hazard_pointer& h) { h = hazard_pointer(); });
  protected_until([](hazard_pointer& h) { h = cxx26::make_hazard_pointer<TypeParam>(); });
  protected_until([](hazard_pointer& h) { hazard_pointer destroyed_here = std::move(h); });
}

TYPED_TEST(hazard_pointer_facade, try_protect_fails_and_updates_ptr_when_the_source_changed) {
  using node = typename TestFixture::node;
  static std::atomic<long> deleted{0};
  deleted = 0;
  node* a = new node(1, deleted);
  node* b = new node(2, deleted);
  std::atomic<node*> src{a};
  auto h = cxx26::make_hazard_pointer<TypeParam>();
  node* ptr = a;
  EXPECT_TRUE(h.try_protect(ptr, src));
  EXPECT_EQ(ptr, a);
  src.store(b);
  a->retire();
  this->domain().flush();
  EXPECT_EQ(deleted.load(), 0) << "a is protected";
  ptr = a;
  EXPECT_FALSE(h.try_protect(ptr, src));
  EXPECT_EQ(ptr, b) << "a failed try_protect sets ptr to what the source holds";
  // ... and protects nothing: neither a (a barrier frees it) nor b.
  EXPECT_TRUE(this->domain().try_barrier(patience));
  EXPECT_EQ(deleted.load(), 1);
  src.store(nullptr);
  b->retire();
  EXPECT_TRUE(this->domain().try_barrier(patience)) << "the failed try_protect protected b";
  EXPECT_EQ(deleted.load(), 2);
}

// reset_protection(ptr) publishes without validating: the standard's building block for a
// hand-written protect loop (publish, re-read the source, keep it if unchanged).
TYPED_TEST(hazard_pointer_facade, reset_protection_with_a_pointer_protects_it) {
  using node = typename TestFixture::node;
  static std::atomic<long> deleted{0};
  deleted = 0;
  std::atomic<node*> src{new node(3, deleted)};
  auto h = cxx26::make_hazard_pointer<TypeParam>();
  node* p = src.load();
  for (node* again;; p = again) {
    h.reset_protection(p);
    again = src.load();
    if (again == p) break;
  }
  src.store(nullptr);
  p->retire();
  this->domain().flush();
  EXPECT_EQ(deleted.load(), 0);
  h.reset_protection(static_cast<const node*>(nullptr));  // a null pointer: protects nothing
  EXPECT_FALSE(h.empty());
  this->domain().barrier();
  EXPECT_EQ(deleted.load(), 1);
}

TYPED_TEST(hazard_pointer_facade, swap_exchanges_protections) {
  using node = typename TestFixture::node;
  static std::atomic<long> a_deleted{0}, b_deleted{0};
  a_deleted = b_deleted = 0;
  std::atomic<node*> a{new node(1, a_deleted)}, b{new node(2, b_deleted)};
  auto ha = cxx26::make_hazard_pointer<TypeParam>();
  auto hb = cxx26::make_hazard_pointer<TypeParam>();
  ha.protect(a);
  hb.protect(b);
  a.exchange(nullptr)->retire();
  b.exchange(nullptr)->retire();
  ha.swap(hb);        // ha protects b, hb protects a
  ha.reset_protection();
  this->domain().flush();
  EXPECT_EQ(b_deleted.load(), 1) << "b's protection moved to ha, which was reset";
  EXPECT_EQ(a_deleted.load(), 0) << "a's protection moved to hb";
  swap(ha, hb);  // the free swap: ha protects a again
  hb.reset_protection();
  this->domain().flush();
  EXPECT_EQ(a_deleted.load(), 0);
  ha.reset_protection();
  this->domain().barrier();
  EXPECT_EQ(a_deleted.load(), 1);
}

// More than the scheme's slots per guard and than one block of the thread's pool.
TYPED_TEST(hazard_pointer_facade, many_hazard_pointers_alive_at_once_each_keep_their_object) {
  using node = typename TestFixture::node;
  static std::atomic<long> deleted{0};
  deleted = 0;
  constexpr std::size_t n = 3 * 8 + 5;
  static_assert(n > TypeParam::slot_count);
  std::vector<std::atomic<node*>> sources(n);
  std::vector<typename TestFixture::hazard_pointer> hazards;
  for (std::size_t i = 0; i < n; ++i) {
    sources[i] = new node(static_cast<long>(i), deleted);
    hazards.push_back(cxx26::make_hazard_pointer<TypeParam>());
    EXPECT_EQ(hazards.back().protect(sources[i])->version, static_cast<long>(i));
  }
  for (auto& src : sources) src.exchange(nullptr)->retire();
  this->domain().flush();
  EXPECT_EQ(deleted.load(), 0);
  hazards.resize(n / 2);  // the second half ends
  this->domain().flush();
  EXPECT_EQ(deleted.load(), static_cast<long>(n - n / 2));
  for (std::size_t i = 0; i < n / 2; ++i) EXPECT_EQ(hazards[i].protect(sources[i]), nullptr);
  hazards.clear();
  this->domain().barrier();
  EXPECT_EQ(deleted.load(), static_cast<long>(n));
}

TYPED_TEST(hazard_pointer_facade, retire_with_a_stateful_deleter_runs_it_exactly_once) {
  using node = config<hazard_facade<TypeParam>, counting_delete>;
  static std::atomic<long> deleted{0};
  deleted = 0;
  constexpr std::size_t n = 300;  // more than a scan threshold's worth with one thread
  std::vector<std::atomic<int>> runs(n);
  for (std::size_t i = 0; i < n; ++i) (new node(1, deleted))->retire(counting_delete{&runs, i});
  this->domain().barrier();
  this->domain().barrier();
  for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(runs[i].load(), 1) << "object " << i;
  EXPECT_EQ(deleted.load(), static_cast<long>(n));
  const reclaim::stats s = this->domain().stats();
  EXPECT_EQ(s.freed, s.retired);
}

TYPED_TEST(hazard_pointer_facade, config_pointer_stress) {
  using node = typename TestFixture::node;
  static std::atomic<long> deleted{0};
  deleted = 0;
  std::atomic<node*> current{new node(0, deleted)};
  const stress_result r = config_pointer_stress<node>(
      [&](auto check) {
        auto h = cxx26::make_hazard_pointer<TypeParam>();
        check(*h.protect(current));
      },
      [&](long v) { current.exchange(new node(v, deleted))->retire(); });
  current.exchange(nullptr)->retire();
  this->domain().barrier();
  EXPECT_EQ(r.failures, 0) << "of " << r.reads << " reads";
  EXPECT_GT(r.reads, 0);
  EXPECT_EQ(deleted.load(), r.swaps + 1);
  const reclaim::stats s = this->domain().stats();
  EXPECT_EQ(s.freed, s.retired);
}

// barrier() returns once everything retired before it is freed. An object that the calling
// thread's own hazard_pointer still protects could never be (folly's hazptr_cleanup returns and
// leaves it pending): stopped in every build instead of hanging, naming the fix. synchronize()
// waits for operations only, which a hazard_pointer is not: it returns, the object kept.
TYPED_TEST(hazard_pointer_facade, barrier_beside_the_callers_own_hazard_pointer_is_named) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  using node = typename TestFixture::node;
  static std::atomic<long> deleted{0};
  EXPECT_DEATH(
      {
        std::atomic<node*> src{new node(3, deleted)};
        auto h = cxx26::make_hazard_pointer<TypeParam>();
        (void)h.protect(src);
        src.exchange(nullptr)->retire();
        this->domain().barrier();
      },
      "barrier\\(\\) would wait for ever: a guard_ptr or hazard_pointer of the calling thread "
      "protects a node retired before the call; reset it .*hazard_pointer::reset_protection");
}

TYPED_TEST(hazard_pointer_facade, synchronize_beside_the_callers_own_hazard_pointer_returns) {
  using node = typename TestFixture::node;
  static std::atomic<long> deleted{0};
  deleted = 0;
  std::atomic<node*> src{new node(4, deleted)};
  auto h = cxx26::make_hazard_pointer<TypeParam>();
  node* p = h.protect(src);
  src.exchange(nullptr)->retire();
  this->domain().synchronize();
  EXPECT_TRUE(this->domain().try_synchronize(settle));
  EXPECT_EQ(deleted.load(), 0) << "freed while protected";
  EXPECT_TRUE(p->intact());
  h.reset_protection();
  this->domain().barrier();
  EXPECT_EQ(deleted.load(), 1);
}

#ifndef NDEBUG
// Debug builds: a hazard_pointer's slot is its maker's thread's, wherever the object moved since;
// used on another thread, the message names hazard_pointer (not the guard_ptr beneath it).
TEST(hazard_pointer_misuse, use_on_another_thread_is_named) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  using node = config<hazard_facade<reclaim::hp<>>>;
  static std::atomic<long> deleted{0};
  EXPECT_DEATH(
      {
        std::atomic<node*> src{new node(5, deleted)};
        cxx26::hazard_pointer h = cxx26::make_hazard_pointer();
        std::thread([&] { (void)h.protect(src); }).join();
      },
      "hazard_pointer used on another thread than the one that made it");
  EXPECT_DEATH(
      {
        cxx26::hazard_pointer h = cxx26::make_hazard_pointer();
        std::thread([moved = std::move(h)]() mutable { moved.reset_protection(); }).join();
      },
      "hazard_pointer used on another thread than the one that made it");
}

// What a hazard_pointer holds decides its thread: one made empty on this thread and given, on
// another thread, that thread's slot (move assignment) is that thread's to use.
TEST(hazard_pointer_misuse, an_empty_one_assigned_on_another_thread_is_that_threads) {
  using node = config<hazard_facade<reclaim::hp<>>>;
  static std::atomic<long> deleted{0};
  std::atomic<node*> src{new node(7, deleted)};
  cxx26::hazard_pointer h;
  std::thread([&] {
    h = cxx26::make_hazard_pointer();
    EXPECT_EQ(h.protect(src)->version, 7);
    h = cxx26::hazard_pointer();  // its slot goes back on the thread whose record it is
  }).join();
  EXPECT_TRUE(h.empty());
  delete src.load();
}
#endif

// ---------------------------------------------------------------------------------------------
// RCU (P2545) over the epoch schemes, each test on a domain of its own.

template <class S>
class rcu_domain_facade : public ::testing::Test {
 protected:
  using node = config<rcu_facade<S>>;
  using deleter = std::default_delete<node>;
  std::atomic<long> deleted{0};  // before the domain, which frees what is left
  typename S::domain scheme_domain;
  cxx26::basic_rcu_domain<S> dom{scheme_domain};
};
using rcu_schemes = ::testing::Types<reclaim::debra<>, reclaim::ebr<>, reclaim::qsbr<>,
                                     reclaim::rcu<>, reclaim::token_af<>, reclaim::stamp_it<>>;
TYPED_TEST_SUITE(rcu_domain_facade, rcu_schemes);

static_assert(std::is_same_v<cxx26::rcu_domain, cxx26::basic_rcu_domain<reclaim::debra<>>>);
static_assert(!std::is_copy_constructible_v<cxx26::rcu_domain>);
static_assert(cxx26::rcu_scheme<reclaim::token_naive<>> && cxx26::rcu_scheme<reclaim::ner<>>);
static_assert(!cxx26::rcu_scheme<reclaim::hp<>> && !cxx26::rcu_scheme<reclaim::none> &&
              !cxx26::rcu_scheme<reclaim::nbr<>>);

// Nested regions, opened by std::scoped_lock and by lock(): the object is retired after the inner
// regions closed, while the outer one is open, and survives until it closes.
TYPED_TEST(rcu_domain_facade, an_object_retired_during_a_region_outlives_the_region) {
  using node = typename TestFixture::node;
  std::atomic<node*> src{new node(5, this->deleted)};
  gate read, may_unlock;
  std::atomic<bool> intact_after_retire{false};
  std::thread reader([&] {
    std::scoped_lock outer(this->dom);
    {
      std::scoped_lock inner(this->dom);
      this->dom.lock();
      this->dom.unlock();
    }
    const node* seen = src.load(std::memory_order_acquire);
    read.open();
    may_unlock.wait();
    intact_after_retire = seen->intact();
  });
  read.wait();
  src.exchange(nullptr)->retire(typename TestFixture::deleter(), this->dom);
  EXPECT_FALSE(this->scheme_domain.try_barrier(settle)) << "freed inside a reader's region";
  EXPECT_EQ(this->deleted.load(), 0);
  may_unlock.open();
  reader.join();
  cxx26::rcu_barrier(this->dom);
  EXPECT_EQ(this->deleted.load(), 1);
  EXPECT_TRUE(intact_after_retire.load());
}

TYPED_TEST(rcu_domain_facade, rcu_synchronize_returns_only_after_an_earlier_region_ends) {
  gate locked;
  std::atomic<bool> unlocking{false};
  std::thread reader([&] {
    this->dom.lock();
    locked.open();
    std::this_thread::sleep_for(settle);
    unlocking = true;
    this->dom.unlock();
  });
  locked.wait();
  cxx26::rcu_synchronize(this->dom);
  EXPECT_TRUE(unlocking.load()) << "rcu_synchronize returned inside a region that began before it";
  reader.join();
}

// Every way to retire: the base's retire with a stateful deleter, rcu_retire of an object with the
// scheme's link (in place), rcu_retire of any other object with a stateful deleter (in a node
// allocated for it), from several threads and from the caller.
TYPED_TEST(rcu_domain_facade, rcu_barrier_runs_every_deleter_scheduled_before_it) {
  using S = TypeParam;
  using counted = config<rcu_facade<S>, counting_delete>;
  constexpr std::size_t per_thread = 200, threads = 3;
  std::vector<std::atomic<int>> runs(per_thread * threads * 2);
  std::atomic<long> strings_deleted{0};
  auto retire_all = [&](std::size_t t) {
    for (std::size_t i = 0; i < per_thread; ++i) {
      const std::size_t id = 2 * (t * per_thread + i);
      (new counted(1, this->deleted))->retire(counting_delete{&runs, id}, this->dom);
      cxx26::rcu_retire(new std::string(40, 'x'), counting_delete{&runs, id + 1}, this->dom);
      cxx26::rcu_retire(new tracked<S>(strings_deleted), std::default_delete<tracked<S>>(),
                        this->dom);
    }
  };
  std::thread a(retire_all, 0), b(retire_all, 1);
  a.join();
  b.join();
  retire_all(2);
  cxx26::rcu_barrier(this->dom);
  for (std::size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(runs[i].load(), 1) << "deleter " << i;
  EXPECT_EQ(this->deleted.load(), static_cast<long>(per_thread * threads));
  EXPECT_EQ(strings_deleted.load(), static_cast<long>(per_thread * threads));
  const reclaim::stats s = this->scheme_domain.stats();
  EXPECT_EQ(s.retired, 3 * per_thread * threads);
  EXPECT_EQ(s.freed, s.retired);
}

// The writer retires through the base, through rcu_retire, and (every 16th swap) the classic way:
// rcu_synchronize, then delete.
// rcu_synchronize() or rcu_barrier() inside the caller's own region would wait for that region:
// stopped in every build with a message that says to end it first, never a hang.
TYPED_TEST(rcu_domain_facade, a_grace_period_inside_the_callers_own_region_is_named) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        std::scoped_lock region(this->dom);
        cxx26::rcu_barrier(this->dom);
      },
      "would wait for its own operation; end it first");
  EXPECT_DEATH(
      {
        std::scoped_lock region(this->dom);
        cxx26::rcu_synchronize(this->dom);
      },
      "would wait for its own operation; end it first");
}

TYPED_TEST(rcu_domain_facade, config_pointer_stress) {
  using node = typename TestFixture::node;
  using deleter = typename TestFixture::deleter;
  std::atomic<node*> current{new node(0, this->deleted)};
  long synchronized = 0;
  const stress_result r = config_pointer_stress<node>(
      [&](auto check) {
        std::scoped_lock region(this->dom);
        check(*current.load(std::memory_order_acquire));
      },
      [&](long v) {
        node* old = current.exchange(new node(v, this->deleted));
        if (v % 16 == 0) {
          cxx26::rcu_synchronize(this->dom);
          delete old;
          ++synchronized;
        } else if (v % 2 == 0) {
          old->retire(deleter(), this->dom);
        } else {
          cxx26::rcu_retire(old, deleter(), this->dom);
        }
      });
  cxx26::rcu_retire(current.exchange(nullptr), deleter(), this->dom);
  cxx26::rcu_barrier(this->dom);
  EXPECT_EQ(r.failures, 0) << "of " << r.reads << " reads";
  EXPECT_GT(r.reads, 0);
  EXPECT_EQ(this->deleted.load(), r.swaps + 1);
  const reclaim::stats s = this->scheme_domain.stats();
  EXPECT_EQ(s.retired, static_cast<std::uint64_t>(r.swaps + 1 - synchronized));
  EXPECT_EQ(s.freed, s.retired);
}

// ---------------------------------------------------------------------------------------------
// The standard's spelling, with no choice made: debra<> and hp<>, their default domains.

struct rcu_config : cxx26::rcu_obj_base<rcu_config> {
  explicit rcu_config(int v) : value(v) {}
  ~rcu_config() { deletions.fetch_add(1); }
  int value;
  static inline std::atomic<long> deletions{0};
};
struct hazard_config : cxx26::hazard_pointer_obj_base<hazard_config> {
  explicit hazard_config(int v) : value(v) {}
  ~hazard_config() { deletions.fetch_add(1); }
  int value;
  static inline std::atomic<long> deletions{0};
};

TEST(std_facade_defaults, the_standards_spelling_compiles_and_uses_the_default_domains) {
  using namespace reclaim::cxx26;
  EXPECT_EQ(&rcu_default_domain(), &rcu_default_domain());
  EXPECT_EQ(&rcu_default_domain().scheme_domain(), &reclaim::debra<>::default_domain());
  std::atomic<rcu_config*> rcu_current{new rcu_config(1)};
  {
    std::scoped_lock region(rcu_default_domain());
    EXPECT_EQ(rcu_current.load()->value, 1);
  }
  rcu_current.exchange(new rcu_config(2))->retire();
  rcu_retire(rcu_current.exchange(nullptr));
  rcu_retire(new int(3));
  rcu_synchronize();
  rcu_barrier();
  EXPECT_EQ(rcu_config::deletions.load(), 2);

  std::atomic<hazard_config*> hazard_current{new hazard_config(1)};
  {
    hazard_pointer h = make_hazard_pointer();
    EXPECT_EQ(h.protect(hazard_current)->value, 1);
  }
  hazard_current.exchange(nullptr)->retire();
  reclaim::hp<>::default_domain().barrier();
  EXPECT_EQ(hazard_config::deletions.load(), 1);
}

}  // namespace
