// SPDX-License-Identifier: MIT
// What only some containers do (hm_hashmap's buckets, harris_list's marked chains, dgt_bst's shape,
// neutralized searches) and what every container declares (applicability). The typed tests every
// (container, scheme) pair runs are in container_typed_tests.hpp, instantiated per container by the
// ds_<container>_test.cpp files.
#include "container_suite.hpp"

namespace {

using namespace reclaim_test;
using namespace reclaim_test::containers;

// ---------------------------------------------------------------------------------------------
// hm_hashmap: keys that collide in one bucket and keys spread over many

TEST(hm_hashmap_buckets, bucket_count_is_a_power_of_two_and_every_key_lands_inside) {
  hp<>::domain domain;
  for (std::size_t asked : {0u, 1u, 2u, 3u, 1000u, 1024u}) {
    hm_hashmap<hp<>> map(domain, asked);
    const std::size_t n = map.bucket_count();
    EXPECT_GE(n, asked);
    EXPECT_LT(n, 2 * std::max<std::size_t>(asked, 1));
    EXPECT_EQ(n & (n - 1), 0u) << n;
    for (std::int64_t k : {std::numeric_limits<std::int64_t>::min(), std::int64_t{-1},
                           std::int64_t{0}, std::int64_t{12345},
                           std::numeric_limits<std::int64_t>::max()})
      EXPECT_LT(map.bucket_of(k), n) << k;
  }
  EXPECT_EQ(hm_hashmap<hp<>>(domain).bucket_count(), hm_hashmap<hp<>>::default_buckets);
}

TEST(hm_hashmap_buckets, consecutive_keys_spread_over_most_buckets) {
  hp<>::domain domain;
  hm_hashmap<hp<>> map(domain, 1024);
  std::vector<int> load(map.bucket_count());
  for (std::int64_t k = 0; k < 1024; ++k) ++load[map.bucket_of(k)];
  // A multiplicative hash spreads a run of keys more evenly than chance: random placement would
  // use about 63% of the buckets and put 5 or 6 keys in the fullest one.
  EXPECT_GT(std::count_if(load.begin(), load.end(), [](int n) { return n > 0; }), 850);
  EXPECT_LE(*std::max_element(load.begin(), load.end()), 3);
}

TEST(hm_hashmap_buckets, one_bucket_map_answers_like_hm_list) {
  hp<>::domain domain;
  hm_hashmap<hp<>> map(domain, 1);
  hm_list<hp<>> list(domain);
  ASSERT_EQ(map.bucket_count(), 1u);
  rng r(7);
  for (long i = 0; i < scaled(20000); ++i) {
    const std::int64_t key = static_cast<std::int64_t>(r.below(256)) - 128;
    switch (r.below(3)) {
      case 0: ASSERT_EQ(map.insert(key), list.insert(key)) << "insert(" << key << ") step " << i; break;
      case 1: ASSERT_EQ(map.erase(key), list.erase(key)) << "erase(" << key << ") step " << i; break;
      default: ASSERT_EQ(map.contains(key), list.contains(key)) << "contains(" << key << ") step " << i;
    }
  }
  EXPECT_EQ(map.size(), list.size());
  EXPECT_EQ(map.unsafe_key_sum(), list.unsafe_key_sum());
  EXPECT_TRUE(map.unsafe_well_formed());
}

TEST(hm_hashmap_buckets, keys_colliding_in_one_bucket_stay_distinct_and_sorted) {
  debra<>::domain domain;
  hm_hashmap<debra<>> map(domain, 16);
  // Forty keys that all hash to bucket 5, and forty that hash elsewhere.
  std::vector<std::int64_t> same, other;
  for (std::int64_t k = -5000; same.size() < 40 || other.size() < 40; ++k)
    (map.bucket_of(k) == 5 ? same : other).push_back(k);
  same.resize(40);
  other.resize(40);
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < 40; ++i) {
    // Reverse order for one set: inserts land at the head of the bucket, then in the middle.
    EXPECT_TRUE(map.insert(same[39 - i]));
    EXPECT_TRUE(map.insert(other[i]));
    sum += same[39 - i] + other[i];
  }
  EXPECT_EQ(map.size(), 80u);
  EXPECT_EQ(map.unsafe_key_sum(), sum);
  EXPECT_TRUE(map.unsafe_well_formed());
  for (std::size_t i = 0; i < 40; i += 2) {
    EXPECT_TRUE(map.erase(same[i]));
    EXPECT_FALSE(map.erase(same[i]));
  }
  for (std::size_t i = 0; i < 40; ++i) {
    EXPECT_EQ(map.contains(same[i]), i % 2 == 1) << same[i];
    EXPECT_TRUE(map.contains(other[i])) << other[i];
  }
  EXPECT_EQ(map.size(), 60u);
  EXPECT_TRUE(map.unsafe_well_formed());
}

// The concurrent stress of the typed tests with every key in one bucket (one long list) and with
// few buckets (short lists, many collisions), under a pointer and an epoch scheme.
TEST(hm_hashmap_buckets, concurrent_updates_in_one_bucket_keep_contents_consistent) {
  run_stress<hm_hashmap<hp<>>>(4, 256, std::size_t{1});
  run_stress<hm_hashmap<debra<>>>(4, 256, std::size_t{1});
}
TEST(hm_hashmap_buckets, concurrent_updates_in_few_buckets_keep_contents_consistent) {
  run_stress<hm_hashmap<hp<>>>(4, 1024, std::size_t{8});
  run_stress<hm_hashmap<debra<>>>(4, 1024, std::size_t{8});
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// harris_list, hm_list_restart and dgt_bst: what only they do

// White-box access to harris_list: marks a node without unlinking it, which is what an erase
// leaves behind when its unlinking CAS loses a race.
struct reclaim::ds::harris_list_test_peer {
  template <class List>
  static bool mark(List& list, std::int64_t key) {
    for (auto* n = list.first(); n != &list.tail_; n = n->next.load().get()) {
      if (List::as_node(n)->key != key) continue;
      n->next.store(typename List::link(n->next.load().get(), 1));
      return true;
    }
    return false;
  }
};

namespace {

TEST(harris_list, a_marked_chain_is_unlinked_by_one_search_and_each_node_retired_once) {
  using list_type = harris_list<debra<>>;
  debra<>::domain domain;
  list_type list(domain);
  for (std::int64_t k = 0; k < 10; ++k) ASSERT_TRUE(list.insert(k));
  // A chain 3 4 5 6 of marked nodes, and 8 alone.
  for (std::int64_t k : {3, 4, 5, 6, 8}) ASSERT_TRUE(reclaim::ds::harris_list_test_peer::mark(list, k));
  EXPECT_FALSE(list.unsafe_well_formed());
  EXPECT_FALSE(list.contains(4)) << "a marked node's key is not in the set";
  EXPECT_TRUE(list.contains(7)) << "a search walks through the marked chain";
  EXPECT_EQ(domain.stats().retired, 0u) << "contains() does not unlink";

  // insert(5) searches for 5: left = 2, right = 7, and the chain 3..6 between them goes in one CAS.
  EXPECT_TRUE(list.insert(5));
  EXPECT_EQ(domain.stats().retired, 4u);
  // erase(9) meets the lone marked 8 and unlinks it before erasing 9.
  EXPECT_TRUE(list.erase(9));
  EXPECT_EQ(domain.stats().retired, 6u);
  EXPECT_TRUE(list.unsafe_well_formed());
  EXPECT_EQ(list.unsafe_size(), 5u);  // 0 1 2 5 7 (marked by hand: the counter never knew)
  EXPECT_EQ(list.unsafe_key_sum(), 0 + 1 + 2 + 5 + 7);
  // Nothing is retired twice: more searches over the same range retire nothing, and every node
  // retired is freed once (a double free would be caught by ASan or the debug poisoning).
  for (std::int64_t k = 0; k < 10; ++k) list.contains(k);
  EXPECT_FALSE(list.insert(7));
  EXPECT_EQ(domain.stats().retired, 6u);
  EXPECT_TRUE(eventually([&] {
    { debra<>::guard g(domain); }
    return domain.stats().freed == 6u;
  }));
}

TEST(harris_list, an_erase_that_finds_its_node_marked_by_another_reports_absent) {
  none::domain domain;
  harris_list<none> list(domain);
  for (std::int64_t k = 0; k < 4; ++k) ASSERT_TRUE(list.insert(k));
  ASSERT_TRUE(reclaim::ds::harris_list_test_peer::mark(list, 2));
  EXPECT_FALSE(list.erase(2)) << "2 was logically deleted by someone else";
  EXPECT_EQ(domain.stats().retired, 1u) << "the search unlinked and retired the marked 2";
  EXPECT_TRUE(list.insert(2));
  EXPECT_TRUE(list.unsafe_well_formed());
  EXPECT_EQ(list.unsafe_size(), 4u);
}

// The applicability our containers declare, beside paper 000's Table 1 (docs/applicability.md).
TEST(applicability, containers_declare_what_the_paper_table_says_with_reasons) {
  using reclaim::needs_restartable_read_phases;
  using reclaim::needs_validated_reads;
  // HL01: NBR yes; hazard pointers no for Harris's own search (the paper's "yes" is Michael's fix).
  EXPECT_TRUE(harris_list<none>::offers(needs_restartable_read_phases).yes);
  EXPECT_FALSE(harris_list<none>::offers(needs_validated_reads).yes);
  EXPECT_FALSE(harris_list<none>::offers(needs_validated_reads).why_not.empty());
  // HM04: hazard pointers yes, NBR no; restarting from the head gives NBR its form.
  EXPECT_TRUE(hm_list<none>::offers(needs_validated_reads).yes);
  EXPECT_FALSE(hm_list<none>::offers(needs_restartable_read_phases).yes);
  EXPECT_TRUE(hm_list_restart<none>::offers(needs_validated_reads).yes);
  EXPECT_TRUE(hm_list_restart<none>::offers(needs_restartable_read_phases).yes);
  // DGT15: NBR yes; hazard pointers no ("no marks, cannot validate HP").
  EXPECT_TRUE(dgt_bst<none>::offers(needs_restartable_read_phases).yes);
  EXPECT_FALSE(dgt_bst<none>::offers(needs_validated_reads).yes);
  EXPECT_NE(dgt_bst<none>::offers(needs_validated_reads).why_not.find("child pointers"),
            std::string_view::npos);
  static_assert(!reclaim::protects<hp<>, dgt_bst<hp<>>>);
  static_assert(!reclaim::protects<hp<>, harris_list<hp<>>>);
  static_assert(reclaim::protects<hp<>, hm_list_restart<hp<>>>);
  // HM04's table: its buckets are hm_list's, and the form NBR can protect is hm_hashmap_restart.
  EXPECT_NE(hm_hashmap<none>::offers(needs_restartable_read_phases).why_not.find(
                "hm_hashmap_restart"),
            std::string_view::npos);
  EXPECT_TRUE(hm_hashmap_restart<none>::offers(needs_validated_reads).yes);
  EXPECT_TRUE(hm_hashmap_restart<none>::offers(needs_restartable_read_phases).yes);
  static_assert(reclaim::protects<nbr<>, hm_hashmap_restart<nbr<>>>);
  // What the containers' static_asserts test: one need at a time, and hazard slots. Michael's
  // Find (the form under debra) cannot meet nbr's need; hm_hashmap<nbr<>> picks the restart.
  static_assert(!reclaim::meets<nbr<>, hm_hashmap<debra<>>>(needs_restartable_read_phases));
  static_assert(reclaim::meets<nbr<>, hm_hashmap<nbr<>>>(needs_restartable_read_phases));
  static_assert(reclaim::meets<nbr<>, hm_hashmap<nbr<>>>(needs_validated_reads));
  static_assert(reclaim::meets<hp<>, hm_hashmap<hp<>>>(needs_restartable_read_phases));
  using hp2 = hp<reclaim::slots<2>>;
  using hp3 = hp<reclaim::slots<3>>;
  static_assert(!reclaim::has_slots<hp2, hm_list<hp2>>());
  static_assert(reclaim::has_slots<hp3, hm_list<hp3>>());
  static_assert(reclaim::has_slots<hp2, lazy_list<hp2>>());
  static_assert(reclaim::has_slots<nbr<>, hm_list_restart<nbr<>>>(), "nbr counts no hazard slots");
}

// Readers of stable keys race erasers of the keys between them, under NBR with a tiny bag, so that
// reclaimers neutralize readers in the middle of their searches: a restarted search must still find
// every stable key and never an absent one (and never touch a freed node: ASan, debug poisoning).
template <class C>
void neutralized_searches_restart_and_answer_correctly() {
  typename C::domain_type domain;
  C set(domain);
  for (std::int64_t k = 0; k < 64; k += 2) ASSERT_TRUE(set.insert(k));
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> wrong{0}, lookups{0};
  std::vector<std::thread> threads;
  for (int e = 0; e < 2; ++e)
    threads.emplace_back([&, e] {
      rng r(static_cast<std::uint64_t>(e) + 7);
      for (long n = 0; !stop.load(std::memory_order_relaxed) || n < 500; ++n) {
        const auto key = 2 * static_cast<std::int64_t>(r.below(32)) + 1;
        if (set.insert(key)) set.erase(key);
      }
    });
  for (int rd = 0; rd < 2; ++rd)
    threads.emplace_back([&, rd] {
      rng r(static_cast<std::uint64_t>(rd) + 70);
      std::uint64_t n = 0, bad = 0;
      for (; !stop.load(std::memory_order_relaxed) || n < 500; n += 2) {
        bad += !set.contains(2 * static_cast<std::int64_t>(r.below(32)));
        bad += set.contains(1001);
      }
      wrong += bad;
      lookups += n;
    });
  std::this_thread::sleep_for(stress_time());
  stop = true;
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0u) << C::name;
  EXPECT_GT(lookups.load(), 0u);
  EXPECT_GT(domain.stats().signals, 0u) << C::name << ": no reader was ever neutralized";
  EXPECT_TRUE(set.unsafe_well_formed()) << C::name;
  EXPECT_EQ(set.size(), 32u) << C::name;
}

TEST(nbr_containers, neutralized_searches_restart_from_the_root_and_answer_correctly) {
  using small_nbr = nbr<reclaim::scan_threshold<64>>;
  using small_nbr_plus = nbr_plus<reclaim::scan_threshold<64>>;
  neutralized_searches_restart_and_answer_correctly<harris_list<small_nbr>>();
  neutralized_searches_restart_and_answer_correctly<hm_list_restart<small_nbr>>();
  neutralized_searches_restart_and_answer_correctly<dgt_bst<small_nbr>>();
  neutralized_searches_restart_and_answer_correctly<harris_list<small_nbr_plus>>();
  neutralized_searches_restart_and_answer_correctly<hm_list_restart<small_nbr_plus>>();
  neutralized_searches_restart_and_answer_correctly<dgt_bst<small_nbr_plus>>();
}

TEST(dgt_bst, every_router_keeps_two_children_through_many_inserts_and_erases) {
  debra<>::domain domain;
  dgt_bst<debra<>> tree(domain);
  auto empty = tree.unsafe_shape();
  EXPECT_EQ(empty.keys, 0u);
  EXPECT_EQ(empty.routers, 1u);  // the sentinel root over the two sentinel leaves
  EXPECT_EQ(empty.height, 1u);

  std::set<std::int64_t> model;
  std::uint64_t erased = 0;
  rng r(99);
  const long ops = scaled(20000);
  for (long i = 0; i < ops; ++i) {
    const auto key = static_cast<std::int64_t>(r.below(512));
    if (r.below(2)) {
      ASSERT_EQ(tree.insert(key), model.insert(key).second) << key;
    } else {
      const bool present = model.erase(key) == 1;
      erased += present;
      ASSERT_EQ(tree.erase(key), present) << key;
    }
    if (i % 1000 == 0) {
      ASSERT_TRUE(tree.unsafe_well_formed()) << "step " << i;
      // A full binary tree: one router per key plus the sentinel root.
      auto s = tree.unsafe_shape();
      ASSERT_EQ(s.keys, model.size());
      ASSERT_EQ(s.routers, model.size() + 1);
      ASSERT_GT(s.height, 0u);
    }
  }
  // Random keys keep the (unbalanced) tree shallow: far below the worst case of one level per key.
  EXPECT_LT(tree.unsafe_shape().height, 64u);
  for (std::int64_t k : std::vector<std::int64_t>(model.begin(), model.end())) {
    ASSERT_TRUE(tree.erase(k));
    ++erased;
  }
  auto back = tree.unsafe_shape();
  EXPECT_EQ(back.keys, 0u);
  EXPECT_EQ(back.routers, 1u) << "erasing every key gives back the initial tree";
  EXPECT_EQ(back.height, 1u);
  EXPECT_TRUE(tree.unsafe_well_formed());
  EXPECT_EQ(domain.stats().retired, 2 * erased) << "each erase retires its leaf and its router";
}

TEST(dgt_bst, ascending_keys_make_a_deep_tree_that_every_traversal_handles) {
  none::domain domain;
  dgt_bst<none> tree(domain);
  const std::int64_t n = scaled(3000);  // quadratic: each insert walks the whole path
  for (std::int64_t k = 0; k < n; ++k) ASSERT_TRUE(tree.insert(k));
  auto s = tree.unsafe_shape();
  EXPECT_EQ(s.keys, static_cast<std::size_t>(n));
  EXPECT_GE(s.height, static_cast<std::size_t>(n)) << "no balancing: one level per ascending key";
  EXPECT_TRUE(tree.unsafe_well_formed());
  EXPECT_EQ(tree.unsafe_key_sum(), n * (n - 1) / 2);
  EXPECT_TRUE(tree.contains(n - 1));
  EXPECT_FALSE(tree.contains(n));
}  // the destructor walks the deep tree without recursion

#ifndef NDEBUG
// A container destroyed while one of its operations still runs (here: from the callback of its own
// visit(), as another thread's visit could be) would free nodes that operation reads: debug builds
// name it, as they name a domain destroyed under a guard.
template <class Map>
void destroy_inside_visit() {
  typename Map::domain_type domain;
  auto* map = new Map(domain);
  map->insert(1, 10);
  map->visit(1, [&](const int&) { delete map; });
}
TEST(container_misuse, destroying_a_container_inside_one_of_its_operations_is_named) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  using reclaim::ds::hm_hashmap;
  using reclaim::ds::lazy_list_map;
  EXPECT_DEATH((destroy_inside_visit<hm_hashmap<std::int64_t, int, debra<>>>()),
               "container destroyed while one of its operations is still running");
  EXPECT_DEATH((destroy_inside_visit<lazy_list_map<std::int64_t, int, hp<>>>()),
               "container destroyed while one of its operations is still running");
}
#endif

}  // namespace
