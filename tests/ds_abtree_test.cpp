// SPDX-License-Identifier: MIT
// abtree under the representative schemes that can protect it (container_suite.hpp), through the
// typed container suite and its lifecycle half; then what only it does: LLX and SCX themselves
// (detail/llx_scx.hpp), the (a,b) shape, and the leaves every update replaces.
#include "container_typed_tests.hpp"

#include <memory>

#include <reclaim/ds/detail/llx_scx.hpp>

namespace reclaim_test::containers {

INSTANTIATE_TYPED_TEST_SUITE_P(abtree, container, representative_pairs<abtree>);
INSTANTIATE_TYPED_TEST_SUITE_P(abtree, container_lifecycle, representative_pairs<abtree>);

}  // namespace reclaim_test::containers

namespace {

using namespace reclaim_test;
using reclaim::debra;
using reclaim::none;

// ---------------------------------------------------------------------------------------------
// LLX and SCX on a toy structure: nodes with two links.

struct toy : reclaim::ds::detail::llx_scx_fields {
  std::atomic<toy*> link[2] = {};
};
using toy_scx = reclaim::ds::detail::llx_scx<toy, 4>;
using status = toy_scx::llx_status;

TEST(llx_scx, an_scx_commits_when_nothing_changed_since_the_llxs_and_finalizes_its_r) {
  toy_scx scx;
  toy parent, child, fresh;
  parent.link[0] = &child;
  auto p = scx.llx(&parent), c = scx.llx(&child);
  ASSERT_EQ(p.status, status::snapshot);
  ASSERT_EQ(c.status, status::snapshot);
  toy_scx::scx_args v;
  v.add(&parent, p.tag, false);
  v.add(&child, c.tag, true);
  ASSERT_TRUE(scx.scx(v, parent.link[0], &child, &fresh));
  EXPECT_EQ(parent.link[0].load(), &fresh);
  EXPECT_EQ(scx.llx(&child).status, status::finalized) << "R's nodes are finalized for good";
  EXPECT_EQ(scx.llx(&parent).status, status::snapshot) << "V minus R stays usable";
  EXPECT_FALSE(scx.under_way(parent.info.load()));
}

TEST(llx_scx, an_scx_whose_llx_is_stale_fails_and_changes_nothing) {
  toy_scx scx;
  toy parent, a, b, c;
  parent.link[0] = &a;
  const auto stale = scx.llx(&parent);
  // Another SCX changes the parent after our LLX.
  toy_scx::scx_args first;
  first.add(&parent, scx.llx(&parent).tag, false);
  ASSERT_TRUE(scx.scx(first, parent.link[0], &a, &b));
  toy_scx::scx_args second;
  second.add(&parent, stale.tag, false);
  EXPECT_FALSE(scx.scx(second, parent.link[0], &b, &c));
  EXPECT_EQ(parent.link[0].load(), &b);
  EXPECT_FALSE(parent.marked.load());
  // A node finalized by a committed SCX cannot take part in a later one.
  toy_scx::scx_args remove;
  remove.add(&parent, scx.llx(&parent).tag, false);
  remove.add(&b, scx.llx(&b).tag, true);
  ASSERT_TRUE(scx.scx(remove, parent.link[0], &b, &c));
  EXPECT_EQ(scx.llx(&b).status, status::finalized);
}

TEST(llx_scx, threads_racing_scxs_on_one_field_commit_each_change_once) {
  // Each thread moves the shared counter node's link along a chain of fresh nodes: LLX, SCX, and
  // on failure (or help) again. Every committed SCX is seen in the final chain exactly once.
  toy_scx scx;
  toy head;
  constexpr int threads = 4;
  const long per_thread = scaled(20000);
  std::vector<std::unique_ptr<toy[]>> nodes;
  for (int t = 0; t < threads; ++t)
    nodes.push_back(std::make_unique<toy[]>(static_cast<std::size_t>(per_thread)));
  std::atomic<long> committed{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (long i = 0; i < per_thread; ++i) {
        toy* mine = &nodes[static_cast<std::size_t>(t)][static_cast<std::size_t>(i)];  // one each
        for (;;) {
          const auto r = scx.llx(&head);
          if (r.status == status::busy) {
            toy_scx::help_plan h;
            if (scx.plan(r.tag, h)) scx.help_if_under_way(h);
            continue;
          }
          if (r.status != status::snapshot) continue;
          toy* old = head.link[0].load();
          mine->link[1].store(old, std::memory_order_relaxed);
          toy_scx::scx_args v;
          v.add(&head, r.tag, false);
          if (scx.scx(v, head.link[0], old, mine)) break;
        }
        committed.fetch_add(1, std::memory_order_relaxed);
      }
    });
  for (auto& th : pool) th.join();
  long chain = 0;
  for (toy* n = head.link[0].load(); n; n = n->link[1].load()) ++chain;
  EXPECT_EQ(chain, committed.load());
  EXPECT_EQ(chain, threads * per_thread);
}

TEST(llx_scx, thread_indices_are_reused_after_threads_exit) {
  // The main thread takes its index first and stays live throughout: an index it took after the
  // others exited could be theirs, given back.
  const std::uint32_t main_index = reclaim::ds::detail::thread_index();
  std::uint32_t first = 0, second = 0;
  std::thread([&] { first = reclaim::ds::detail::thread_index(); }).join();
  std::thread([&] { second = reclaim::ds::detail::thread_index(); }).join();
  EXPECT_EQ(first, second) << "the second thread takes the index the first gave back";
  EXPECT_NE(main_index, first) << "two live threads never share one";
}

// ---------------------------------------------------------------------------------------------
// abtree's shape

using tree = reclaim::ds::abtree<std::int64_t, debra<>>;

TEST(abtree, every_update_replaces_its_leaf_and_a_full_leaf_splits_under_a_new_root) {
  none::domain domain;
  reclaim::ds::abtree<std::int64_t, none> t(domain);
  const std::int64_t b = tree::max_degree;
  for (std::int64_t k = 0; k < b; ++k) ASSERT_TRUE(t.insert(k));
  EXPECT_EQ(domain.stats().retired, static_cast<std::uint64_t>(b)) << "one leaf per insert";
  auto s = t.unsafe_shape();
  EXPECT_EQ(s.leaves, 1u);
  EXPECT_EQ(s.height, 0u) << "b keys fit in the root leaf";
  ASSERT_TRUE(t.insert(b));  // overflow: a root over two half-full leaves
  s = t.unsafe_shape();
  EXPECT_EQ(s.leaves, 2u);
  EXPECT_EQ(s.internal_nodes, 1u);
  EXPECT_EQ(s.height, 1u);
  EXPECT_EQ(domain.stats().retired, static_cast<std::uint64_t>(b + 1));
  EXPECT_TRUE(t.unsafe_well_formed());
  ASSERT_TRUE(t.erase(0));
  EXPECT_EQ(domain.stats().retired, static_cast<std::uint64_t>(b + 2));
}

TEST(abtree, ascending_keys_keep_every_leaf_at_one_depth_and_every_node_within_a_and_b) {
  debra<>::domain domain;
  tree t(domain);
  const std::int64_t n = scaled(20000);
  for (std::int64_t k = 0; k < n; ++k) {
    ASSERT_TRUE(t.insert(k));
    if (k % 997 == 0) {
      ASSERT_TRUE(t.unsafe_well_formed()) << "after " << k;
    }
  }
  ASSERT_TRUE(t.unsafe_well_formed());
  EXPECT_EQ(t.size(), static_cast<std::size_t>(n));
  EXPECT_EQ(t.unsafe_key_sum(), n * (n - 1) / 2);
  // Every node but the root holds at least a = 4: the height is at most log_4 of the leaves, plus
  // the root's level.
  const auto s = t.unsafe_shape();
  std::size_t bound = 1;
  for (std::size_t leaves = 1; leaves < s.leaves; leaves *= tree::min_degree) ++bound;
  EXPECT_LE(s.height, bound);
  // Erasing every other key, then the rest: joins and distributions all the way down to one leaf.
  for (std::int64_t k = 0; k < n; k += 2) ASSERT_TRUE(t.erase(k));
  ASSERT_TRUE(t.unsafe_well_formed());
  for (std::int64_t k = 1; k < n; k += 2) {
    ASSERT_TRUE(t.erase(k));
    if (k % 1001 == 0) {
      ASSERT_TRUE(t.unsafe_well_formed()) << "after erasing " << k;
    }
  }
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.unsafe_shape().leaves, 1u);
  EXPECT_EQ(t.unsafe_shape().height, 0u) << "an empty tree is one empty root leaf";
  EXPECT_TRUE(t.unsafe_well_formed());
}

}  // namespace
