// SPDX-License-Identifier: MIT
// The string-keyed map suite: every container's map form with std::string keys and values (long
// enough to live on the heap), under every scheme that protects it. Sequential semantics against
// std::map, concurrent inserts, erases, finds and visits whose every answer is checked, and a count
// of key and value objects proving each is destroyed exactly once. Included by each
// ds_<container>_map_test.cpp, which instantiates it for its container.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "container_suite.hpp"

namespace reclaim_test::maps {

using containers::every_scheme;
using containers::representative_schemes;
using containers::expect_retired;
using containers::in_container_suites;
using containers::scheme_list;

// A string that counts the objects alive: every constructor adds one, the destructor takes one
// away. After the containers and domains are gone the count is back where it was, or a key or
// value was leaked (more) or destroyed twice (fewer; ASan also reports the double free).
struct counted {
  static inline std::atomic<long> alive{0};

  explicit counted(std::string s) : text(std::move(s)) { alive.fetch_add(1); }
  counted(const counted& other) : text(other.text) { alive.fetch_add(1); }
  counted(counted&& other) noexcept : text(std::move(other.text)) { alive.fetch_add(1); }
  counted& operator=(const counted&) = delete;
  ~counted() { alive.fetch_sub(1); }

  bool operator<(const counted& other) const { return text < other.text; }
  bool operator==(const counted& other) const { return text == other.text; }
  std::string text;
};

// Keys and values that do not fit std::string's inline buffer (15 characters in libstdc++), so
// that destroying one frees memory: a leak or a double free is seen by ASan.
inline std::string key_text(int owner, long i) {
  return "key-" + std::to_string(owner) + "-" + std::to_string(i) + "-stored-on-the-heap";
}
// Every value encodes its key: a lookup that returns another node's value is caught.
inline std::string value_text(const std::string& key) { return "value-of-" + key; }

inline const std::string& text_of(const std::string& s) { return s; }
inline const std::string& text_of(const counted& c) { return c.text; }

}  // namespace reclaim_test::maps

template <>
struct std::hash<reclaim_test::maps::counted> {
  std::size_t operator()(const reclaim_test::maps::counted& c) const noexcept {
    return std::hash<std::string>{}(c.text);
  }
};

namespace reclaim_test::maps {

// One container and one scheme; `map<K, V>` is the container's map form for those types.
template <template <class, class, class> class Map, class S>
struct map_case {
  template <class K, class V>
  using map = Map<K, V, S>;
  using scheme = S;
};

// ::testing::Types of map_case<Map, S> for every S of Schemes that protects the map (under the
// sanitizers, of those in_container_suites() keeps).
template <template <class, class, class> class Map, class Schemes, class... Kept>
struct protected_cases;
template <template <class, class, class> class Map, class... Kept>
struct protected_cases<Map, scheme_list<>, Kept...> {
  using type = ::testing::Types<Kept...>;
};
template <template <class, class, class> class Map, class S, class... Rest, class... Kept>
struct protected_cases<Map, scheme_list<S, Rest...>, Kept...>
    : std::conditional_t<in_container_suites(S::name) &&
                             reclaim::protects<S, Map<std::string, std::string, S>>,
                         protected_cases<Map, scheme_list<Rest...>, Kept..., map_case<Map, S>>,
                         protected_cases<Map, scheme_list<Rest...>, Kept...>> {};
template <template <class, class, class> class Map>
using every_protected_case = typename protected_cases<Map, every_scheme>::type;
template <template <class, class, class> class Map>
using representative_cases = typename protected_cases<Map, representative_schemes>::type;

template <class Case>
class string_map : public ::testing::Test {};
TYPED_TEST_SUITE_P(string_map);

// Random inserts, erases, finds, visits and lookups on a few keys, against std::map; a present
// key keeps its first value; for_each yields exactly the model.
TYPED_TEST_P(string_map, behaves_like_std_map_sequentially) {
  using M = typename TypeParam::template map<std::string, std::string>;
  typename M::domain_type domain;
  M map(domain);
  std::map<std::string, std::string> model;
  std::uint64_t erased = 0, inserted = 0;
  rng r(11);
  for (long step = 0; step < scaled(4000); ++step) {
    const std::string key = key_text(0, static_cast<long>(r.below(48)));
    const auto it = model.find(key);
    switch (r.below(5)) {
      case 0: {
        // A second insert of a present key is refused and does not change its value.
        const std::string value = it == model.end() ? value_text(key) : "another value, refused";
        ASSERT_EQ(map.insert(key, value), it == model.end()) << key << " at step " << step;
        inserted += it == model.end();
        model.emplace(key, value);
        break;
      }
      case 1:
        ASSERT_EQ(map.erase(key), it != model.end()) << key << " at step " << step;
        erased += it != model.end();
        if (it != model.end()) model.erase(it);
        break;
      case 2: {
        const std::optional<std::string> found = map.find(key);
        ASSERT_EQ(found.has_value(), it != model.end()) << key << " at step " << step;
        if (found) {
          ASSERT_EQ(*found, it->second);
        }
        break;
      }
      case 3: {
        std::string seen;
        ASSERT_EQ(map.visit(key, [&](const std::string& v) { seen = v; }), it != model.end());
        ASSERT_EQ(seen, it == model.end() ? "" : it->second) << key << " at step " << step;
        break;
      }
      default: ASSERT_EQ(map.contains(key), it != model.end()) << key << " at step " << step;
    }
  }
  std::map<std::string, std::string> contents;
  map.unsafe_for_each([&](const std::string& k, const std::string& v) {
    EXPECT_TRUE(contents.emplace(k, v).second) << "key " << k << " twice";
  });
  EXPECT_EQ(contents, model);
  EXPECT_EQ(map.size(), model.size());
  EXPECT_TRUE(map.unsafe_well_formed());
  expect_retired<M>(domain.stats().retired, inserted, erased);
}

// Threads that each own a range of keys insert, erase, find and visit them (so that each knows
// which of its keys are present, and checks every answer), and look up the other threads' keys,
// whose values must always encode them; the final contents are the union of the owners' models.
template <class K, class V, class M>
void run_owned_ranges(M& map, int thread_count, long keys_per_thread, long ops_per_thread,
                      std::uint64_t& erases) {
  std::vector<std::vector<bool>> present(static_cast<std::size_t>(thread_count));
  std::vector<std::uint64_t> erased(static_cast<std::size_t>(thread_count), 0);
  std::atomic<long> wrong{0};
  gate start;
  std::vector<std::thread> threads;
  for (int t = 0; t < thread_count; ++t)
    threads.emplace_back([&, t] {
      std::vector<bool>& mine = present[static_cast<std::size_t>(t)];
      mine.assign(static_cast<std::size_t>(keys_per_thread), false);
      rng r(static_cast<std::uint64_t>(t) + 1);
      long bad = 0;
      start.wait();
      for (long op = 0; op < ops_per_thread; ++op) {
        const long i = static_cast<long>(r.below(static_cast<std::uint64_t>(keys_per_thread)));
        const int owner = r.below(4) == 0 ? static_cast<int>(r.below(
                                                static_cast<std::uint64_t>(thread_count)))
                                          : t;
        const std::string key = key_text(owner, i);
        const std::string value = value_text(key);
        auto check_value = [&](const V& v) { bad += text_of(v) != value; };
        if (owner != t) {  // another thread's key: present or not, never with a wrong value
          if (r.below(2))
            map.visit(K(key), check_value);
          else if (std::optional<V> found = map.find(K(key)))
            check_value(*found);
          continue;
        }
        const auto slot = static_cast<std::size_t>(i);
        switch (r.below(4)) {
          case 0:
            bad += map.insert(K(key), V(value)) == mine[slot];
            mine[slot] = true;
            break;
          case 1:
            if (map.erase(K(key)) != mine[slot]) ++bad;
            erased[static_cast<std::size_t>(t)] += mine[slot];
            mine[slot] = false;
            break;
          case 2: {
            std::optional<V> found = map.find(K(key));
            bad += found.has_value() != mine[slot];
            if (found) check_value(*found);
            break;
          }
          default: bad += map.visit(K(key), check_value) != mine[slot];
        }
      }
      wrong.fetch_add(bad);
    });
  start.open();
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0) << "an answer disagreed with the key's owner, or a value its key";
  std::map<std::string, std::string> expected, contents;
  for (int t = 0; t < thread_count; ++t)
    for (long i = 0; i < keys_per_thread; ++i)
      if (present[static_cast<std::size_t>(t)][static_cast<std::size_t>(i)])
        expected.emplace(key_text(t, i), value_text(key_text(t, i)));
  map.unsafe_for_each([&](const K& k, const V& v) { contents.emplace(text_of(k), text_of(v)); });
  EXPECT_EQ(contents, expected);
  EXPECT_EQ(map.size(), expected.size());
  EXPECT_TRUE(map.unsafe_well_formed());
  erases = 0;
  for (std::uint64_t e : erased) erases += e;
  EXPECT_GT(erases, 0u);
}

TYPED_TEST_P(string_map, concurrent_inserts_erases_finds_and_visits_keep_contents_exact) {
  using M = typename TypeParam::template map<std::string, std::string>;
  typename M::domain_type domain;
  M map(domain);
  std::uint64_t erases = 0;
  run_owned_ranges<std::string, std::string>(map, 4, 64, scaled(3000), erases);
  const reclaim::stats s = domain.stats();
  expect_retired<M>(s.retired, 0, erases);  // inserts uncounted: the least bound only weakens
  EXPECT_EQ(s.freed + s.pending, s.retired);
}

// Keys and values that count themselves, through the same concurrent workload: when the map (its
// linked nodes) and the domain (the retired ones still pending) are gone, every object constructed
// was destroyed exactly once.
TYPED_TEST_P(string_map, every_key_and_value_is_destroyed_exactly_once) {
  using M = typename TypeParam::template map<counted, counted>;
  const long before = counted::alive.load();
  {
    typename M::domain_type domain;
    {
      M map(domain);
      std::uint64_t erases = 0;
      run_owned_ranges<counted, counted>(map, 3, 32, scaled(1500), erases);
      // What the map holds: one key and one value per element (the routers of a tree hold keys
      // too); what retired nodes still pending hold: at most two per node.
      EXPECT_GE(counted::alive.load() - before, 2 * static_cast<long>(map.size()));
      EXPECT_GT(map.size(), 0u) << "the container's destructor destroys some elements";
    }
    EXPECT_GE(counted::alive.load(), before);
  }
  EXPECT_EQ(counted::alive.load(), before)
      << "objects constructed minus destroyed after the map and its domain are gone";
}

REGISTER_TYPED_TEST_SUITE_P(string_map, behaves_like_std_map_sequentially,
                            concurrent_inserts_erases_finds_and_visits_keep_contents_exact,
                            every_key_and_value_is_destroyed_exactly_once);

}  // namespace reclaim_test::maps
