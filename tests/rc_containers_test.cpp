// SPDX-License-Identifier: MIT
// The containers written with counted pointers (issue 30): rc_stack (ds/rc_stack.hpp) and
// persistent_map / persistent_set (ds/persistent_map.hpp), over debra, hp, he and hyaline. Their
// semantics on one thread; a version that keeps its contents through later updates; stresses with
// exact accounting (every value pushed is popped exactly once; the map's final contents are what
// the successful operations imply, and every version a reader takes is sorted and as large as it
// says); every element made is destroyed exactly once, never before its last use, once the
// containers and versions are gone and the domain is settled; and a long stack destroyed without
// recursion.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "reclaim/ds/persistent_map.hpp"
#include "reclaim/ds/rc_stack.hpp"
#include "suite_support.hpp"
#include "test_support.hpp"

namespace {

using reclaim::ds::persistent_map;
using reclaim::ds::persistent_set;
using reclaim::ds::rc_stack;
using reclaim_test::scaled;
using reclaim_test::settle_rc;

using rc_container_schemes =
    ::testing::Types<reclaim::debra<>, reclaim::hp<>, reclaim::he<>, reclaim::hyaline<>>;
RECLAIM_TYPED_SUITE(rc_containers, rc_container_schemes);


constexpr long alive = 0x5a5a5a5a;
constexpr long dead = -1;

// How many elements were made and destroyed (copies and moves included).
struct tally {
  std::atomic<long> made{0}, destroyed{0};
};

// An element that counts itself in a tally and checks, whenever it is read, copied or destroyed,
// that it has not been destroyed yet.
class counted {
 public:
  counted(long v, tally& t) : value_(v), tally_(&t) { tally_->made.fetch_add(1); }
  counted(const counted& o) : value_(o.get()), tally_(o.tally_) { tally_->made.fetch_add(1); }
  counted(counted&& o) noexcept : value_(o.get()), tally_(o.tally_) { tally_->made.fetch_add(1); }
  counted& operator=(const counted&) = delete;
  ~counted() {
    EXPECT_EQ(magic_, alive) << "destroyed twice (value " << value_ << ")";
    magic_ = dead;
    tally_->destroyed.fetch_add(1);
  }
  long get() const {
    EXPECT_EQ(magic_, alive) << "read after its destruction";
    return value_;
  }

 private:
  long value_;
  tally* tally_;
  volatile long magic_ = alive;
};

template <class S>
void expect_all_destroyed(typename S::domain& d, const tally& t) {
  settle_rc<S>(d);
  EXPECT_GT(t.made.load(), 0);
  EXPECT_EQ(t.made.load(), t.destroyed.load());
}

// The keys (and values) of a version, in the order for_each gives them.
template <class Version>
std::vector<std::pair<long, long>> contents(const Version& v) {
  std::vector<std::pair<long, long>> out;
  v.for_each([&](std::int64_t k, const counted& value) { out.emplace_back(k, value.get()); });
  return out;
}

TYPED_TEST(rc_containers, stack_single_thread) {
  using S = TypeParam;
  tally t;
  typename S::domain d;
  {
    rc_stack<counted, S> s(d);
    EXPECT_TRUE(s.empty());
    EXPECT_FALSE(s.pop());
    for (long i = 0; i < 10; ++i) s.push(counted(i, t));
    s.emplace(10, t);
    EXPECT_FALSE(s.empty());
    for (long i = 10; i >= 5; --i) {  // last in, first out
      std::optional<counted> v = s.pop();
      ASSERT_TRUE(v);
      EXPECT_EQ(v->get(), i);
    }
    // Five values are left for the destructor.
  }
  expect_all_destroyed<S>(d, t);
}

TYPED_TEST(rc_containers, map_single_thread_matches_a_std_map) {
  using S = TypeParam;
  tally t;
  typename S::domain d;
  {
    persistent_map<std::int64_t, counted, S> m(d);
    std::map<long, long> model;
    std::mt19937 rng(7);
    for (int i = 0; i < 3000; ++i) {
      const long k = static_cast<long>(rng() % 200), v = static_cast<long>(rng());
      switch (rng() % 4) {
        case 0:
          EXPECT_EQ(m.insert(k, counted(v, t)), model.emplace(k, v).second);
          break;
        case 1:
          EXPECT_EQ(m.insert_or_assign(k, counted(v, t)),
                    model.insert_or_assign(k, v).second);
          break;
        case 2:
          EXPECT_EQ(m.erase(k), model.erase(k) == 1);
          break;
        default: {
          const auto found = m.find(k);
          const auto it = model.find(k);
          ASSERT_EQ(found.has_value(), it != model.end());
          if (found) {
            EXPECT_EQ(found->get(), it->second);
          }
          EXPECT_EQ(m.contains(k), it != model.end());
        }
      }
      ASSERT_EQ(m.size(), model.size());
    }
    const auto v = m.snapshot();
    EXPECT_EQ(v.size(), model.size());
    const std::vector<std::pair<long, long>> in_order(model.begin(), model.end());
    EXPECT_EQ(contents(v), in_order);
  }
  expect_all_destroyed<S>(d, t);
}

TYPED_TEST(rc_containers, set_and_string_keys) {
  using S = TypeParam;
  typename S::domain d;
  {
    persistent_set<std::int64_t, S> s(d);
    for (std::int64_t k : {5, 3, 9, 1, 7, 3}) s.insert(k);
    EXPECT_EQ(s.size(), 5u);
    EXPECT_TRUE(s.erase(3));
    EXPECT_FALSE(s.erase(3));
    EXPECT_TRUE(s.contains(9));
    EXPECT_FALSE(s.contains(3));
    std::vector<std::int64_t> keys;
    s.snapshot().for_each([&](std::int64_t k) { keys.push_back(k); });
    EXPECT_EQ(keys, (std::vector<std::int64_t>{1, 5, 7, 9}));

    persistent_map<std::string, std::string, S, std::greater<>> names(d);
    EXPECT_TRUE(names.insert("b", "bee"));
    EXPECT_TRUE(names.insert("a", "ay"));
    EXPECT_FALSE(names.insert("a", "other"));
    EXPECT_EQ(names.find("a"), "ay");
    EXPECT_FALSE(names.insert_or_assign("a", "eh"));
    EXPECT_EQ(names.find("a"), "eh");
    EXPECT_EQ(names.find("c"), std::nullopt);
    std::string order;
    names.snapshot().for_each([&](const std::string& k, const std::string&) { order += k; });
    EXPECT_EQ(order, "ba");  // std::greater
  }
  settle_rc<S>(d);
}

// A version taken before many updates keeps its contents, on another thread too; and the
// versions' nodes are all freed once they are dropped.
TYPED_TEST(rc_containers, version_outlives_updates) {
  using S = TypeParam;
  tally t;
  typename S::domain d;
  {
    persistent_map<std::int64_t, counted, S> m(d);
    for (long k = 0; k < 100; ++k) m.insert(k, counted(k * 3, t));
    auto before = m.snapshot();
    const auto expected = contents(before);
    ASSERT_EQ(expected.size(), 100u);
    for (long k = 0; k < 100; k += 2) m.erase(k);
    for (long k = 100; k < 300; ++k) m.insert(k, counted(-k, t));
    for (long k = 1; k < 100; k += 2) m.insert_or_assign(k, counted(0, t));
    EXPECT_EQ(m.size(), 250u);
    std::thread reader([&, v = before] {
      EXPECT_EQ(v.size(), 100u);
      EXPECT_EQ(contents(v), expected);
      EXPECT_TRUE(v.contains(0));
      EXPECT_EQ(v.find(1)->get(), 3);
    });
    reader.join();
    EXPECT_EQ(contents(before), expected);
    EXPECT_EQ(m.snapshot().find(1)->get(), 0);
    EXPECT_FALSE(m.snapshot().contains(0));
  }
  expect_all_destroyed<S>(d, t);
}

// Threads push distinct values and pop, in rounds of new threads (churn); what is left is drained.
// Every value comes out exactly once.
TYPED_TEST(rc_containers, stack_stress_every_value_popped_once) {
  using S = TypeParam;
  constexpr int threads = 3, rounds = 3;
  const long per_thread = scaled(8000);
  const long total = threads * rounds * per_thread;
  tally t;
  typename S::domain d;
  {
    rc_stack<counted, S> s(d);
    std::vector<std::atomic<int>> popped(total);
    auto take = [&](const counted& v) {
      const long i = v.get();
      ASSERT_TRUE(i >= 0 && i < total);
      popped[static_cast<std::size_t>(i)].fetch_add(1, std::memory_order_relaxed);
    };
    for (int r = 0; r < rounds; ++r) {
      std::vector<std::thread> workers;
      for (int w = 0; w < threads; ++w)
        workers.emplace_back([&, first = (r * threads + w) * per_thread] {
          for (long i = 0; i < per_thread; ++i) {
            s.emplace(first + i, t);
            if (i % 3 != 0)
              if (auto v = s.pop()) take(*v);
          }
        });
      for (auto& w : workers) w.join();
    }
    while (auto v = s.pop()) take(*v);
    EXPECT_TRUE(s.empty());
    long once = 0;
    for (auto& p : popped) once += p.load() == 1;
    EXPECT_EQ(once, total);
  }
  expect_all_destroyed<S>(d, t);
}

// Two writers insert, assign and erase keys of their own and shared keys while a reader checks the
// versions it takes (sorted, as large as they say, each value its key's) and looks keys up. The
// final contents are what the successful operations imply: a writer's own keys exactly as its
// model says; a shared key present iff its successful inserts outnumber its erases (by one).
TYPED_TEST(rc_containers, map_stress_contents_match_the_operations) {
  using S = TypeParam;
  constexpr int writers = 2;
  constexpr long keys = 48;
  const long ops = scaled(12000);
  tally t;
  typename S::domain d;
  {
    persistent_map<std::int64_t, counted, S> m(d);
    // A value is key * 8 + the writer that wrote it (1 or 2).
    auto value_ok = [](long k, long v) { return v / 8 == k && v % 8 >= 1 && v % 8 <= writers; };
    std::vector<long> shared_net(keys);  // per key: successful inserts - erases, all writers
    std::vector<std::map<long, bool>> own(writers);
    std::vector<std::vector<long>> nets(writers, std::vector<long>(keys));
    std::atomic<int> running{writers};
    std::atomic<long> versions{0}, bad{0};
    std::thread reader([&] {
      std::mt19937 rng(99);
      do {
        const auto v = m.snapshot();
        long last = -1, seen = 0;
        v.for_each([&](std::int64_t k, const counted& value) {
          if (k <= last || !value_ok(k, value.get())) bad.fetch_add(1);
          last = k;
          ++seen;
        });
        if (static_cast<std::size_t>(seen) != v.size()) bad.fetch_add(1);
        const long k = static_cast<long>(rng() % (keys * (writers + 1)));
        if (auto found = m.find(k); found && !value_ok(k, found->get())) bad.fetch_add(1);
        versions.fetch_add(1);
      } while (running.load() > 0);
    });
    std::vector<std::thread> threads;
    for (int w = 0; w < writers; ++w)
      threads.emplace_back([&, w] {
        std::mt19937 rng(static_cast<unsigned>(w + 1));
        for (long i = 0; i < ops; ++i) {
          const bool shared = rng() % 2;
          const long slot = static_cast<long>(rng() % keys);
          const long k = shared ? slot : keys * (w + 1) + slot;
          const long v = k * 8 + w + 1;
          long change = 0;
          switch (rng() % 3) {
            case 0: change = m.insert(k, counted(v, t)) ? 1 : 0; break;
            case 1: change = m.insert_or_assign(k, counted(v, t)) ? 1 : 0; break;
            default: change = m.erase(k) ? -1 : 0;
          }
          if (shared) nets[w][slot] += change;
          else if (change) own[w][k] = change > 0;
        }
        running.fetch_sub(1);
      });
    for (auto& th : threads) th.join();
    reader.join();
    EXPECT_EQ(bad.load(), 0);
    EXPECT_GT(versions.load(), 0);
    std::map<long, bool> expected;
    for (long slot = 0; slot < keys; ++slot) {
      long net = 0;
      for (auto& n : nets) net += n[static_cast<std::size_t>(slot)];
      ASSERT_TRUE(net == 0 || net == 1) << "key " << slot << ": net " << net;
      if (net) expected[slot] = true;
    }
    for (auto& o : own)
      for (auto [k, present] : o)
        if (present) expected[k] = true;
    std::vector<long> final_keys, expected_keys;
    m.snapshot().for_each([&](std::int64_t k, const counted& v) {
      EXPECT_TRUE(value_ok(k, v.get()));
      final_keys.push_back(k);
    });
    for (auto [k, present] : expected) expected_keys.push_back(k);
    EXPECT_EQ(final_keys, expected_keys);
    EXPECT_EQ(m.size(), expected_keys.size());
  }
  expect_all_destroyed<S>(d, t);
}

// A long stack, half of it popped (each popped node keeps the chain below it), destroyed: the
// chain is dropped in a loop, not by a recursion as deep as the stack (which would overflow the
// thread's stack). Single-threaded, so tsan has nothing to find here: a short stack there.
TYPED_TEST(rc_containers, long_stack_destroyed_without_recursion) {
  using S = TypeParam;
  constexpr long n = RECLAIM_TEST_TSAN ? 10'000 : RECLAIM_TEST_SANITIZED ? 200'000 : 1'000'000;
  typename S::domain d;
  {
    rc_stack<long, S> s(d);
    for (long i = 0; i < n; ++i) s.push(i);
    long sum = 0;
    for (long i = 0; i < n / 2; ++i) {
      sum += *s.pop();
      // he advances its clock only with allocations: while a thread only pops, its own snapshot
      // protects the era of everything it retired, and each scan walks all of it.
      if (i % 4 == 0) {
        s.push(0);
        EXPECT_EQ(s.pop(), 0);
      }
    }
    EXPECT_EQ(sum, (n - 1 + n / 2) * (n / 2) / 2);
  }
  settle_rc<S>(d);
}

}  // namespace
