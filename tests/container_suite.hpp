// SPDX-License-Identifier: MIT
// The container test suite shared by the per-container test files: helpers (the stress driver and
// the reclamation-counter checks) and the typed tests every (container, scheme) pair runs. Each
// ds_<container>_test.cpp instantiates the suite for its container's schemes, so the pairs compile
// in parallel translation units instead of one giant one.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <set>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include "test_support.hpp"

namespace reclaim_test::containers {

using namespace reclaim_test;
using reclaim::debra;
using reclaim::ebr;
using reclaim::hp;
using reclaim::lfrc;
using reclaim::nbr;
using reclaim::nbr_plus;
using reclaim::ner;
using reclaim::none;
using reclaim::qsbr;
using reclaim::rcu;
using reclaim::stamp_it;
using reclaim::token_af;
using reclaim::token_naive;
using reclaim::token_pass_first;
using reclaim::token_periodic;

// Nodes one successful erase retires: the key's node, and in an external tree its parent router.
template <class C>
constexpr std::uint64_t retired_per_erase = 1;
template <class K, class V, class S, class Compare>
constexpr std::uint64_t retired_per_erase<reclaim::ds::basic_dgt_bst<K, V, S, Compare>> = 2;
// The cuckoo map's erase destroys its element in place: only a resize retires (its old table).
template <class K, class V, class S, class Hash, class Equal>
constexpr std::uint64_t retired_per_erase<reclaim::ds::basic_cuckoo_map<K, V, S, Hash, Equal>> = 0;
template <class K, class V, class S, class Compare>
constexpr std::uint64_t retired_per_erase<reclaim::ds::basic_nm_bst<K, V, S, Compare>> = 2;

// The nodes a container's successful updates retire, as the bounds the tests hold the scheme's
// count to: exactly retired_per_erase per erase for most, a range for the trees whose updates and
// rebalancing retire a varying number; `per_operation` bounds what one operation retires, for the
// tests that bound garbage.
template <class C>
struct retired_bounds {
  static constexpr std::uint64_t least(std::uint64_t /*inserts*/, std::uint64_t erases) {
    return erases * retired_per_erase<C>;
  }
  static constexpr std::uint64_t most(std::uint64_t /*inserts*/, std::uint64_t erases) {
    return erases * retired_per_erase<C>;
  }
  static constexpr std::uint64_t per_operation = retired_per_erase<C>;
  static constexpr bool retires_on_insert = false;
};
// abtree: every successful insert and erase replaces its leaf, and rebalancing retires more (three
// nodes a step, amortized a fraction of a step per update).
template <class K, class V, class S, class Compare, unsigned B>
struct retired_bounds<reclaim::ds::basic_abtree<K, V, S, Compare, B>> {
  static constexpr std::uint64_t least(std::uint64_t inserts, std::uint64_t erases) {
    return inserts + erases;
  }
  static constexpr std::uint64_t most(std::uint64_t, std::uint64_t) { return ~std::uint64_t{0}; }
  static constexpr std::uint64_t per_operation = 4;
  static constexpr bool retires_on_insert = true;
};
// occ_avl: a node is unlinked (retired) at most once per erase of its key (an erase may leave it as
// a routing node, which a later insert revives); a map's erase also retires the key's entry.
template <class K, class V, class S, class Compare>
struct retired_bounds<reclaim::ds::basic_occ_avl<K, V, S, Compare>> {
  static constexpr std::uint64_t entries = std::is_void_v<V> ? 0 : 1;
  static constexpr std::uint64_t least(std::uint64_t, std::uint64_t erases) {
    return entries * erases;
  }
  static constexpr std::uint64_t most(std::uint64_t, std::uint64_t erases) {
    return (entries + 1) * erases;
  }
  static constexpr std::uint64_t per_operation = entries + 1;
  static constexpr bool retires_on_insert = false;
};

// The records the domain still holds once the workers exited: the main thread's. none registers a
// thread only when it retires, which the main thread's prefill does only where inserts retire.
template <class C>
constexpr std::uint64_t main_thread_records() {
  if constexpr (C::scheme_type::family != reclaim::family::none) return 1;
  else return retired_bounds<C>::retires_on_insert ? 1 : 0;
}

// The scheme saw as many retires as the container's successful updates make.
template <class C>
void expect_retired(std::uint64_t retired, std::uint64_t inserts, std::uint64_t erases) {
  EXPECT_GE(retired, retired_bounds<C>::least(inserts, erases))
      << "each successful erase retires its node(s) exactly once (" << inserts << " inserts, "
      << erases << " erases)";
  EXPECT_LE(retired, retired_bounds<C>::most(inserts, erases))
      << "each successful erase retires its node(s) exactly once (" << inserts << " inserts, "
      << erases << " erases)";
}


// The schemes the container suites run over, in two sets, so that the suite grows linearly with
// schemes and containers rather than with their product (docs/testing.md, "Which pairs run"):
// - every_scheme: each scheme once (nbr with small bags, so that signal rounds happen), and the
//   amortized policy on an epoch and a pointer scheme. The reference containers run all of them:
//   lazy_list (the set every family can protect), hm_list and hm_list_restart (validated reads
//   and restartable read phases of the same algorithm), the string-keyed hm_hashmap and
//   hm_hashmap_restart maps, and ms_queue. A new scheme goes here. Of the hazard-pointer family
//   one per heavy side that readers meet differently: hp_asym (a process-wide barrier; hp_mprotect
//   and hp_splitcas differ only inside it and run the scheme-level suites), hazard_pop (signals)
//   and epoch_pop (epochs first). Of the Token-EBR variants token_af: the other three differ
//   only in when a thread passes the token and frees, which the scheme-level suites test, and
//   run the stress suites of lazy_list and hm_list (their own lists).
// - representative_schemes: one scheme per way of protecting a container (announced epochs, scanned
//   epochs, quiescent states, per-operation reservations, a token, hazard pointers,
//   neutralization, an amortized free policy, reference counts, eras, batch reference counts).
//   Every other container runs
//   these; a new scheme goes here too when it protects containers in a way none of these does.
template <class... S>
struct scheme_list {};
using every_scheme =
    scheme_list<none, debra<>, hp<>, ebr<>, ner<>, qsbr<>, rcu<>, token_af<>,
                nbr<reclaim::scan_threshold<64>>,
                nbr_plus<reclaim::scan_threshold<64>>, debra<reclaim::amortized_free<1>>,
                hp<reclaim::amortized_free<1>>, reclaim::hp_asym<>, reclaim::hazard_pop<>,
                reclaim::epoch_pop<>, stamp_it<>, lfrc<>,
                RECLAIM_TEST_ERA_AND_BATCH_SCHEMES>;
using representative_schemes =
    scheme_list<none, debra<>, ebr<>, qsbr<>, rcu<>, token_af<>, hp<>,
                nbr_plus<reclaim::scan_threshold<64>>, debra<reclaim::amortized_free<1>>,
                lfrc<>, reclaim::he<>, reclaim::hyaline<>>;

// Under the sanitizers (make test) the container suites run only these schemes of the sets above
// and of the lists the reference containers name: one per family (epochs, hazard pointers,
// neutralization, eras, reference counts, batch reference counts, and crystalline_w's helped
// reads) and the baseline. The scheme-level suites keep every scheme under the sanitizers, and
// the debug preset (make check) runs every set and list whole (docs/testing.md, "Which pairs
// run").
constexpr bool in_container_suites(std::string_view scheme) noexcept {
  if (!sanitized) return true;
  for (std::string_view kept :
       {"none", "debra", "hp", "nbr_plus", "he", "lfrc", "hyaline", "crystalline_w"})
    if (scheme == kept) return true;
  return false;
}

template <class... Lists>
struct concat;
template <>
struct concat<> {
  using type = ::testing::Types<>;
};
template <class... A>
struct concat<::testing::Types<A...>> {
  using type = ::testing::Types<A...>;
};
template <class... A, class... B, class... Rest>
struct concat<::testing::Types<A...>, ::testing::Types<B...>, Rest...>
    : concat<::testing::Types<A..., B...>, Rest...> {};

// The pairs of a hand-written list that run under this preset (in_container_suites()).
template <class List>
struct container_suite_pairs_of;
template <class... C>
struct container_suite_pairs_of<::testing::Types<C...>>
    : concat<std::conditional_t<in_container_suites(C::scheme_type::name), ::testing::Types<C>,
                                ::testing::Types<>>...> {};
template <class List>
using container_suite_pairs = typename container_suite_pairs_of<List>::type;

// ::testing::Types of DS<S> for every S of Schemes that protects DS<S>, from the library's own
// declarations (reclaim::protects), as the lab derives its applicability matrix; under the
// sanitizers only the schemes in_container_suites() keeps.
template <template <class> class DS, class Schemes, class... Kept>
struct protected_pairs;
template <template <class> class DS, class... Kept>
struct protected_pairs<DS, scheme_list<>, Kept...> {
  using type = ::testing::Types<Kept...>;
};
// Derives from the one branch it takes, so that only that branch is instantiated.
template <template <class> class DS, class S, class... Rest, class... Kept>
struct protected_pairs<DS, scheme_list<S, Rest...>, Kept...>
    : std::conditional_t<in_container_suites(S::name) && reclaim::protects<S, DS<S>>,
                         protected_pairs<DS, scheme_list<Rest...>, Kept..., DS<S>>,
                         protected_pairs<DS, scheme_list<Rest...>, Kept...>> {};
template <template <class> class DS>
using every_protected_pair = typename protected_pairs<DS, every_scheme>::type;
template <template <class> class DS>
using representative_pairs = typename protected_pairs<DS, representative_schemes>::type;

// ---------------------------------------------------------------------------------------------
// 11: concurrent stress

struct tally {
  std::int64_t sum = 0;     // keys inserted minus keys erased, by this thread's successful calls
  std::int64_t count = 0;   // successful inserts minus successful erases
  std::uint64_t erases = 0; // successful erases
  std::uint64_t ops = 0;

  tally& operator+=(const tally& t) {
    sum += t.sum;
    count += t.count;
    erases += t.erases;
    ops += t.ops;
    return *this;
  }
};

// `inserts`: the successful inserts the caller counted (some trees retire on inserts too).
template <class C>
void check_reclamation_counters(typename C::domain_type& domain, std::uint64_t erases,
                                std::uint64_t records, std::uint64_t inserts = 0) {
  using S = typename C::scheme_type;
  auto s = domain.stats();
  const std::uint64_t retired = s.retired;
  expect_retired<C>(s.retired, inserts, erases);
  EXPECT_LE(s.freed, s.retired);
  EXPECT_EQ(s.freed + s.pending, s.retired);
  EXPECT_GE(s.pending_peak, s.pending);
  // The workers exited: only the main thread may still hold a record.
  EXPECT_EQ(s.threads, main_thread_records<C>());
  if constexpr (S::family == reclaim::family::pointer) {
    // Hazard pointers bound garbage: no record holds more than R + H retired nodes.
    const std::uint64_t per_record = domain.scan_threshold() + S::slot_count * records;
    EXPECT_LE(s.pending, records * per_record);
  }
  if constexpr (S::family == reclaim::family::neutralization && S::bounds_garbage) {
    // nbr bounds garbage: no bag holds more than max(threshold, R x records + 1) nodes.
    const std::uint64_t per_record =
        std::max<std::uint64_t>(S::threshold, S::reservation_count * records + 1);
    EXPECT_LE(s.pending, records * per_record);
  }
  if constexpr (requires { S::empty_frequency; }) {
    // rcu moves its epoch and scans only on retires: the one live thread retires fillers until
    // everything the workers retired is freed (the fillers' own garbage may stay pending). The
    // counter outlives the domain, which destroys the fillers still pending.
    static std::atomic<long> fillers_destroyed{0};
    const long before = fillers_destroyed.load();
    EXPECT_TRUE(eventually([&] {
      retire_one<S>(domain, fillers_destroyed);
      auto now = domain.stats();
      return now.freed == retired + static_cast<std::uint64_t>(fillers_destroyed.load() - before);
    })) << "garbage left by exited threads was never freed";
  } else if constexpr (S::family == reclaim::family::epoch) {
    // With the workers gone, operations of the one live thread free everything, orphans included.
    EXPECT_TRUE(eventually([&] {
      { typename S::guard g(domain); }
      auto now = domain.stats();
      return now.freed == now.retired;
    })) << "garbage left by exited threads was never freed";
  }
}

// One random operation on a key below `keys` (40% inserts, 40% erases, 20% lookups), tallied.
template <class C>
void random_op(C& set, rng& r, std::int64_t keys, tally& mine) {
  const auto key = static_cast<std::int64_t>(r.below(static_cast<std::uint64_t>(keys)));
  const auto op = r.below(10);
  if (op < 4) {
    if (set.insert(key)) {
      mine.sum += key;
      ++mine.count;
    }
  } else if (op < 8) {
    if (set.erase(key)) {
      mine.sum -= key;
      --mine.count;
      ++mine.erases;
    }
  } else {
    set.contains(key);
  }
  ++mine.ops;
}

// Extra arguments go to the container's constructor after the domain (hm_hashmap's bucket count).
template <class C, class... Args>
void run_stress(int thread_count, std::int64_t keys, Args... container_args) {
  typename C::domain_type domain;
  C set(domain, container_args...);
  tally total;
  rng seed_rng(static_cast<std::uint64_t>(keys * 31 + thread_count));
  for (std::int64_t k = 0; k < keys; ++k) {
    if (seed_rng.below(2) && set.insert(k)) {
      total.sum += k;
      ++total.count;
    }
  }
  std::vector<tally> tallies(static_cast<std::size_t>(thread_count));
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < thread_count; ++t)
    threads.emplace_back([&, t] {
      rng r(static_cast<std::uint64_t>(t) + 1);
      tally mine;
      // At least a few operations each, even if the machine is so busy that a worker starts late.
      while (!stop.load(std::memory_order_relaxed) || mine.ops < 200) random_op(set, r, keys, mine);
      tallies[static_cast<std::size_t>(t)] = mine;
    });
  std::this_thread::sleep_for(stress_time());
  stop = true;
  for (auto& th : threads) th.join();
  for (const tally& m : tallies) {
    EXPECT_GT(m.ops, 0u) << "a worker never ran";
    total += m;
  }
  EXPECT_TRUE(set.unsafe_well_formed());
  EXPECT_EQ(set.size(), static_cast<std::size_t>(total.count));
  EXPECT_EQ(set.unsafe_key_sum(), total.sum);
  EXPECT_GT(total.erases, 0u);
  check_reclamation_counters<C>(domain, total.erases, static_cast<std::uint64_t>(thread_count + 1),
                                static_cast<std::uint64_t>(total.count) + total.erases);
  ::testing::Test::RecordProperty("ops", std::to_string(total.ops));
}

}  // namespace reclaim_test::containers
