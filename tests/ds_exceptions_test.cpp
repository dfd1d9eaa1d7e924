// SPDX-License-Identifier: MIT
// Keys whose copy constructor throws: every container keeps the strong guarantee (an insert that
// throws leaves the set as it was, an erase that throws too), holds no lock afterwards (the next
// operation on the same place does not hang), and leaks nothing (every key made is destroyed once
// the container and its domain are gone; AddressSanitizer checks the nodes). Sets only: a map's
// key is copied in the same places, and its value is constructed beside it.
#include <cstdint>
#include <functional>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "container_suite.hpp"

namespace reclaim_test::containers {
namespace {

struct copy_failure : std::runtime_error {
  copy_failure() : std::runtime_error("throwing_key: copy failed") {}
};

// An integer key whose copies throw, while armed, once every `every` copies (one count for all
// threads), and that counts the keys alive. It has no move constructor: a container that moves a
// key copies it, and that may throw too.
struct throwing_key {
  static constexpr long every = 5;
  static inline std::atomic<long> alive{0}, copies{0}, throws{0};
  static inline std::atomic<bool> armed{false};

  explicit throwing_key(std::int64_t v) : value(v) { alive.fetch_add(1); }
  throwing_key(const throwing_key& other) : value(other.value) {
    if (armed.load(std::memory_order_relaxed) &&
        copies.fetch_add(1, std::memory_order_relaxed) % every == every - 1) {
      throws.fetch_add(1, std::memory_order_relaxed);
      throw copy_failure();
    }
    alive.fetch_add(1);
  }
  throwing_key& operator=(const throwing_key&) = delete;
  ~throwing_key() { alive.fetch_sub(1); }

  friend bool operator<(const throwing_key& a, const throwing_key& b) { return a.value < b.value; }
  friend bool operator==(const throwing_key& a, const throwing_key& b) {
    return a.value == b.value;
  }
  std::int64_t value;
};
struct key_hash {
  std::size_t operator()(const throwing_key& k) const noexcept {
    return std::hash<std::int64_t>{}(k.value);
  }
};

// Copies may throw while one lives.
struct armed_copies {
  armed_copies() { throwing_key::armed = true; }
  ~armed_copies() { throwing_key::armed = false; }
};

template <class S>
using dgt_bst_t = reclaim::ds::dgt_bst<throwing_key, S>;
template <class S>
using lazy_list_t = reclaim::ds::lazy_list<throwing_key, S>;
template <class S>
using hm_list_t = reclaim::ds::hm_list<throwing_key, S>;
template <class S>
using harris_list_t = reclaim::ds::harris_list<throwing_key, S>;
template <class S>
using hm_hashset_t = reclaim::ds::hm_hashset<throwing_key, S, key_hash>;
template <class S>
using lazy_skiplist_t = reclaim::ds::lazy_skiplist<
    throwing_key,
    reclaim::sized_for<S, reclaim::ds::lazy_skiplist<std::int64_t, reclaim::none>>>;
template <class S>
using abtree_t = reclaim::ds::abtree<throwing_key, S>;
template <class S>
using occ_avl_t = reclaim::ds::occ_avl<throwing_key, S>;
template <class S>
using nm_bst_t = reclaim::ds::nm_bst<throwing_key, S>;
template <class S>
using cuckoo_set_t = reclaim::ds::cuckoo_set<throwing_key, S, key_hash>;
template <class S>
using guarded_hm_list_t = reclaim::ds::guarded_hm_list<throwing_key, S>;

// Every container under an epoch scheme, a pointer scheme and neutralization, where it can serve
// them (reclaim::protects).
using exception_schemes = scheme_list<debra<>, hp<>, nbr_plus<reclaim::scan_threshold<64>>>;
template <template <class> class DS>
using pairs = typename protected_pairs<DS, exception_schemes>::type;

using throwing_containers =
    typename concat<pairs<dgt_bst_t>, pairs<lazy_list_t>, pairs<hm_list_t>, pairs<harris_list_t>,
                    pairs<hm_hashset_t>, pairs<lazy_skiplist_t>, pairs<abtree_t>,
                    pairs<occ_avl_t>, pairs<nm_bst_t>, pairs<cuckoo_set_t>,
                    pairs<guarded_hm_list_t>>::type;

template <class C>
class throwing_keys : public ::testing::Test {};
TYPED_TEST_SUITE(throwing_keys, throwing_containers);

// Quiescent: the set holds `count` keys summing to `sum`, in a well-formed structure.
template <class C>
void expect_contents(const C& set, std::int64_t count, std::int64_t sum) {
  std::int64_t held = 0, held_sum = 0;
  set.unsafe_for_each([&](const throwing_key& k) {
    ++held;
    held_sum += k.value;
  });
  EXPECT_EQ(held, count);
  EXPECT_EQ(held_sum, sum);
  if constexpr (requires { set.unsafe_well_formed(); }) {
    EXPECT_TRUE(set.unsafe_well_formed());
  }
}

// Runs `update` (insert or erase) and says whether it succeeded, threw (nothing changed) or
// found nothing to do.
enum class outcome { done, not_done, threw };
template <class F>
outcome attempt(F update) {
  try {
    return update() ? outcome::done : outcome::not_done;
  } catch (const copy_failure&) {
    return outcome::threw;
  }
}

// One thread against a model: after every insert or erase, thrown or not, the key is present
// exactly when the model says so, and the size and key sum agree at the end.
TYPED_TEST(throwing_keys, an_update_that_throws_changes_nothing) {
  using C = TypeParam;
  const long before = throwing_key::alive.load();
  {
    typename C::scheme_type::domain domain;
    C set(domain);
    std::set<std::int64_t> model;
    rng r(11);
    const long throws_before = throwing_key::throws.load();
    {
      armed_copies armed;
      for (long i = 0; i < scaled(4000); ++i) {
        const throwing_key key(static_cast<std::int64_t>(r.below(64)));
        if (r.below(2) == 0) {
          if (attempt([&] { return set.insert(key); }) == outcome::done) model.insert(key.value);
        } else {
          if (attempt([&] { return set.erase(key); }) == outcome::done) model.erase(key.value);
        }
        ASSERT_EQ(set.contains(key), model.contains(key.value))
            << "step " << i << ", key " << key.value;
      }
    }
    EXPECT_GT(throwing_key::throws.load(), throws_before)
        << "no copy threw: the test tests nothing";
    std::int64_t sum = 0;
    for (std::int64_t k : model) sum += k;
    expect_contents(set, static_cast<std::int64_t>(model.size()), sum);
  }
  EXPECT_EQ(throwing_key::alive.load(), before) << "a key was leaked or destroyed twice";
}

// Threads insert and erase with copies failing: no operation hangs on a lock a failed one left
// held, and the contents are what the successful operations made.
TYPED_TEST(throwing_keys, concurrent_updates_that_throw_leave_consistent_contents) {
  using C = TypeParam;
  const long before = throwing_key::alive.load();
  {
    typename C::scheme_type::domain domain;
    C set(domain);
    std::atomic<bool> stop{false};
    std::atomic<std::int64_t> count{0}, sum{0};
    std::atomic<long> thrown{0};
    std::vector<std::thread> workers;
    {
      armed_copies armed;
      for (int t = 0; t < 4; ++t)
        workers.emplace_back([&, t] {
          rng r(static_cast<std::uint64_t>(t) + 100);
          std::int64_t my_count = 0, my_sum = 0;
          long my_thrown = 0;
          while (!stop.load(std::memory_order_relaxed)) {
            const throwing_key key(static_cast<std::int64_t>(r.below(32)));
            const bool inserting = r.below(2) == 0;
            const outcome o = inserting ? attempt([&] { return set.insert(key); })
                                        : attempt([&] { return set.erase(key); });
            if (o == outcome::threw) ++my_thrown;
            if (o != outcome::done) continue;
            my_count += inserting ? 1 : -1;
            my_sum += inserting ? key.value : -key.value;
          }
          count.fetch_add(my_count);
          sum.fetch_add(my_sum);
          thrown.fetch_add(my_thrown);
        });
      std::this_thread::sleep_for(stress_time() / 2);
      stop = true;
      for (auto& w : workers) w.join();
    }
    EXPECT_GT(thrown.load(), 0) << "no copy threw: the test tests nothing";
    expect_contents(set, count.load(), sum.load());
  }
  EXPECT_EQ(throwing_key::alive.load(), before) << "a key was leaked or destroyed twice";
}

}  // namespace
}  // namespace reclaim_test::containers
