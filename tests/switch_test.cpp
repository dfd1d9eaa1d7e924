// SPDX-License-Identifier: MIT
// One template argument switches the scheme (issue 28): a container picks what its scheme needs.
// hm_list and hm_hashmap search with restarts from the head under nbr and nbr_plus and with
// Michael's Find under every other scheme; lazy_skiplist runs on its scheme sized for it, so
// hp<>, crystalline_w<> and nbr_plus<> serve it unnamed sizes, and it takes the sized scheme's
// domain (a domain of the unsized scheme is a compile error: compile_fail/
// lazy_skiplist_wrong_domain.cpp). examples/switch_service.cpp runs a service written once under
// five schemes; these check the types behind it, and run each picked form under threads.
#include <gtest/gtest.h>

#include <reclaim/reclaim.hpp>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace {

using reclaim::crystalline_w;
using reclaim::debra;
using reclaim::hp;
using reclaim::nbr;
using reclaim::nbr_plus;
using reclaim::slots;
namespace ds = reclaim::ds;

// Under nbr and nbr_plus the hm containers are their restart forms, the very same types.
static_assert(std::is_same_v<ds::hm_hashmap<std::string, std::string, nbr<>>,
                             ds::hm_hashmap_restart<std::string, std::string, nbr<>>>);
static_assert(std::is_same_v<ds::hm_hashset<std::int64_t, nbr_plus<>>,
                             ds::hm_hashset_restart<std::int64_t, nbr_plus<>>>);
static_assert(std::is_same_v<ds::hm_list<std::int64_t, nbr<>>,
                             ds::hm_list_restart<std::int64_t, nbr<>>>);
static_assert(std::is_same_v<ds::hm_list_map<std::int64_t, long, nbr_plus<>>,
                             ds::hm_list_restart_map<std::int64_t, long, nbr_plus<>>>);
static_assert(reclaim::protects<nbr_plus<>, ds::hm_hashmap<std::string, std::string, nbr_plus<>>>);
static_assert(reclaim::protects<nbr<>, ds::hm_list<std::int64_t, nbr<>>>);
// Under every other scheme they are Michael's Find, the code they always ran (the lab's main
// benchmark), not the restart form.
static_assert(!std::is_same_v<ds::hm_hashset<std::int64_t, debra<>>,
                              ds::hm_hashset_restart<std::int64_t, debra<>>>);
static_assert(!std::is_same_v<ds::hm_list<std::int64_t, hp<>>,
                              ds::hm_list_restart<std::int64_t, hp<>>>);
static_assert(ds::hm_hashset<std::int64_t, hp<>>::name == "hm_hashset");
static_assert(ds::hm_hashset<std::int64_t, nbr<>>::name == "hm_hashset_restart");

// lazy_skiplist sizes its scheme: a slot per level plus two, a reservation per level plus one.
template <class Scheme>
using skiplist = ds::lazy_skiplist<std::int64_t, Scheme>;
static_assert(std::is_same_v<skiplist<hp<>>::scheme_type, hp<slots<14>>>);
static_assert(std::is_same_v<skiplist<crystalline_w<>>::scheme_type, crystalline_w<slots<14>>>);
static_assert(std::is_same_v<skiplist<nbr_plus<>>::scheme_type, nbr_plus<slots<13>>>);
static_assert(std::is_same_v<skiplist<nbr_plus<>>::domain_type, nbr_plus<slots<13>>::domain>);
static_assert(std::is_same_v<skiplist<debra<>>::scheme_type, debra<>>);
// A scheme that already holds enough stays as it is, and naming the size is still the same type.
static_assert(std::is_same_v<skiplist<hp<slots<16>>>::scheme_type, hp<slots<16>>>);
static_assert(std::is_same_v<skiplist<hp<slots<14>>>::scheme_type, skiplist<hp<>>::scheme_type>);
static_assert(
    std::is_same_v<reclaim::sized_for<hp<>, skiplist<hp<>>>, skiplist<hp<>>::scheme_type>);

constexpr long threads = 4;

// Threads insert their own keys, erase every other one and look each up, on `set`; afterwards
// exactly the keys kept are present. Returns the wrong answers seen.
template <class Set>
long insert_erase_in_threads(Set& set, long per_thread) {
  std::atomic<long> wrong{0};
  std::vector<std::thread> workers;
  for (long t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      for (long i = 0; i < per_thread; ++i) {
        const std::int64_t key = i * threads + t;
        wrong += !set.insert(key);
        wrong += !set.contains(key);
        if (key % 2 == 1) wrong += !set.erase(key) || set.contains(key);
      }
    });
  for (std::thread& w : workers) w.join();
  for (std::int64_t key = 0; key < threads * per_thread; ++key)
    wrong += set.contains(key) != (key % 2 == 0);
  return wrong;
}

template <class Scheme>
void skiplist_runs_unsized() {
  skiplist<Scheme> set;  // on the sized scheme's default domain
  EXPECT_EQ(insert_erase_in_threads(set, 1000), 0);
  // And on a domain of the sized scheme, which frees what the set retired.
  {
    typename skiplist<Scheme>::domain_type domain;
    {
      skiplist<Scheme> own(domain);
      EXPECT_EQ(insert_erase_in_threads(own, 1000), 0);
    }
    domain.barrier();
    const reclaim::stats s = domain.stats();
    EXPECT_EQ(s.retired, 2000u);  // the odd keys
    EXPECT_EQ(s.freed, s.retired);
  }
}

TEST(scheme_switch, lazy_skiplist_runs_under_hp_without_naming_slots) {
  skiplist_runs_unsized<hp<>>();
}
TEST(scheme_switch, lazy_skiplist_runs_under_crystalline_w_without_naming_slots) {
  skiplist_runs_unsized<crystalline_w<>>();
}
TEST(scheme_switch, lazy_skiplist_runs_under_nbr_plus_without_naming_slots) {
  skiplist_runs_unsized<nbr_plus<reclaim::scan_threshold<64>>>();
}

// The hm containers under nbr_plus, picked by the scheme alone, with a small bag so that
// reclaimers neutralize searches in the middle of buckets.
TEST(scheme_switch, hm_containers_restart_under_nbr_plus_by_themselves) {
  using scheme = nbr_plus<reclaim::scan_threshold<64>>;
  scheme::domain domain;
  {
    ds::hm_hashset<std::int64_t, scheme> table(domain, 64);
    EXPECT_EQ(insert_erase_in_threads(table, 1000), 0);
    ds::hm_list<std::int64_t, scheme> list(domain);
    EXPECT_EQ(insert_erase_in_threads(list, 250), 0);
  }
  domain.barrier();
  const reclaim::stats s = domain.stats();
  EXPECT_EQ(s.retired, 2000u + 500u);  // the odd keys of both
  EXPECT_EQ(s.freed, s.retired);
}

}  // namespace
