// SPDX-License-Identifier: MIT
// The shared pieces under every scheme: marked pointers, retired lists, the orphanage, policy packs,
// and the applicability declarations the lab derives its matrix from.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include "test_support.hpp"

namespace {

using namespace reclaim_test;
using reclaim::core::orphan_headers;
using reclaim::core::orphanage;
using reclaim::core::retired_hook;
using reclaim::core::retired_list;

// ---------------------------------------------------------------------------------------------
// marked_ptr

struct alignas(8) widget {
  int value = 0;
};

TEST(marked_ptr, default_is_null_and_unmarked) {
  reclaim::marked_ptr<widget> p;
  EXPECT_EQ(p.get(), nullptr);
  EXPECT_EQ(p.mark(), 0u);
  EXPECT_FALSE(p);
}

// marked_ptr<T>, concurrent_ptr<T> and guard_ptr<T, Scheme> agree on MarkBits (0 unless named),
// so the natural spellings convert: what a concurrent_ptr<T> loads is a marked_ptr<T>.
TEST(marked_ptr, defaults_agree_with_concurrent_ptr) {
  static_assert(std::is_same_v<reclaim::concurrent_ptr<widget>::pointer,
                               reclaim::marked_ptr<widget>>);
  static_assert(std::is_same_v<reclaim::guard_ptr<tracked<reclaim::hp<>>, reclaim::hp<>>::pointer,
                               reclaim::marked_ptr<tracked<reclaim::hp<>>>>);
  widget w{9};
  reclaim::concurrent_ptr<widget> link(&w);
  reclaim::marked_ptr<widget> p = link.load();
  EXPECT_EQ(p->value, 9);
  EXPECT_TRUE(link.compare_exchange_strong(p, reclaim::marked_ptr<widget>()));
  EXPECT_FALSE(link.load());
}

TEST(marked_ptr, mark_and_pointer_are_kept_apart) {
  widget w{5};
  reclaim::marked_ptr<widget> plain(&w);
  reclaim::marked_ptr<widget, 1> marked(&w, 1);
  EXPECT_EQ(plain.get(), &w);
  EXPECT_EQ(plain.mark(), 0u);
  EXPECT_EQ(marked.get(), &w);
  EXPECT_EQ(marked.mark(), 1u);
  EXPECT_TRUE(marked);
  EXPECT_EQ(marked->value, 5);
  // A marked null pointer is still null.
  reclaim::marked_ptr<widget, 1> marked_null(nullptr, 1);
  EXPECT_FALSE(marked_null);
  EXPECT_EQ(marked_null.mark(), 1u);

  reclaim::marked_ptr<widget, 3> three(&w, 7);
  static_assert(reclaim::marked_ptr<widget, 3>::mark_mask == 7);
  EXPECT_EQ(three.get(), &w);
  EXPECT_EQ(three.mark(), 7u);
}

TEST(marked_ptr, equality_compares_pointer_and_mark) {
  widget a, b;
  using mp = reclaim::marked_ptr<widget, 1>;
  EXPECT_EQ(mp(&a), mp(&a));
  EXPECT_EQ(mp(&a, 1), mp(&a, 1));
  EXPECT_NE(mp(&a), mp(&a, 1));
  EXPECT_NE(mp(&a), mp(&b));
  EXPECT_NE(mp(&a, 1), mp(&b, 1));
  EXPECT_EQ(mp(), mp(nullptr));
}

TEST(marked_ptr, works_in_a_lock_free_atomic) {
  widget a, b;
  using mp = reclaim::marked_ptr<widget, 1>;
  static_assert(std::is_trivially_copyable_v<mp>);
  std::atomic<mp> link{mp(&a)};
  EXPECT_TRUE(link.is_lock_free());
  mp expected(&a);
  // Marking the link makes a CAS that expects the unmarked value fail: how Harris-Michael lists
  // keep a deleted node's successor frozen.
  EXPECT_TRUE(link.compare_exchange_strong(expected, mp(&a, 1)));
  expected = mp(&a);
  EXPECT_FALSE(link.compare_exchange_strong(expected, mp(&b)));
  EXPECT_EQ(expected, mp(&a, 1));
  EXPECT_EQ(link.load().get(), &a);
}

// ---------------------------------------------------------------------------------------------
// retired_list

struct item : retired_hook {
  item(int i, std::atomic<int>& c) : id(i), destroyed(&c) {}
  ~item() { destroyed->fetch_add(1, std::memory_order_relaxed); }
  int id;
  std::atomic<int>* destroyed;
};

std::atomic<int> custom_deletes{0};
void custom_delete(item* it) {
  custom_deletes.fetch_add(1);
  delete it;
}

int id_of(const retired_hook* h) { return static_cast<const item*>(h)->id; }

// The ids along the list's links, checking on the way that tail() is the last node.
std::vector<int> ids_of(const retired_list& list) {
  std::vector<int> ids;
  const retired_hook* last = nullptr;
  for (const retired_hook* h = list.head(); h; h = h->next_retired) {
    ids.push_back(id_of(h));
    last = h;
  }
  EXPECT_EQ(last, list.tail()) << "tail() is not the last node";
  EXPECT_EQ(ids.size(), list.size()) << "size() disagrees with the links";
  return ids;
}

retired_list make_list(int first, int count, std::atomic<int>& destroyed) {
  retired_list list;
  for (int i = first; i < first + count; ++i)
    list.push(reclaim::core::to_retired(new item(i, destroyed)));
  return list;
}

TEST(retired_list, push_and_pop_are_last_in_first_out) {
  std::atomic<int> destroyed{0};
  retired_list list;
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.pop(), nullptr);
  list = make_list(1, 3, destroyed);
  EXPECT_FALSE(list.empty());
  EXPECT_EQ(list.size(), 3u);
  EXPECT_EQ(ids_of(list), (std::vector<int>{3, 2, 1}));
  retired_hook* h = list.pop();
  EXPECT_EQ(id_of(h), 3);
  EXPECT_EQ(list.size(), 2u);
  h->destroy(h);
  EXPECT_EQ(destroyed.load(), 1);
  EXPECT_EQ(list.destroy_all(), 2u);
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.tail(), nullptr);
  EXPECT_EQ(destroyed.load(), 3);
}

TEST(retired_list, splice_joins_lists_and_keeps_counts) {
  std::atomic<int> destroyed{0};
  retired_list a = make_list(1, 2, destroyed);
  retired_list b = make_list(10, 3, destroyed);
  a.splice(std::move(b));
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.size(), 0u);
  EXPECT_EQ(a.size(), 5u);
  auto ids = ids_of(a);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<int>{1, 2, 10, 11, 12}));

  retired_list empty;
  a.splice(std::move(empty));  // splicing nothing changes nothing
  EXPECT_EQ(a.size(), 5u);
  ids_of(a);

  retired_list c;
  c.splice(std::move(a));  // into an empty list: tail must be set
  EXPECT_EQ(c.size(), 5u);
  EXPECT_TRUE(a.empty());
  ids_of(c);
  c.push(reclaim::core::to_retired(new item(99, destroyed)));
  EXPECT_EQ(ids_of(c).size(), 6u);

  // The raw form: a chain given by head, tail and count.
  retired_list d = make_list(20, 2, destroyed);
  retired_hook* tail = d.tail();
  retired_hook* head = d.head();
  std::size_t n = d.size();
  d = retired_list{};  // the chain now belongs to nobody until spliced
  c.splice(head, tail, n);
  EXPECT_EQ(ids_of(c).size(), 8u);
  EXPECT_EQ(c.destroy_all(), 8u);
  EXPECT_EQ(destroyed.load(), 8);
}

TEST(retired_list, partition_into_moves_exactly_the_safe_nodes) {
  std::atomic<int> destroyed{0};
  retired_list list = make_list(0, 100, destroyed);
  retired_list safe = make_list(1000, 1, destroyed);  // already holds one node
  list.partition_into(safe, [](retired_hook* h) { return id_of(h) % 3 == 0; });
  auto kept = ids_of(list);
  auto moved = ids_of(safe);
  EXPECT_EQ(kept.size(), 66u);
  EXPECT_EQ(moved.size(), 35u);
  for (int id : kept) EXPECT_NE(id % 3, 0) << id;
  for (int id : moved) EXPECT_TRUE(id % 3 == 0 || id == 1000) << id;
  // Both lists stay usable: push and splice rely on their tails.
  list.splice(std::move(safe));
  EXPECT_EQ(ids_of(list).size(), 101u);
  EXPECT_EQ(list.destroy_all(), 101u);
  EXPECT_EQ(destroyed.load(), 101);
}

TEST(retired_list, destroy_all_destroys_each_node_once_with_its_deleter) {
  std::atomic<int> destroyed{0};
  custom_deletes = 0;
  retired_list list = make_list(0, 10, destroyed);
  for (int i = 0; i < 5; ++i)
    list.push(reclaim::core::to_retired<&custom_delete>(new item(100 + i, destroyed)));
  EXPECT_EQ(list.destroy_all(), 15u);
  EXPECT_EQ(destroyed.load(), 15);
  EXPECT_EQ(custom_deletes.load(), 5);
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.destroy_all(), 0u);
}

TEST(retired_list, moving_leaves_the_source_empty) {
  std::atomic<int> destroyed{0};
  retired_list a = make_list(0, 4, destroyed);
  retired_list b(std::move(a));
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(a.tail(), nullptr);
  EXPECT_EQ(b.size(), 4u);
  retired_list c;
  c = std::move(b);
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(ids_of(c).size(), 4u);
  EXPECT_EQ(c.destroy_all(), 4u);
}

// ---------------------------------------------------------------------------------------------
// orphanage

// Gives `list` with `stamp`, in a header reserved for it, as a record does at thread exit.
void give(orphanage& o, retired_list&& list, std::uint64_t stamp = 0) {
  orphan_headers headers;
  headers.reserve(1);
  o.give(std::move(list), stamp, headers);
}

TEST(orphanage, take_all_returns_everything_given) {
  std::atomic<int> destroyed{0};
  orphanage o;
  EXPECT_TRUE(o.empty());
  EXPECT_TRUE(o.take_all().empty());
  give(o, retired_list{});
  EXPECT_TRUE(o.empty()) << "an empty list is not handed over";
  for (int i = 0; i < 3; ++i) {
    retired_list l = make_list(10 * i, i + 1, destroyed);
    give(o, std::move(l));
    EXPECT_TRUE(l.empty()) << "give() must take the list";
  }
  EXPECT_FALSE(o.empty());
  retired_list all = o.take_all();
  EXPECT_TRUE(o.empty());
  EXPECT_EQ(all.size(), 6u) << "the batches' sizes add up without walking the nodes";
  auto ids = ids_of(all);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<int>{0, 10, 11, 20, 21, 22}));
  EXPECT_EQ(all.destroy_all(), 6u);
}

TEST(orphanage, handing_over_uses_the_headers_reserved_beforehand) {
  std::atomic<int> destroyed{0};
  orphanage o;
  orphan_headers headers;
  headers.reserve(2);
  headers.reserve(2);  // already there: nothing more
  o.give(make_list(0, 2, destroyed), 1, headers);
  o.give(make_list(2, 2, destroyed), 2, headers);
  EXPECT_EQ(headers.take(), nullptr) << "two batches, two headers";
  EXPECT_EQ(o.take_all().destroy_all(), 4u);
}

TEST(orphanage, take_if_takes_the_safe_batches_and_keeps_the_others_with_their_stamps) {
  std::atomic<int> destroyed{0};
  orphanage o;
  for (int stamp = 1; stamp <= 5; ++stamp) give(o, make_list(10 * stamp, stamp, destroyed), stamp);
  retired_list old = o.take_if([](std::uint64_t stamp) { return stamp <= 2; });
  auto ids = ids_of(old);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<int>{10, 20, 21}));
  EXPECT_FALSE(o.empty());
  // The others came back unchanged: the same predicate takes nothing more, a later one the rest.
  EXPECT_TRUE(o.take_if([](std::uint64_t stamp) { return stamp <= 2; }).empty());
  std::vector<std::uint64_t> stamps_seen;
  retired_list rest = o.take_if([&](std::uint64_t stamp) {
    stamps_seen.push_back(stamp);
    return true;
  });
  std::sort(stamps_seen.begin(), stamps_seen.end());
  EXPECT_EQ(stamps_seen, (std::vector<std::uint64_t>{3, 4, 5}));
  EXPECT_EQ(rest.size(), 12u);
  EXPECT_TRUE(o.empty());
  EXPECT_EQ(old.destroy_all() + rest.destroy_all(), 15u);
}

TEST(orphanage, destruction_frees_what_was_never_taken) {
  std::atomic<int> destroyed{0};
  {
    orphanage o;
    give(o, make_list(0, 7, destroyed));
    give(o, make_list(7, 3, destroyed), 9);
  }
  EXPECT_EQ(destroyed.load(), 10);
}

TEST(orphanage, concurrent_give_and_take_lose_nothing) {
  constexpr int givers = 4;
  const int lists_per_giver = static_cast<int>(scaled(3000));
  constexpr int max_list = 5;
  std::atomic<int> destroyed{0};
  orphanage o;
  // Every id is given once; the takers mark each one they see.
  const int id_space = givers * lists_per_giver * max_list;
  std::vector<std::atomic<int>> seen(static_cast<std::size_t>(id_space));
  std::atomic<long> given{0};
  std::atomic<bool> giving_done{false};
  std::atomic<long> taken{0};

  // Takes the batches of even stamps only, or all of them: the odd ones keep going back.
  auto take = [&](bool all) {
    retired_list got = o.take_if([all](std::uint64_t stamp) { return all || stamp % 2 == 0; });
    for (retired_hook* h = got.head(); h; h = h->next_retired) seen[id_of(h)].fetch_add(1);
    taken += static_cast<long>(got.size());
    got.destroy_all();
  };
  std::vector<std::thread> threads;
  for (int g = 0; g < givers; ++g)
    threads.emplace_back([&, g] {
      rng r(static_cast<std::uint64_t>(g) + 7);
      orphan_headers headers;
      for (int i = 0; i < lists_per_giver; ++i) {
        int len = 1 + static_cast<int>(r.below(max_list));
        int base = (g * lists_per_giver + i) * max_list;
        headers.reserve(1);
        o.give(make_list(base, len, destroyed), static_cast<std::uint64_t>(i), headers);
        given += len;
      }
    });
  std::thread taker([&] {
    while (!giving_done.load()) take(false);
  });
  for (auto& t : threads) t.join();
  giving_done = true;
  taker.join();
  take(true);
  EXPECT_TRUE(o.empty());
  EXPECT_EQ(taken.load(), given.load());
  EXPECT_EQ(destroyed.load(), given.load());
  int duplicates = 0;
  for (auto& s : seen) duplicates += s.load() > 1;
  EXPECT_EQ(duplicates, 0);
}

// ---------------------------------------------------------------------------------------------
// Policy packs

struct kind_a {};
struct kind_b {};
template <int N>
struct pa {
  using policy_kind = kind_a;
  static constexpr int value = N;
};
template <int N>
struct pb {
  using policy_kind = kind_b;
  static constexpr int value = N;
};

TEST(policy_pack, picks_the_first_policy_of_a_kind_or_the_default) {
  using reclaim::core::find_policy_t;
  static_assert(std::is_same_v<find_policy_t<kind_a, pa<0>>, pa<0>>);
  static_assert(std::is_same_v<find_policy_t<kind_a, pa<0>, pb<1>>, pa<0>>);
  static_assert(std::is_same_v<find_policy_t<kind_a, pa<0>, pb<1>, pa<2>>, pa<2>>);
  static_assert(std::is_same_v<find_policy_t<kind_a, pa<0>, pa<3>, pa<2>>, pa<3>>);
  static_assert(std::is_same_v<find_policy_t<kind_b, pb<0>, pa<3>, pb<5>>, pb<5>>);
  using known = reclaim::core::known_kinds<kind_a>;
  static_assert(known::contains<pa<1>> && !known::contains<pb<1>>);
  // The schemes' own packs, in any order.
  static_assert(reclaim::debra<reclaim::batch_free, reclaim::check_every<7>>::check_interval == 7);
  static_assert(reclaim::hp<reclaim::fence_policy<reclaim::core::symmetric_fence>,
                            reclaim::slots<6>>::slot_count == 6);
  static_assert(std::is_same_v<reclaim::hp<reclaim::slots<6>>::fence, reclaim::core::symmetric_fence>);
  SUCCEED();
}

// ---------------------------------------------------------------------------------------------
// 12: applicability declarations

// Minimal stand-ins for schemes of other families: applies<> reads only a scheme's `needs`.
struct needs_restart_scheme {
  static constexpr unsigned needs = reclaim::needs_restartable_read_phases;
};
struct needs_everything_scheme {
  static constexpr unsigned needs =
      reclaim::needs_validated_reads | reclaim::needs_restartable_read_phases;
};

TEST(applicability, every_shipped_pair_is_declared_safe) {
  using namespace reclaim;
  // Whatever the element types: the schemes' needs do not depend on them.
  static_assert(protects<hp<>, ds::lazy_list_map<std::string, std::string, hp<>>>);
  static_assert(protects<nbr<>, ds::hm_hashmap<std::string, std::string, nbr<>>>);  // restarts
  static_assert(!protects<nbr<>, ds::guarded_hm_list<std::string, nbr<>>>);
  static_assert(protects<nbr<>, ds::dgt_bst_map<std::string, std::string, nbr<>>>);
  using reclaim_test::lazy_list;
  using reclaim_test::hm_list;
  static_assert(protects<none, lazy_list<none>>);
  static_assert(protects<debra<>, lazy_list<debra<>>>);
  static_assert(protects<hp<>, lazy_list<hp<>>>);
  static_assert(protects<none, hm_list<none>>);
  static_assert(protects<debra<>, hm_list<debra<>>>);
  static_assert(protects<hp<>, hm_list<hp<>>>);
  static_assert(applies<hp<>, hm_list<hp<>>>().ok);
  EXPECT_TRUE((applies<hp<>, lazy_list<hp<>>>().ok));
  EXPECT_TRUE((applies<hp<>, lazy_list<hp<>>>().why_not.empty()));
}

TEST(applicability, hm_list_refuses_restartable_read_phases_with_a_reason) {
  using namespace reclaim;
  using list = ds::hm_list<std::int64_t, debra<>>;
  EXPECT_TRUE(list::offers(needs_validated_reads).yes);
  support s = list::offers(needs_restartable_read_phases);
  EXPECT_FALSE(s.yes);
  EXPECT_FALSE(s.why_not.empty());

  static_assert(!protects<needs_restart_scheme, list>);
  static_assert(!protects<needs_everything_scheme, list>);
  applicability a = applies<needs_restart_scheme, list>();
  EXPECT_FALSE(a.ok);
  EXPECT_EQ(a.why_not, s.why_not) << "applies() must pass on the container's own reason";
  EXPECT_NE(a.why_not.find("restart"), std::string_view::npos) << a.why_not;
  EXPECT_FALSE((applies<needs_everything_scheme, list>().ok));
}

// Every need but allocated nodes: its sentinels are members of the list, which reference counting
// (lfrc) cannot read through, and it says so.
TEST(applicability, lazy_list_offers_every_need_but_allocated_nodes) {
  using namespace reclaim;
  using list = ds::lazy_list<std::int64_t, debra<>>;
  for (needs n : all_needs)
    EXPECT_EQ(list::offers(n).yes, n != needs_allocated_nodes) << to_string(n);
  EXPECT_NE(list::offers(needs_allocated_nodes).why_not.find("sentinels"), std::string_view::npos);
  static_assert(!protects<lfrc<>, ds::lazy_list<std::int64_t, lfrc<>>>);
  static_assert(protects<lfrc<>, ds::hm_list<std::int64_t, lfrc<>>>);
  static_assert(protects<needs_restart_scheme, list>);
  static_assert(protects<needs_everything_scheme, list>);
  EXPECT_EQ(to_string(needs_validated_reads), "validated reads");
  EXPECT_EQ(to_string(needs_restartable_read_phases), "restartable read phases");
  EXPECT_EQ(to_string(needs_allocated_nodes), "allocated nodes");
}

}  // namespace

// The policies' older spellings stay, deprecated, for one release: each is the new one.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static_assert(std::is_same_v<reclaim::era_frequency<5>, reclaim::advance_every<5>>);
static_assert(std::is_same_v<reclaim::epoch_freq<5>, reclaim::advance_every<5>>);
static_assert(std::is_same_v<reclaim::scan_frequency<5>, reclaim::scan_every<5>>);
static_assert(std::is_same_v<reclaim::empty_freq<5>, reclaim::scan_every<5>>);
static_assert(std::is_same_v<reclaim::token_check_every<5>, reclaim::check_every<5>>);
static_assert(std::is_same_v<reclaim::bag_threshold<64>, reclaim::scan_threshold<64>>);
static_assert(std::is_same_v<reclaim::reservations<3>, reclaim::slots<3>>);
#pragma GCC diagnostic pop
