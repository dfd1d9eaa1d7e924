// SPDX-License-Identifier: MIT
// Paper 003's smart-pointer interface (concurrent_ptr.hpp): guard_ptr protects what it acquired
// until it lets go, owns its protection (moves, nests, many at once, released in any order),
// region_guard holds an operation for its scope, and a Treiber stack written with it survives
// concurrent pushes and pops, over every scheme that serves it. That nbr does not is a compile
// error, checked by the ctest smart_ptr.nbr_is_a_compile_error (tests/compile_fail/).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>
#include <thread>
#include <vector>

#include "suite_support.hpp"
#include "test_support.hpp"

namespace {

using namespace reclaim_test;
using reclaim::concurrent_ptr;
using reclaim::guard_ptr;

// Every scheme that serves guard_ptr, and those of them that free while the domain lives.
using serving_schemes =
    ::testing::Types<reclaim::none, reclaim::debra<>, reclaim::debra<reclaim::check_every<5>>,
                     reclaim::hp<>, reclaim::hp<reclaim::slots<8>>,
                     reclaim::hp<reclaim::amortized_free<1>>, reclaim::ebr<>, reclaim::ner<>,
                     reclaim::qsbr<>, reclaim::rcu<>, reclaim::token_naive<>,
                     reclaim::token_pass_first<>, reclaim::token_periodic<>, reclaim::token_af<>,
                     reclaim::stamp_it<>, reclaim::lfrc<>, RECLAIM_TEST_HP_FAMILY,
                     RECLAIM_TEST_ERA_AND_BATCH_SCHEMES>;
using freeing_schemes =
    ::testing::Types<reclaim::debra<>, reclaim::debra<reclaim::check_every<5>>, reclaim::hp<>,
                     reclaim::hp<reclaim::slots<8>>, reclaim::hp<reclaim::amortized_free<1>>,
                     reclaim::ebr<>, reclaim::ner<>, reclaim::qsbr<>, reclaim::rcu<>,
                     reclaim::token_naive<>, reclaim::token_pass_first<>,
                     reclaim::token_periodic<>, reclaim::token_af<>, reclaim::stamp_it<>,
                     reclaim::lfrc<>, RECLAIM_TEST_HP_FAMILY,
                     RECLAIM_TEST_ERA_AND_BATCH_SCHEMES>;

RECLAIM_TYPED_SUITE(smart_ptr, serving_schemes);

RECLAIM_TYPED_SUITE(smart_ptr_frees, freeing_schemes);

template <class S>
using node = tracked<S>;
template <class S>
using link = concurrent_ptr<node<S>>;
template <class S>
using guard = guard_ptr<node<S>, S>;

// Enough operations for every scheme to scan, advance its epoch or pass its token several times
// (hp scans at R = 100 + 2H retires, rcu every few retires): n that retire a filler each, then n
// that retire nothing, so that an amortized free policy catches up with the retires.
constexpr long rounds = 1500;

template <class S>
void drive(typename S::domain& domain, std::atomic<long>& fillers, long n = rounds) {
  retire_many<S>(domain, fillers, n);
  for (long i = 0; i < n; ++i) empty_operation<S>(domain);
}
// Drives until `destroyed` reaches `target`; whether it did.
template <class S>
bool drive_until(typename S::domain& domain, std::atomic<long>& fillers,
                 const std::atomic<long>& destroyed, long target) {
  return eventually([&] {
    drive<S>(domain, fillers, 50);
    return destroyed.load() >= target;
  });
}

// Unlinks the node `src` holds and retires it through a guard_ptr of its own, as a container's
// erase would.
template <class S>
void unlink_and_reclaim(typename S::domain& domain, link<S>& src) {
  guard<S> g(domain);
  g.acquire(src, std::memory_order_acquire);
  typename link<S>::pointer expected = g;
  ASSERT_TRUE(src.compare_exchange_strong(expected, nullptr));
  g.reclaim();
  EXPECT_FALSE(g) << "reclaim() resets";
}

// The promise: a node acquired by one thread and unlinked and reclaimed by another is not freed
// until the first resets; then the scheme frees it. The holder keeps running operations after its
// reset, so that a live thread's quiescence is what lets the node go (qsbr needs it).
TYPED_TEST(smart_ptr_frees, acquire_protects_until_reset_across_threads) {
  using S = TypeParam;
  std::atomic<long> destroyed{0}, fillers{0};
  typename S::domain domain;
  link<S> head(new node<S>(destroyed, 7));
  gate acquired, reclaimed, reset_done;
  std::atomic<bool> stop{false};
  long payload = 0;
  std::thread holder([&] {
    guard<S> g(domain);
    g.acquire(head, std::memory_order_acquire);
    acquired.open();
    reclaimed.wait();
    payload = g->payload;  // still readable: not freed, not poisoned
    g.reset();
    reset_done.open();
    while (!stop.load()) empty_operation<S>(domain);
  });
  acquired.wait();
  unlink_and_reclaim<S>(domain, head);
  drive<S>(domain, fillers);
  EXPECT_EQ(destroyed.load(), 0) << "freed while another thread's guard_ptr held it";
  reclaimed.open();
  reset_done.wait();
  EXPECT_EQ(payload, 7);
  EXPECT_TRUE(drive_until<S>(domain, fillers, destroyed, 1)) << "not freed after the reset";
  stop.store(true);
  holder.join();
}

TYPED_TEST(smart_ptr, acquire_if_equal_fails_on_a_changed_pointer) {
  using S = TypeParam;
  std::atomic<long> destroyed{0};
  typename S::domain domain;
  auto* a = new node<S>(destroyed, 1);
  auto* b = new node<S>(destroyed, 2);
  link<S> head(a);
  guard<S> g(domain);
  EXPECT_FALSE(g.acquire_if_equal(head, b, std::memory_order_acquire));
  EXPECT_FALSE(g) << "a failed acquire_if_equal leaves the guard_ptr empty";
  EXPECT_TRUE(g.acquire_if_equal(head, a, std::memory_order_acquire));
  EXPECT_EQ(g.get(), a);
  EXPECT_EQ(g->payload, 1);
  head.store(b);
  EXPECT_FALSE(g.acquire_if_equal(head, a));
  EXPECT_FALSE(g);
  g.reset();
  delete a;
  head.store(nullptr);
  delete b;
}

// The mark is part of what acquire_if_equal compares, and of what acquire returns.
TYPED_TEST(smart_ptr, marks_travel_with_the_pointer) {
  using S = TypeParam;
  std::atomic<long> destroyed{0};
  typename S::domain domain;
  auto* a = new node<S>(destroyed, 1);
  concurrent_ptr<node<S>, 1> src({a, 1});
  guard_ptr<node<S>, S, 1> g(domain);
  EXPECT_FALSE(g.acquire_if_equal(src, a)) << "same node, other mark";
  EXPECT_TRUE(g.acquire_if_equal(src, {a, 1}));
  g.acquire(src);
  EXPECT_EQ(g.get(), a);
  EXPECT_EQ(g.mark(), 1u);
  using pointer = reclaim::marked_ptr<node<S>, 1>;
  EXPECT_TRUE(static_cast<pointer>(g) == pointer(a, 1));
  g.reset();
  delete a;
}

// After reset (or a failed acquire_if_equal) the node is the scheme's to free, from the same
// thread's next operations.
TYPED_TEST(smart_ptr_frees, reset_and_failed_acquire_release_the_node) {
  using S = TypeParam;
  std::atomic<long> destroyed{0}, fillers{0};
  typename S::domain domain;
  auto* first = new node<S>(destroyed);
  link<S> head(first);
  link<S> other(new node<S>(destroyed));
  guard<S> g(domain), h(domain);
  g.acquire(head);
  h.acquire(other);
  unlink_and_reclaim<S>(domain, head);
  unlink_and_reclaim<S>(domain, other);
  drive<S>(domain, fillers);
  EXPECT_EQ(destroyed.load(), 0) << "freed while held";
  g.reset();
  EXPECT_FALSE(h.acquire_if_equal(head, first)) << "head is null now";  // compares, never reads
  EXPECT_FALSE(h);
  EXPECT_TRUE(drive_until<S>(domain, fillers, destroyed, 2));
}

// Moving a guard_ptr moves its protection: the moved-to one protects, the moved-from one is empty
// and usable again.
TYPED_TEST(smart_ptr_frees, moving_moves_the_protection) {
  using S = TypeParam;
  std::atomic<long> destroyed{0}, spare_destroyed{0}, fillers{0};
  typename S::domain domain;
  link<S> head(new node<S>(destroyed));
  link<S> spare(new node<S>(spare_destroyed));
  guard<S> g(domain);
  g.acquire(head);
  guard<S> h(domain);
  h = std::move(g);
  EXPECT_FALSE(g);
  auto k = std::make_unique<guard<S>>(std::move(h));
  EXPECT_FALSE(h);
  unlink_and_reclaim<S>(domain, head);
  g.acquire(spare);  // the moved-from guard_ptr works again
  h.acquire(spare);
  drive<S>(domain, fillers);
  EXPECT_EQ(destroyed.load(), 0) << "the protection was lost in a move";
  k.reset();
  g.reset();
  h.reset();
  EXPECT_TRUE(drive_until<S>(domain, fillers, destroyed, 1));
  EXPECT_EQ(spare_destroyed.load(), 0);
  delete spare.load().get();
}

// Two nodes in links of their own, each with its own destruction counter, in a domain (declared
// after the counters: it may free the nodes), and a counter for the fillers that drive it.
template <class S>
struct two_links {
  std::atomic<long> first_destroyed{0}, second_destroyed{0}, fillers{0};
  typename S::domain domain;
  link<S> first, second;

  two_links(long first_payload, long second_payload)
      : first(new node<S>(first_destroyed, first_payload)),
        second(new node<S>(second_destroyed, second_payload)) {}
};

// A guard_ptr moved from while it borrowed a region's slot owns nothing afterwards: its next
// acquire takes a slot of its own, which it gives back when it ends (a moved-from protection that
// kept the "borrowed" mark would never give it back, and its hazard would stay published).
TYPED_TEST(smart_ptr_frees, a_moved_from_borrower_that_acquires_again_lets_go_when_it_ends) {
  using S = TypeParam;
  two_links<S> links(1, 2);
  auto& [first_destroyed, second_destroyed, fillers, domain, first, second] = links;
  {
    reclaim::region_guard<S> region(domain);
    guard<S> a(region);
    a.acquire(first);
    guard<S> b(std::move(a));
    a.acquire(second);
    EXPECT_EQ(a->payload, 2);
    EXPECT_EQ(b->payload, 1);
  }
  unlink_and_reclaim<S>(domain, first);
  unlink_and_reclaim<S>(domain, second);
  EXPECT_TRUE(drive_until<S>(domain, fillers, first_destroyed, 1));
  EXPECT_TRUE(drive_until<S>(domain, fillers, second_destroyed, 1))
      << "the moved-from guard_ptr's second protection outlived it";
}

// synchronize() waits for operations (guards). A guard_ptr that holds the thread's operation
// (the region schemes; lfrc's, whose counted reference is one) makes it wait for itself, a mistake
// named and stopped in every build; one that holds only its own protection (hazard pointers, eras,
// epoch_pop's) is no operation, and the caller's synchronize() returns.
TYPED_TEST(smart_ptr_frees, synchronize_beside_the_callers_own_guard_ptr) {
  using S = TypeParam;
  std::atomic<long> destroyed{0};
  typename S::domain domain;
  link<S> head(new node<S>(destroyed, 5));
  if constexpr (S::protection::holds_region || S::name == std::string_view("lfrc")) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
          guard<S> g(domain);
          g.acquire(head);
          domain.synchronize();
        },
        "would wait for its own operation");
  } else {
    guard<S> g(domain);
    g.acquire(head);
    domain.synchronize();
    EXPECT_EQ(g->payload, 5);
  }
  delete head.load().get();
}

// barrier() frees what was retired before it; a node that the caller's own guard_ptr still
// protects can never be freed while it waits: named and stopped in every build, whatever the
// scheme (the region schemes: the guard_ptr holds the caller's operation).
TYPED_TEST(smart_ptr_frees, barrier_while_the_callers_guard_ptr_holds_a_retired_node_is_named) {
  using S = TypeParam;
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        std::atomic<long> destroyed{0};
        typename S::domain domain;
        link<S> head(new node<S>(destroyed, 6));
        guard<S> g(domain);
        g.acquire(head);
        unlink_and_reclaim<S>(domain, head);
        domain.barrier();
      },
      "reclaim: .*(barrier\\(\\) would wait for ever|would wait for its own operation)");
}

// More guard_ptrs than a guard has slots (and than a block of hp's pool), released out of order:
// each node stays until its own guard_ptr lets go; under hp and lfrc a released one goes at once,
// while the others are still held.
TYPED_TEST(smart_ptr_frees, many_guard_ptrs_released_out_of_order) {
  using S = TypeParam;
  constexpr int n = 40;
  std::atomic<long> fillers{0};
  std::vector<std::atomic<long>> destroyed(n);
  typename S::domain domain;
  std::vector<link<S>> links(n);
  std::vector<guard<S>> held;
  for (int i = 0; i < n; ++i) {
    links[i].store(new node<S>(destroyed[i], i));
    held.emplace_back(domain).acquire(links[i]);
  }
  for (auto& l : links) unlink_and_reclaim<S>(domain, l);
  drive<S>(domain, fillers);
  for (int i = 0; i < n; ++i) EXPECT_EQ(destroyed[i].load(), 0) << "node " << i;
  for (int i = 0; i < n; i += 2) held[i].reset();  // the even ones first
  for (int i = n - 1; i > 0; i -= 2) EXPECT_EQ(held[i]->payload, i);
  if constexpr (S::family == reclaim::family::pointer || S::name == "lfrc") {
    // A slot per node: releasing some frees exactly those.
    EXPECT_TRUE(eventually([&] {
      drive<S>(domain, fillers, 50);
      for (int i = 0; i < n; i += 2)
        if (destroyed[i].load() != 1) return false;
      return true;
    }));
    for (int i = 1; i < n; i += 2) EXPECT_EQ(destroyed[i].load(), 0) << "node " << i;
  } else {
    // A region, or an era, which covers every node alive when it was reserved (these were made
    // with a plain new, so each is as old as the oldest era): the held ones stay.
    drive<S>(domain, fillers);
    for (int i = 1; i < n; i += 2) EXPECT_EQ(destroyed[i].load(), 0) << "node " << i;
  }
  for (int i = n - 1; i > 0; i -= 2) held[i].reset();  // then the odd ones, backwards
  EXPECT_TRUE(eventually([&] {
    drive<S>(domain, fillers, 50);
    for (auto& d : destroyed)
      if (d.load() != 1) return false;
    return true;
  }));
}

// A guard_ptr lives across container operations (which open and close their own guards, retire and
// free), and one acquired inside a guard outlives it.
TYPED_TEST(smart_ptr_frees, nests_with_container_operations) {
  using S = TypeParam;
  std::atomic<long> destroyed{0}, inner_destroyed{0}, fillers{0};
  typename S::domain domain;
  reclaim::ds::hm_list<std::int64_t, S> set(domain);
  link<S> head(new node<S>(destroyed, 5));
  link<S> inner_src(new node<S>(inner_destroyed, 6));
  guard<S> g(domain);
  g.acquire(head);
  guard<S> inner(domain);
  {
    typename S::guard op(domain);
    inner.acquire(inner_src);
  }
  for (int i = 0; i < 200; ++i) {
    set.insert(i % 50);
    set.erase((i * 7) % 50);
  }
  unlink_and_reclaim<S>(domain, head);
  unlink_and_reclaim<S>(domain, inner_src);
  for (int i = 0; i < rounds; ++i) {
    set.insert(i % 50);
    set.erase(i % 50);
  }
  drive<S>(domain, fillers);
  EXPECT_EQ(destroyed.load(), 0);
  EXPECT_EQ(inner_destroyed.load(), 0) << "the protection ended with the guard it was made in";
  EXPECT_EQ(g->payload, 5);
  EXPECT_EQ(inner->payload, 6);
  EXPECT_TRUE(set.unsafe_well_formed());
  g.reset();
  inner.reset();
  EXPECT_TRUE(drive_until<S>(domain, fillers, destroyed, 1));
  EXPECT_TRUE(drive_until<S>(domain, fillers, inner_destroyed, 1));
}

// region_guard holds the operation for its scope under region schemes: a node acquired and reset
// inside it is not freed before the region ends. Under hp it opens a guard, which protects nothing
// until a guard_ptr borrows its slots (and under hp_af the free policy still runs inside it).
TYPED_TEST(smart_ptr_frees, region_guard_holds_the_operation) {
  using S = TypeParam;
  std::atomic<long> destroyed{0}, fillers{0};
  typename S::domain domain;
  link<S> head(new node<S>(destroyed));
  {
    reclaim::region_guard<S> region(domain);
    guard<S> g(domain);
    g.acquire(head);
    g.reset();
    unlink_and_reclaim<S>(domain, head);
    if constexpr (S::protection::holds_region) {
      drive<S>(domain, fillers);
      EXPECT_EQ(destroyed.load(), 0) << "freed inside the region";
    } else {
      EXPECT_TRUE(drive_until<S>(domain, fillers, destroyed, 1));
    }
  }
  EXPECT_TRUE(drive_until<S>(domain, fillers, destroyed, 1));
}

// guard_ptrs made from a region borrow it (its operation, or under hp its slots): they protect
// what they acquired as those made from the domain do, move to and from those freely, and what
// they held is freed once they let go (hp) or the region ends (region schemes).
TYPED_TEST(smart_ptr_frees, guard_ptrs_made_from_a_region_borrow_it) {
  using S = TypeParam;
  two_links<S> links(3, 4);
  auto& [destroyed, moved_destroyed, fillers, domain, head, other] = links;
  {
    reclaim::region_guard<S> region(domain);
    guard<S> borrowed(region), moved(region);
    guard<S> owned(domain);
    borrowed.acquire(head);
    moved.acquire(other);
    // The borrowed protection goes with the move: owned now borrows too, and must also end
    // before the region does (it is declared after it).
    owned = std::move(moved);
    EXPECT_FALSE(moved);
    unlink_and_reclaim<S>(domain, head);
    unlink_and_reclaim<S>(domain, other);
    drive<S>(domain, fillers);
    EXPECT_EQ(destroyed.load(), 0) << "freed while a borrowing guard_ptr held it";
    EXPECT_EQ(moved_destroyed.load(), 0) << "the borrowed protection was lost in a move";
    EXPECT_EQ(borrowed->payload, 3);
    EXPECT_EQ(owned->payload, 4);
    borrowed.reset();
    owned.reset();
    if constexpr (!S::protection::holds_region) {
      EXPECT_TRUE(drive_until<S>(domain, fillers, destroyed, 1)) << "a reset lent slot still held";
      EXPECT_TRUE(drive_until<S>(domain, fillers, moved_destroyed, 1));
    } else {
      drive<S>(domain, fillers);
      EXPECT_EQ(destroyed.load() + moved_destroyed.load(), 0) << "freed inside the region";
    }
  }
  EXPECT_TRUE(drive_until<S>(domain, fillers, destroyed, 1));
  EXPECT_TRUE(drive_until<S>(domain, fillers, moved_destroyed, 1));
}

template <class S>
struct custom_deleter {
  static inline std::atomic<long> runs{0};
  static void destroy(node<S>* n) {
    runs.fetch_add(1);
    delete n;
  }
};

TYPED_TEST(smart_ptr_frees, reclaim_with_a_deleter) {
  using S = TypeParam;
  std::atomic<long> destroyed{0}, fillers{0};
  typename S::domain domain;
  link<S> head(new node<S>(destroyed));
  guard<S> g(domain);
  g.acquire(head);
  head.store(nullptr);
  g.template reclaim<&custom_deleter<S>::destroy>();
  EXPECT_FALSE(g);
  EXPECT_TRUE(drive_until<S>(domain, fillers, destroyed, 1));
  EXPECT_EQ(custom_deleter<S>::runs.load(), 1);
}

// hp: a guard_ptr's slot goes back to its thread's pool, so making and dropping guard_ptrs does not
// grow the hazards a scan reads (nor the scan threshold that follows them).
TEST(smart_ptr_hp, slots_are_given_back_to_the_pool) {
  using S = reclaim::hp<>;
  std::atomic<long> destroyed{0};
  S::domain domain;
  link<S> head(new node<S>(destroyed));
  { guard<S>(domain).acquire(head); }
  const std::size_t threshold = domain.scan_threshold();
  for (int i = 0; i < 1000; ++i) {
    guard<S> a(domain), b(domain);
    a.acquire(head);
    b.acquire(head);
    b = std::move(a);
  }
  EXPECT_EQ(domain.scan_threshold(), threshold);
  delete head.load().get();
}

// hp: a region lends its guard's slots (K of them) to the guard_ptrs made from it, so they take
// nothing from the pool; those made beyond K take from the pool, and every one protects.
TEST(smart_ptr_hp, a_region_lends_its_slots_then_the_pool_serves) {
  using S = reclaim::hp<reclaim::slots<2>>;
  std::atomic<long> fillers{0};
  std::vector<std::atomic<long>> destroyed(3);
  S::domain domain;
  std::vector<link<S>> links(3);
  for (int i = 0; i < 3; ++i) links[i].store(new node<S>(destroyed[i], i));
  { S::guard registers(domain); }
  const std::size_t threshold = domain.scan_threshold();
  {
    reclaim::region_guard<S> region(domain);
    guard<S> a(region), b(region);
    a.acquire(links[0]);
    b.acquire(links[1]);
    EXPECT_EQ(domain.scan_threshold(), threshold) << "a lent slot came from the pool";
    guard<S> c(region);  // the region's two slots are lent out
    c.acquire(links[2]);
    EXPECT_GT(domain.scan_threshold(), threshold) << "the third guard_ptr took no pool slot";
    for (auto& l : links) unlink_and_reclaim<S>(domain, l);
    drive<S>(domain, fillers);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(destroyed[i].load(), 0) << "node " << i;
    EXPECT_EQ(a->payload + b->payload + c->payload, 3);
  }
  EXPECT_TRUE(eventually([&] {
    drive<S>(domain, fillers, 50);
    for (auto& d : destroyed)
      if (d.load() != 1) return false;
    return true;
  }));
}

#ifndef NDEBUG
// A guard_ptr made from a region that outlives it would hold an operation (or a hazard slot) that
// has ended: debug builds stop when the region ends.
template <class S>
void outlive_the_region() {
  typename S::domain domain;
  auto region = std::make_unique<reclaim::region_guard<S>>(domain);
  guard<S> borrowed(*region);
  region.reset();
}
TEST(smart_ptr_misuse, a_guard_ptr_outliving_its_region_is_named) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(outlive_the_region<reclaim::debra<>>(), "made from a region_guard outlived it");
  EXPECT_DEATH(outlive_the_region<reclaim::hp<>>(), "made from a region_guard outlived it");
}

// Destroying a domain while a guard_ptr on it still protects a node is named in debug builds: the
// guard_ptr would later give its slot back to, or leave an operation of, a destroyed domain.
template <class S>
void destroy_domain_under_a_guard_ptr() {
  std::atomic<long> destroyed{0};
  auto domain = std::make_unique<typename S::domain>();
  link<S> head(new node<S>(destroyed));
  guard<S> g(*domain);
  g.acquire(head);
  domain.reset();
}
TEST(smart_ptr_misuse, destroying_a_domain_under_a_guard_ptr_is_named) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(destroy_domain_under_a_guard_ptr<reclaim::hp<>>(), "guard_ptr on it is alive");
  EXPECT_DEATH(destroy_domain_under_a_guard_ptr<reclaim::debra<>>(),
               "guard or guard_ptr on it is held");
}
#endif

// A Treiber stack written with concurrent_ptr and guard_ptr: each value pushed is popped exactly
// once, and the sums agree. The guard_ptr on the top node is what makes the pop's CAS safe from
// ABA: the node cannot be freed and reused while it is held.
template <class S>
class treiber_stack {
 public:
  struct item : S::node_base {
    explicit item(long v) : value(v) {}
    long value;
    concurrent_ptr<item> next;
  };

  explicit treiber_stack(typename S::domain& d) : domain_(d) {}
  ~treiber_stack() {
    while (item* n = top_.load(std::memory_order_relaxed).get()) {
      top_.store(n->next.load(std::memory_order_relaxed), std::memory_order_relaxed);
      delete n;
    }
  }

  void push(long v) {
    auto* n = new item(v);
    auto top = top_.load(std::memory_order_relaxed);
    do {
      n->next.store(top, std::memory_order_relaxed);
      // release: publishes the node's value and next to the pop that acquires it.
    } while (!top_.compare_exchange_weak(top, n, std::memory_order_release,
                                         std::memory_order_relaxed));
  }

  bool pop(long& v) {
    guard_ptr<item, S> top(domain_);
    for (;;) {
      top.acquire(top_, std::memory_order_acquire);
      if (!top) return false;
      typename concurrent_ptr<item>::pointer expected = top;
      if (top_.compare_exchange_weak(expected, top->next.load(std::memory_order_relaxed),
                                     std::memory_order_relaxed, std::memory_order_relaxed)) {
        v = top->value;
        top.reclaim();
        return true;
      }
    }
  }

 private:
  typename S::domain& domain_;
  concurrent_ptr<item> top_;
};

TYPED_TEST(smart_ptr, treiber_stack_stress) {
  using S = TypeParam;
  constexpr int threads = 4;
  const long per_thread = scaled(20000);
  typename S::domain domain;
  std::vector<std::atomic<int>> popped(threads * per_thread);
  std::atomic<long> pushed_sum{0}, popped_sum{0}, pops{0};
  {
    treiber_stack<S> stack(domain);
    auto record_pop = [&](long v) {
      popped[v].fetch_add(1, std::memory_order_relaxed);
      popped_sum.fetch_add(v, std::memory_order_relaxed);
      pops.fetch_add(1, std::memory_order_relaxed);
    };
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        rng r(t + 1);
        long sum = 0;
        for (long i = 0; i < per_thread; ++i) {
          const long v = t * per_thread + i;
          stack.push(v);
          sum += v;
          long got;
          if (r.below(4) != 0 && stack.pop(got)) record_pop(got);
        }
        pushed_sum.fetch_add(sum);
      });
    }
    for (auto& w : workers) w.join();
    long got;
    while (stack.pop(got)) record_pop(got);
    EXPECT_EQ(domain.stats().retired, static_cast<std::uint64_t>(pops.load()));
  }
  EXPECT_EQ(pops.load(), threads * per_thread);
  EXPECT_EQ(popped_sum.load(), pushed_sum.load());
  long wrong = 0;
  for (auto& p : popped) wrong += p.load() != 1;
  EXPECT_EQ(wrong, 0) << "values popped twice or never";
}

}  // namespace
