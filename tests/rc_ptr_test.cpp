// SPDX-License-Identifier: MIT
// rc_ptr, atomic_rc_ptr and snapshot_ptr (include/reclaim/rc_ptr.hpp, issue 30), under every scheme
// that serves them: std::atomic<std::shared_ptr>'s semantics (load, store, exchange, both CASes,
// A-B-A, memory orders publishing the object), compare_and_swap, deleters, allocators,
// comparisons; the counts after the deferred decrements are applied; a domain destroyed with drops
// pending; short-lived threads; and a stress where writers store fresh objects (the same one into
// two locations, so that one block is dropped from several locations at once and re-retired from
// the scheme's deleter) while readers load and dereference them: every object destroyed exactly
// once, never while referenced.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <memory>
#include <thread>
#include <vector>

#include "reclaim/rc_ptr.hpp"
#include "suite_support.hpp"
#include "test_support.hpp"

namespace {

using namespace reclaim_test;
using reclaim::atomic_rc_ptr;
using reclaim::rc_ptr;
using reclaim::snapshot_ptr;

// Every scheme that serves atomic_rc_ptr (rc_ptr.hpp): the reclaiming schemes but nbr, nbr_plus
// and lfrc, each with its default parameters, and the default (hp with an amortized free).
using rc_schemes = ::testing::Types<
    reclaim::debra<>, reclaim::ebr<>, reclaim::ner<>, reclaim::qsbr<>, reclaim::rcu<>,
    reclaim::token_naive<>, reclaim::token_pass_first<>, reclaim::token_periodic<>,
    reclaim::token_af<>, reclaim::stamp_it<>, reclaim::hp<>, reclaim::default_rc_scheme,
    RECLAIM_TEST_HP_FAMILY,
    RECLAIM_TEST_ERA_AND_BATCH_SCHEMES>;
RECLAIM_TYPED_SUITE(rc_ptr_suite, rc_schemes);

constexpr long alive = 0x5a5a5a5a;
constexpr long dead = -1;

// A payload that checks that it is alive when read and counts its destruction per id.
struct item {
  item(long i, std::vector<std::atomic<int>>* per_id, std::atomic<long>* total)
      : id(i), destroyed_per_id(per_id), destroyed(total) {}
  ~item() {
    EXPECT_EQ(magic, alive) << "destroyed twice (id " << id << ")";
    magic = dead;
    if (destroyed_per_id) (*destroyed_per_id)[static_cast<std::size_t>(id)].fetch_add(1);
    destroyed->fetch_add(1);
  }
  item(const item&) = delete;
  item& operator=(const item&) = delete;

  long id;
  volatile long magic = alive;
  std::vector<std::atomic<int>>* destroyed_per_id;
  std::atomic<long>* destroyed;
};


TYPED_TEST(rc_ptr_suite, single_thread_semantics) {
  using S = TypeParam;
  std::atomic<long> destroyed{0};
  typename S::domain d;
  {
    auto make = [&](long id) { return reclaim::make_rc_in<item, S>(d, id, nullptr, &destroyed); };
    rc_ptr<item> a = make(1), b = make(2), c = make(3);
    EXPECT_EQ(a.use_count(), 1);
    {
      rc_ptr<item> a2 = a;
      EXPECT_EQ(a.use_count(), 2);
    }
    EXPECT_EQ(a.use_count(), 1);

    atomic_rc_ptr<item, S> loc(d);
    EXPECT_TRUE(loc.is_lock_free());
    EXPECT_FALSE(loc.load());
    loc.store(a);
    EXPECT_EQ(a.use_count(), 2);
    rc_ptr<item> l = loc.load();
    EXPECT_EQ(l, a);
    EXPECT_EQ(l->id, 1);
    EXPECT_EQ(a.use_count(), 3);

    // exchange: the result is counted anew; the location's reference is dropped after a grace
    // period.
    rc_ptr<item> old = loc.exchange(b);
    EXPECT_EQ(old, a);
    EXPECT_EQ(b.use_count(), 2);
    settle_rc<S>(d);
    EXPECT_EQ(a.use_count(), 3) << "a, l, old";

    // A failed CAS loads what the location holds into expected.
    rc_ptr<item> expected = a;
    EXPECT_FALSE(loc.compare_exchange_strong(expected, c));
    EXPECT_EQ(expected, b);
    EXPECT_EQ(c.use_count(), 1) << "a failed CAS leaves desired's count alone";
    EXPECT_TRUE(loc.compare_exchange_strong(expected, c, std::memory_order_acq_rel,
                                            std::memory_order_acquire));
    EXPECT_EQ(loc.load(), c);
    expected = c;
    while (!loc.compare_exchange_weak(expected, a)) {
      ASSERT_EQ(expected, c) << "only a spurious failure may happen here";
    }
    EXPECT_EQ(loc.load(), a);
    settle_rc<S>(d);
    EXPECT_EQ(b.use_count(), 1) << "the location's reference to b was dropped";
    EXPECT_EQ(c.use_count(), 2) << "c and expected; the location's reference was dropped";
    EXPECT_EQ(a.use_count(), 4) << "a, l, old, the location";

    // A snapshot does not count; converting it does.
    {
      snapshot_ptr<item, S> s = loc.get_snapshot();
      ASSERT_TRUE(s);
      EXPECT_EQ(s->id, 1);
      EXPECT_EQ(a.use_count(), 4);
      rc_ptr<item> r = s;
      EXPECT_EQ(a.use_count(), 5);
      EXPECT_TRUE(s == r);
    }
    // Storing the same object again, and null.
    loc.store(a);
    loc.store(nullptr);
    EXPECT_FALSE(loc.load());
    settle_rc<S>(d);
    EXPECT_EQ(a.use_count(), 3);
    EXPECT_EQ(destroyed.load(), 0);
    l.reset();
    old.reset();
    expected.reset();
    b.reset();
    EXPECT_EQ(destroyed.load(), 1) << "b had no other reference";
    c.reset();
    EXPECT_EQ(destroyed.load(), 2);
    loc.store(a);
  }
  // The location's destructor dropped a's last reference at once.
  EXPECT_EQ(destroyed.load(), 3);
  settle_rc<S>(d);
}

// One object stored in two locations and dropped from both, the second drop finding the first
// one's retire in flight, and its last rc_ptr dropped: the locations' references are pending.
template <class S>
void drop_from_two_locations(typename S::domain& d, std::atomic<long>& destroyed) {
  atomic_rc_ptr<item, S> x(d), y(d);
  rc_ptr<item> a = reclaim::make_rc_in<item, S>(d, 1, nullptr, &destroyed);
  x.store(a);
  y.store(a);
  EXPECT_EQ(a.use_count(), 3);
  x.store(nullptr);
  y.store(nullptr);
}

// The object lives until the scheme runs the deleter.
TYPED_TEST(rc_ptr_suite, deferred_decrement_keeps_the_object) {
  using S = TypeParam;
  std::atomic<long> destroyed{0};
  typename S::domain d;
  drop_from_two_locations<S>(d, destroyed);
  EXPECT_EQ(destroyed.load(), 0) << "freed before the grace period";
  settle_rc<S>(d);
  EXPECT_EQ(destroyed.load(), 1);
  // The second drop found the first one's retire in flight, so the scheme's deleter retired the
  // block again (from inside the scheme's free): two retires, both freed.
  EXPECT_EQ(d.stats().retired, 2u);
  EXPECT_EQ(d.stats().freed, 2u);
}

// compare_and_swap: succeeds only on expected's object, never updates expected; an object cannot
// come back at the same address while expected holds it (no ABA).
TYPED_TEST(rc_ptr_suite, compare_and_swap_with_a_snapshot_or_an_rc_ptr) {
  using S = TypeParam;
  std::atomic<long> destroyed{0};
  typename S::domain d;
  {
    auto make = [&](long id) { return reclaim::make_rc_in<item, S>(d, id, nullptr, &destroyed); };
    rc_ptr<item> a = make(1), b = make(2);
    atomic_rc_ptr<item, S> loc(a, d);
    {
      snapshot_ptr<item, S> s = loc.get_snapshot(std::memory_order_acquire);
      EXPECT_TRUE(loc.compare_and_swap(s, b, std::memory_order_release));
      EXPECT_EQ(s->id, 1) << "the snapshot still holds the object it read";
      EXPECT_FALSE(loc.compare_and_swap(s, make(3))) << "the location holds b now";
      EXPECT_EQ(loc.load()->id, 2);
    }
    EXPECT_FALSE(loc.compare_and_swap(a, make(4)));
    EXPECT_TRUE(loc.compare_and_swap(b, a));
    EXPECT_TRUE(loc.compare_and_swap(a, nullptr));
    rc_ptr<item> empty;
    EXPECT_TRUE(loc.compare_and_swap(empty, b));
    // A -> B -> A is a success for a CAS that expects A, as with std::atomic<shared_ptr>: the
    // same object, not a new one at a reused address (expected's reference keeps it).
    rc_ptr<item> expected = loc.load();
    loc.store(a);
    loc.store(b);
    EXPECT_TRUE(loc.compare_exchange_strong(expected, a));
    settle_rc<S>(d);
    EXPECT_EQ(destroyed.load(), 2) << "3 and 4 never stored, so freed when dropped";
    EXPECT_EQ(a.use_count(), 2);
    EXPECT_EQ(b.use_count(), 2) << "b and expected";
  }
  settle_rc<S>(d);
  EXPECT_EQ(destroyed.load(), 4);
}

// Every memory order std::atomic<std::shared_ptr> accepts, and a message passed through a store
// and a load (what tsan checks: the object's fields are published by the store).
TYPED_TEST(rc_ptr_suite, memory_orders_publish_the_object) {
  using S = TypeParam;
  typename S::domain d;
  struct message {
    long payload[4];
  };
  {
    atomic_rc_ptr<message, S> loc(d);
    for (auto o : {std::memory_order_relaxed, std::memory_order_acquire,
                   std::memory_order_seq_cst})
      EXPECT_FALSE(loc.load(o));
    std::thread writer([&] {
      for (long i = 1; i <= 200; ++i) {
        auto m = reclaim::make_rc_in<message, S>(d, message{{i, i, i, i}});
        switch (i % 4) {
          case 0: loc.store(m, std::memory_order_release); break;
          case 1: loc.exchange(m, std::memory_order_acq_rel); break;
          case 2: loc.store(m, std::memory_order_relaxed); break;
          default: {
            rc_ptr<message> e = loc.load(std::memory_order_relaxed);
            while (!loc.compare_exchange_weak(e, m, std::memory_order_release,
                                              std::memory_order_relaxed)) {
            }
          }
        }
      }
    });
    long last = 0;
    while (last < 200) {
      rc_ptr<message> m = loc.load(std::memory_order_acquire);
      if (!m) continue;
      for (long v : m->payload) ASSERT_EQ(v, m->payload[0]);
      ASSERT_GE(m->payload[0], last) << "stores are seen in order";
      last = m->payload[0];
    }
    writer.join();
  }
  settle_rc<S>(d);
  EXPECT_EQ(d.stats().pending, 0u);
}

// A custom deleter (adopt_rc) and an allocator (allocate_rc) as shared_ptr allows them; hash,
// comparisons and owner_before.
template <class T>
struct counting_allocator {
  using value_type = T;
  std::atomic<long>* live;  // stateful: the blocks it allocated and has not freed
  explicit counting_allocator(std::atomic<long>* l) noexcept : live(l) {}
  template <class U>
  counting_allocator(const counting_allocator<U>& o) noexcept : live(o.live) {}  // NOLINT
  T* allocate(std::size_t n) {
    live->fetch_add(1);
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    live->fetch_sub(1);
    std::allocator<T>().deallocate(p, n);
  }
  template <class U>
  bool operator==(const counting_allocator<U>& o) const noexcept {
    return live == o.live;
  }
};

TYPED_TEST(rc_ptr_suite, deleters_allocators_and_comparisons) {
  using S = TypeParam;
  std::atomic<long> destroyed{0}, blocks{0}, deleted{0};
  typename S::domain d;
  {
    auto deleter = [&](item* p) {
      deleted.fetch_add(1);
      delete p;
    };
    rc_ptr<item> adopted =
        reclaim::adopt_rc_in<S>(d, new item(1, nullptr, &destroyed), deleter);
    EXPECT_FALSE(reclaim::adopt_rc_in<S>(d, static_cast<item*>(nullptr)));
    rc_ptr<item> allocated = reclaim::allocate_rc_in<item, S>(
        d, counting_allocator<item>(&blocks), 2, nullptr, &destroyed);
    EXPECT_EQ(blocks.load(), 1) << "one block, from the allocator";
    EXPECT_EQ(allocated->id, 2);
    atomic_rc_ptr<item, S> loc(d);
    loc.store(adopted);
    loc.store(allocated);  // drops adopted through the scheme
    EXPECT_EQ(loc.get_snapshot()->id, 2);
    adopted.reset();
    allocated.reset();
    EXPECT_EQ(destroyed.load(), 0);
    settle_rc<S>(d);
    EXPECT_EQ(deleted.load(), 1) << "the deleter ran once the location's drop was applied";
    loc.store(nullptr);
    settle_rc<S>(d);
    EXPECT_EQ(destroyed.load(), 2);
    EXPECT_EQ(blocks.load(), 0) << "the block went back to the allocator";

    rc_ptr<item> x = reclaim::make_rc_in<item, S>(d, 3, nullptr, &destroyed), x2 = x;
    rc_ptr<item> y = reclaim::make_rc_in<item, S>(d, 4, nullptr, &destroyed);
    EXPECT_TRUE(x == x2);
    EXPECT_TRUE(x != y);
    EXPECT_TRUE(x != nullptr);
    EXPECT_TRUE(rc_ptr<item>() == nullptr);
    EXPECT_EQ(x < y, std::less<item*>()(x.get(), y.get()));
    EXPECT_EQ(x.owner_before(y), std::less<item*>()(x.get(), y.get()));
    EXPECT_FALSE(x.owner_before(x2));
    EXPECT_EQ(std::hash<rc_ptr<item>>()(x), std::hash<item*>()(x.get()));
  }
  settle_rc<S>(d);
  EXPECT_EQ(destroyed.load(), 4);
}

// A domain destroyed while those drops are pending (the in-flight one's deleter would retire the
// block again): the destroying thread applies them all, once.
TYPED_TEST(rc_ptr_suite, domain_destroyed_with_drops_pending) {
  using S = TypeParam;
  std::atomic<long> destroyed{0};
  {
    typename S::domain d;
    drop_from_two_locations<S>(d, destroyed);
    EXPECT_EQ(destroyed.load(), 0);
  }
  EXPECT_EQ(destroyed.load(), 1);
}

// Short-lived threads (a pool's churn): each loads, stores and exits, leaving its garbage to the
// domain; every object is destroyed once.
TYPED_TEST(rc_ptr_suite, thread_churn) {
  using S = TypeParam;
  std::atomic<long> destroyed{0}, created{0};
  typename S::domain d;
  {
    atomic_rc_ptr<item, S> loc(d);
    for (int round = 0; round < (tsan ? 8 : 20); ++round) {
      std::vector<std::thread> threads;
      for (int t = 0; t < 3; ++t)
        threads.emplace_back([&] {
          for (int i = 0; i < 20; ++i) {
            created.fetch_add(1);
            loc.store(reclaim::make_rc_in<item, S>(d, i, nullptr, &destroyed));
            rc_ptr<item> r = loc.load();
            ASSERT_TRUE(r);
            EXPECT_EQ(r->magic, alive);
          }
        });
      for (auto& t : threads) t.join();
    }
  }
  settle_rc<S>(d);
  EXPECT_EQ(destroyed.load(), created.load());
}

TYPED_TEST(rc_ptr_suite, writers_and_readers) {
  using S = TypeParam;
  constexpr long max_ids = 1 << 20;
  std::vector<std::atomic<int>> per_id(max_ids);
  std::atomic<long> destroyed{0}, created{0};
  std::atomic<long> next_id{0};
  std::atomic<bool> stop{false};
  std::atomic<long> reads{0};
  // Short, since it runs under every scheme (26): 50 ms under the sanitizers, 100 ms otherwise.
  const auto duration = std::min<std::chrono::milliseconds>(
      stress_time(), std::chrono::milliseconds(sanitized ? 50 : 100));
  typename S::domain d;
  {
    atomic_rc_ptr<item, S> locs[2] = {atomic_rc_ptr<item, S>(d), atomic_rc_ptr<item, S>(d)};
    auto fresh = [&] {
      long id = next_id.fetch_add(1);
      if (id >= max_ids) return rc_ptr<item>();
      created.fetch_add(1);
      return reclaim::make_rc_in<item, S>(d, id, &per_id, &destroyed);
    };
    auto check = [&](const item& x) {
      EXPECT_EQ(x.magic, alive) << "read after destruction (id " << x.id << ")";
    };
    std::vector<std::thread> threads;
    for (int w = 0; w < 2; ++w)
      threads.emplace_back([&, w] {
        for (long i = 0; !stop.load(std::memory_order_relaxed); ++i) {
          rc_ptr<item> r = fresh();
          if (!r) break;
          auto& loc = locs[(i + w) & 1];
          switch (i % 4) {
            case 0: loc.store(r); break;
            case 1: {
              rc_ptr<item> old = loc.exchange(r);
              if (old) check(*old);
              break;
            }
            case 2: {
              rc_ptr<item> expected = loc.load();
              if (expected) check(*expected);
              while (!loc.compare_exchange_weak(expected, r))
                if (expected) check(*expected);
              break;
            }
            default:
              // The same object in both locations: dropped from both, maybe at once.
              locs[0].store(r);
              locs[1].store(r);
          }
          check(*r);
        }
      });
    for (int rd = 0; rd < 2; ++rd)
      threads.emplace_back([&, rd] {
        for (long i = 0; !stop.load(std::memory_order_relaxed); ++i) {
          auto& loc = locs[(i + rd) & 1];
          if (i % 2) {
            rc_ptr<item> r = loc.load();
            if (r) check(*r);
          } else {
            snapshot_ptr<item, S> s = loc.get_snapshot();
            if (s) {
              check(*s);
              if (i % 8 == 0) {
                rc_ptr<item> r = s;
                s.reset();
                check(*r);
              }
            }
          }
          reads.fetch_add(1, std::memory_order_relaxed);
        }
      });
    std::this_thread::sleep_for(duration);
    stop.store(true);
    for (auto& t : threads) t.join();
    settle_rc<S>(d);
    // Every count exact: each location's object is held by the location and our load only.
    for (auto& loc : locs) {
      rc_ptr<item> r = loc.load();
      if (!r) continue;
      check(*r);
      long expected_count = 2 + (locs[0].load() == locs[1].load() ? 1 : 0);
      EXPECT_EQ(r.use_count(), expected_count);
    }
    rc_ptr<item> h0 = locs[0].load(), h1 = locs[1].load();
    long held = (h0 ? 1 : 0) + (h1 && h1 != h0 ? 1 : 0);
    EXPECT_EQ(destroyed.load(), created.load() - held)
        << "everything but what the locations hold is destroyed";
  }
  settle_rc<S>(d);
  EXPECT_EQ(destroyed.load(), created.load());
  long n = next_id.load() < max_ids ? next_id.load() : max_ids;
  for (long i = 0; i < created.load() && i < n; ++i)
    ASSERT_EQ(per_id[static_cast<std::size_t>(i)].load(), 1) << "id " << i;
  EXPECT_GT(reads.load(), 0);
  std::printf("[  rc_ptr  ] %s: %ld objects stored, %ld reads, %llu retires\n",
              std::string(S::name).c_str(), created.load(), reads.load(),
              static_cast<unsigned long long>(d.stats().retired));
}

}  // namespace
