// SPDX-License-Identifier: MIT
// The map interface users expect (issue 28): insert_or_assign and update on the Harris-Michael
// maps, heterogeneous lookup with the default hash and comparison of a std::string-keyed map, a
// configurable bucket count, and the blocking and timed pops of ms_queue and treiber_stack. An
// executable of its own: it replaces operator new to count this thread's allocations (a
// string_view lookup must construct no std::string).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstddef>
#include <cstdlib>
#include <map>
#include <new>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include "test_support.hpp"

// Every form replaced, so that whatever allocates through one frees through its pair (ASan checks).
namespace {
constinit thread_local long allocations = 0;  // operator new calls on this thread

void* allocate(std::size_t n, std::size_t align = 0) noexcept {
  ++allocations;
  if (n == 0) n = 1;
  if (align <= alignof(std::max_align_t)) return std::malloc(n);
  return std::aligned_alloc(align, (n + align - 1) / align * align);
}
void* allocate_or_throw(std::size_t n, std::size_t align = 0) {
  if (void* p = allocate(n, align)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(std::size_t n) { return allocate_or_throw(n); }
void* operator new[](std::size_t n) { return allocate_or_throw(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return allocate(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return allocate(n); }
void* operator new(std::size_t n, std::align_val_t a) {
  return allocate_or_throw(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return allocate_or_throw(n, static_cast<std::size_t>(a));
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace {

using namespace std::chrono_literals;
using reclaim_test::eventually;
using reclaim_test::scaled;
using reclaim::ds::hm_hashmap;
using reclaim::ds::hm_hashmap_restart;
using reclaim::ds::hm_list_map;
using reclaim::ds::hm_list_restart_map;

// One map form under one scheme; map<K, V> is that form for those types.
template <template <class, class, class> class Map, class S>
struct map_case {
  template <class K, class V>
  using map = Map<K, V, S>;
  using scheme = S;
};
template <class K, class V, class S>
using hashmap = hm_hashmap<K, V, S>;
template <class K, class V, class S>
using hashmap_restart = hm_hashmap_restart<K, V, S>;

// Each form under the schemes the issue names (an epoch scheme, hazard pointers, eras, batch
// reference counting, neutralization, reference counting), nbr_plus through the restart forms.
using map_cases = ::testing::Types<
    map_case<hm_list_map, reclaim::debra<>>, map_case<hm_list_map, reclaim::hp<>>,
    map_case<hm_list_map, reclaim::lfrc<>>, map_case<hashmap, reclaim::debra<>>,
    map_case<hashmap, reclaim::he<>>, map_case<hashmap, reclaim::crystalline_l<>>,
    map_case<hashmap, reclaim::lfrc<>>, map_case<hm_list_restart_map, reclaim::nbr_plus<>>,
    map_case<hm_list_restart_map, reclaim::hp<>>, map_case<hashmap_restart, reclaim::nbr_plus<>>,
    map_case<hashmap_restart, reclaim::he<>>>;

template <class Case>
class map_api : public ::testing::Test {};
TYPED_TEST_SUITE(map_api, map_cases);

TYPED_TEST(map_api, insert_or_assign_and_update_follow_std_map) {
  using S = typename TypeParam::scheme;
  typename S::domain domain;
  {
    typename TypeParam::template map<std::string, std::string> map(domain);
    std::map<std::string, std::string> model;
    std::mt19937 rng(7);
    for (int i = 0; i < 3000; ++i) {
      // Keys and values longer than the inline buffer: a leaked or twice-freed node shows in ASan.
      const std::string key = "a key stored on the heap " + std::to_string(rng() % 64);
      const std::string value = "a value stored on the heap " + std::to_string(i);
      switch (rng() % 4) {
        case 0: {
          const bool inserted = !model.contains(key);
          model[key] = value;
          ASSERT_EQ(map.insert_or_assign(key, value), inserted);
          break;
        }
        case 1: {
          const auto it = model.find(key);
          const bool present = it != model.end();
          if (present) it->second += "+";
          ASSERT_EQ(map.update(key, [](const std::string& v) { return v + "+"; }), present);
          break;
        }
        case 2: ASSERT_EQ(map.erase(key), model.erase(key) == 1); break;
        default: {
          const auto it = model.find(key);
          const std::optional<std::string> found = map.find(key);
          ASSERT_EQ(found.has_value(), it != model.end());
          if (found) {
            ASSERT_EQ(*found, it->second);
          }
        }
      }
    }
    ASSERT_TRUE(map.unsafe_well_formed());
    std::map<std::string, std::string> contents;
    map.unsafe_for_each([&](const std::string& k, const std::string& v) { contents.emplace(k, v); });
    EXPECT_EQ(contents, model);
  }
  domain.barrier();
}

// Updaters add 1 to shared keys while readers look them up: a key is never absent (a replacement
// is one step), each reader sees each key's value never decrease, and at the end every key's
// value is the number of updates that returned true for it.
TYPED_TEST(map_api, concurrent_updates_never_hide_a_key_and_count_exactly) {
  using S = typename TypeParam::scheme;
  constexpr int keys = 8, updaters = 2, readers = 2;
  typename S::domain domain;
  {
    typename TypeParam::template map<std::int64_t, std::int64_t> map(domain);
    for (int k = 0; k < keys; ++k) ASSERT_TRUE(map.insert(k, 0));
    const long updates = scaled(20000);
    std::atomic<int> running{updaters};
    std::atomic<long> absent{0}, decreased{0};
    std::vector<std::vector<long>> done(updaters, std::vector<long>(keys));
    std::vector<std::thread> threads;
    for (int t = 0; t < updaters; ++t)
      threads.emplace_back([&, t] {
        std::mt19937 rng(static_cast<unsigned>(t));
        for (long i = 0; i < updates; ++i) {
          const int k = static_cast<int>(rng() % keys);
          if (map.update(k, [](std::int64_t v) { return v + 1; })) ++done[t][k];
        }
        running.fetch_sub(1);
      });
    for (int t = 0; t < readers; ++t)
      threads.emplace_back([&] {
        std::vector<std::int64_t> last(keys, 0);
        while (running.load() > 0)
          for (int k = 0; k < keys; ++k) {
            const std::optional<std::int64_t> v = map.find(k);
            if (!v) {
              absent.fetch_add(1);
              continue;
            }
            if (*v < last[k]) decreased.fetch_add(1);
            last[k] = *v;
            if (!map.contains(k)) absent.fetch_add(1);
          }
      });
    for (auto& t : threads) t.join();
    EXPECT_EQ(absent.load(), 0);
    EXPECT_EQ(decreased.load(), 0);
    for (int k = 0; k < keys; ++k) {
      long expected = 0;
      for (const auto& d : done) expected += d[k];
      EXPECT_EQ(map.find(k), std::optional<std::int64_t>(expected)) << "key " << k;
    }
    long total = 0;
    for (const auto& d : done)
      for (long n : d) total += n;
    EXPECT_EQ(total, updates * updaters);  // every key stays present: every update finds it
    EXPECT_TRUE(map.unsafe_well_formed());
  }
  domain.barrier();
}

// insert_or_assign and erase racing on few keys: per key, the inserts that reported an insertion
// minus the erases that reported one is what the map holds at the end (0 or 1), and every value
// found belongs to its key.
TYPED_TEST(map_api, concurrent_insert_or_assign_and_erase_report_exactly) {
  using S = typename TypeParam::scheme;
  constexpr int keys = 4, threads_n = 3;
  typename S::domain domain;
  {
    typename TypeParam::template map<std::int64_t, std::int64_t> map(domain);
    const long ops = scaled(20000);
    std::atomic<long> wrong_value{0};
    std::vector<std::vector<long>> balance(threads_n, std::vector<long>(keys));
    std::vector<std::thread> threads;
    for (int t = 0; t < threads_n; ++t)
      threads.emplace_back([&, t] {
        std::mt19937 rng(static_cast<unsigned>(t + 10));
        for (long i = 0; i < ops; ++i) {
          const int k = static_cast<int>(rng() % keys);
          switch (rng() % 4) {
            case 0:
            case 1:
              // A value encodes its key: value % keys == key.
              if (map.insert_or_assign(k, (i * threads_n + t) * keys + k)) ++balance[t][k];
              break;
            case 2:
              if (map.erase(k)) --balance[t][k];
              break;
            default:
              if (const auto v = map.find(k); v && *v % keys != k) wrong_value.fetch_add(1);
          }
        }
      });
    for (auto& t : threads) t.join();
    EXPECT_EQ(wrong_value.load(), 0);
    for (int k = 0; k < keys; ++k) {
      long sum = 0;
      for (const auto& b : balance) sum += b[k];
      EXPECT_EQ(sum, map.contains(k) ? 1 : 0) << "key " << k;
    }
    EXPECT_TRUE(map.unsafe_well_formed());
  }
  domain.barrier();
}

// With the default template arguments a std::string-keyed map looks up a string_view, a literal
// or a std::string alike, and the first two construct no std::string (no allocation at all: the
// keys are longer than the inline buffer, so a std::string made from one would allocate).
TYPED_TEST(map_api, string_view_lookup_constructs_no_string) {
  using S = typename TypeParam::scheme;
  using map_type = typename TypeParam::template map<std::string, int>;
  static_assert(map_type::template transparent_for<std::string_view>);
  static_assert(!map_type::template transparent_for<std::string>);
  typename S::domain domain;
  {
    map_type map(domain);
    const std::string stored = "a key long enough to live on the heap";
    ASSERT_TRUE(map.insert(stored, 1));
    ASSERT_TRUE(map.insert("another key long enough to live on the heap", 2));
    const std::string_view key = stored;
    ASSERT_TRUE(map.contains(key));  // the thread registers with the domain (and may allocate)
    const long before = allocations;
    const bool found = map.contains(key);
    const bool absent = !map.contains(std::string_view("no such key, long enough to be on the heap"));
    const std::optional<int> value = map.find(key);
    int visited = 0;
    const bool was_visited =
        map.visit("another key long enough to live on the heap", [&](int v) { visited = v; });
    const long during = allocations - before;
    EXPECT_TRUE(found);
    EXPECT_TRUE(absent);
    EXPECT_EQ(value, std::optional<int>(1));
    EXPECT_TRUE(was_visited);
    EXPECT_EQ(visited, 2);
    EXPECT_EQ(during, 0) << "a heterogeneous lookup allocated (constructed a std::string?)";

    EXPECT_TRUE(map.update(key, [](int v) { return v + 10; }));
    EXPECT_EQ(map.find(stored), std::optional<int>(11));
    EXPECT_FALSE(map.update(std::string_view("absent, and long enough to be on the heap"),
                            [](int v) { return v; }));
    EXPECT_TRUE(map.erase(key));
    EXPECT_FALSE(map.contains(stored));
    // A literal short enough to be passed by value if it were a scalar (char[4]) is looked up by
    // reference, as an array.
    ASSERT_TRUE(map.insert("abc", 3));
    EXPECT_TRUE(map.contains("abc"));
    EXPECT_EQ(map.find("abc"), std::optional<int>(3));
    EXPECT_TRUE(map.update("abc", [](int v) { return v + 1; }));
    EXPECT_EQ(map.find("abc"), std::optional<int>(4));
    EXPECT_TRUE(map.erase("abc"));
    EXPECT_FALSE(map.contains("abc"));
    EXPECT_TRUE(map.unsafe_well_formed());
  }
  domain.barrier();
}

TEST(map_api_defaults, string_keys_get_the_transparent_hash_and_comparison_others_std) {
  using S = reclaim::debra<>;
  static_assert(std::is_same_v<hm_hashmap<std::string, int, S>::hasher,
                               reclaim::ds::hash<std::string>>);
  static_assert(std::is_same_v<hm_hashmap<std::string, int, S>::key_compare, std::less<>>);
  static_assert(std::is_same_v<hm_list_map<std::int64_t, int, S>::key_compare,
                               std::less<std::int64_t>>);
  static_assert(!hm_hashmap<std::int64_t, int, S>::transparent_for<int>);
  // The buckets are std::hash<std::string>'s: the standard makes the view's hash equal.
  const std::string s = "some key";
  EXPECT_EQ(reclaim::ds::hash<std::string>{}(s), std::hash<std::string>{}(s));
  EXPECT_EQ(reclaim::ds::hash<std::int64_t>{}(42), std::hash<std::int64_t>{}(42));
}

// The bucket count is the constructor's, rounded up to a power of two, and heterogeneous lookups
// land in the bucket their key's std::string would.
TEST(map_api_buckets, configured_count_with_string_view_lookups) {
  reclaim::debra<>::domain domain;
  {
    hm_hashmap<std::string, int, reclaim::debra<>> map(domain, 1000);
    EXPECT_EQ(map.bucket_count(), 1024u);
    for (int i = 0; i < 2000; ++i) ASSERT_TRUE(map.insert("key " + std::to_string(i), i));
    for (int i = 0; i < 2000; ++i) {
      const std::string k = "key " + std::to_string(i);
      ASSERT_EQ(map.find(std::string_view(k)), std::optional<int>(i));
    }
    EXPECT_TRUE(map.unsafe_well_formed());
    using default_map = hm_hashmap<std::string, int, reclaim::debra<>>;
    EXPECT_EQ(default_map(domain).bucket_count(), default_map::default_buckets);
  }
  domain.barrier();
}

// The pools' blocking and timed pops.
template <template <class, class> class Pool, class S>
struct pool_case {
  using pool = Pool<long, S>;
  using scheme = S;
};
using pool_cases =
    ::testing::Types<pool_case<reclaim::ds::ms_queue, reclaim::debra<>>,
                     pool_case<reclaim::ds::ms_queue, reclaim::hp<>>,
                     pool_case<reclaim::ds::ms_queue, reclaim::nbr_plus<>>,
                     pool_case<reclaim::ds::treiber_stack, reclaim::debra<>>,
                     pool_case<reclaim::ds::treiber_stack, reclaim::hp<>>>;

template <class Case>
class pool_wait : public ::testing::Test {};
TYPED_TEST_SUITE(pool_wait, pool_cases);

TYPED_TEST(pool_wait, pop_wait_blocks_until_a_push) {
  typename TypeParam::scheme::domain domain;
  {
    typename TypeParam::pool pool(domain);
    std::atomic<bool> returned{false};
    long got = 0;
    std::thread consumer([&] {
      got = pool.pop_wait();
      returned.store(true);
    });
    std::this_thread::sleep_for(50ms);
    EXPECT_FALSE(returned.load());  // nothing to pop yet: still waiting
    pool.push(7);
    consumer.join();
    EXPECT_EQ(got, 7);
    EXPECT_TRUE(pool.empty());
  }
  domain.barrier();
}

TYPED_TEST(pool_wait, try_pop_for_times_out_on_an_empty_pool_and_wakes_for_a_push) {
  typename TypeParam::scheme::domain domain;
  {
    typename TypeParam::pool pool(domain);
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(pool.try_pop_for(100ms), std::nullopt);
    auto waited = std::chrono::steady_clock::now() - start;
    EXPECT_GE(waited, 100ms);
    EXPECT_LT(waited, 2s);  // about the time asked (slack for a loaded two-core machine)
    EXPECT_EQ(pool.try_pop_until(std::chrono::system_clock::now() - 1s), std::nullopt);

    std::thread producer([&] {
      std::this_thread::sleep_for(50ms);
      pool.push(9);
    });
    start = std::chrono::steady_clock::now();
    EXPECT_EQ(pool.try_pop_for(20s), std::optional<long>(9));
    EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
    producer.join();
    pool.push(1);
    EXPECT_EQ(pool.try_pop_for(0ms), std::optional<long>(1));  // present: no wait
  }
  domain.barrier();
}

// Producers push distinct items while consumers pop with pop_wait and short try_pop_for waits
// (so they often sleep and must be woken): every item is popped exactly once.
TYPED_TEST(pool_wait, producers_and_waiting_consumers_pop_every_item_once) {
  constexpr int producers = 2, consumers = 3;
  typename TypeParam::scheme::domain domain;
  {
    typename TypeParam::pool pool(domain);
    const long per_producer = scaled(20000);
    std::vector<std::vector<long>> popped(consumers);
    std::vector<std::thread> threads;
    for (int c = 0; c < consumers; ++c)
      threads.emplace_back([&, c] {
        for (long i = 0;; ++i) {
          long v;
          if (i % 2) {
            v = pool.pop_wait();
          } else {
            const std::optional<long> got = pool.try_pop_for(1ms);
            if (!got) continue;
            v = *got;
          }
          if (v < 0) return;  // a stop item
          popped[c].push_back(v);
        }
      });
    std::vector<std::thread> pushers;
    for (int p = 0; p < producers; ++p)
      pushers.emplace_back([&, p] {
        for (long i = 0; i < per_producer; ++i) {
          pool.push(p * per_producer + i);
          if (i % 512 == 0) std::this_thread::sleep_for(100us);  // let consumers go to sleep
        }
      });
    for (auto& t : pushers) t.join();
    // Stop items only once every item is taken: a stack would pop them first.
    ASSERT_TRUE(eventually([&] { return pool.empty(); }));
    for (int c = 0; c < consumers; ++c) pool.push(-1);
    for (auto& t : threads) t.join();
    std::vector<long> all;
    for (const auto& v : popped) all.insert(all.end(), v.begin(), v.end());
    std::sort(all.begin(), all.end());
    ASSERT_EQ(all.size(), static_cast<std::size_t>(producers * per_producer));
    for (long i = 0; i < producers * per_producer; ++i) ASSERT_EQ(all[i], i);
    EXPECT_TRUE(pool.empty());
  }
  domain.barrier();
}

}  // namespace
