// SPDX-License-Identifier: MIT
// The timeline recorder (core/timeline.hpp) and its hooks in the free policies and epoch schemes:
// bounded buffers, per-thread events, batch and slow frees, epoch events, and silence when no
// recorder is attached.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include <reclaim/core/timeline.hpp>

#include "test_support.hpp"

namespace {

using namespace reclaim_test;
namespace timeline = reclaim::timeline;
using timeline::event;

// Attaches the calling thread for the scope.
class attached {
 public:
  attached(timeline::recorder& r, std::size_t thread) { r.attach(thread); }
  ~attached() { timeline::recorder::detach(); }
  attached(const attached&) = delete;
  attached& operator=(const attached&) = delete;
};

// Every event of kind `e`, all threads together.
std::vector<timeline::entry> events_of(const timeline::recorder& r, event e) {
  std::vector<timeline::entry> out;
  for (const timeline::buffer* b : r.buffers())
    for (const timeline::entry& x : b->events())
      if (x.kind() == e) out.push_back(x);
  return out;
}

// A node whose deleter sleeps when asked to: a stand-in for a free call that contends on the
// allocator's locks.
struct sleepy : reclaim::core::retired_hook {
  sleepy(std::atomic<long>& counter, std::chrono::milliseconds nap) : destroyed(&counter), nap(nap) {}
  std::atomic<long>* destroyed;
  std::chrono::milliseconds nap;
};
void destroy_sleepy(sleepy* n) {
  std::this_thread::sleep_for(n->nap);
  n->destroyed->fetch_add(1, std::memory_order_relaxed);
  delete n;
}

// `fast` quick nodes, then `slow` sleeping ones; the list pops the slow ones first.
reclaim::core::retired_list make_list(std::atomic<long>& destroyed, long fast, long slow,
                                      std::chrono::milliseconds nap) {
  reclaim::core::retired_list list;
  for (long i = 0; i < fast + slow; ++i) {
    auto* n = new sleepy(destroyed, i >= fast ? nap : std::chrono::milliseconds(0));
    list.push(reclaim::core::to_retired<&destroy_sleepy>(n));
  }
  return list;
}

// Drives a single-threaded epoch scheme until it has advanced the epoch `advances` times.
template <class S>
void run_until_epochs(typename S::domain& domain, std::atomic<long>& destroyed,
                      std::uint64_t advances) {
  ASSERT_TRUE(eventually([&] {
    retire_many<S>(domain, destroyed, 16);
    return domain.stats().epochs >= advances;
  }));
}

// ---------------------------------------------------------------------------------------------

TEST(timeline, buffer_keeps_capacity_events_and_counts_the_dropped) {
  timeline::recorder r({.capacity = 4});
  {
    attached a(r, 0);
    for (std::uint64_t i = 0; i < 10; ++i) timeline::record(event::epoch_seen, i, i, i);
  }
  EXPECT_EQ(r.events(), 4u);
  EXPECT_EQ(r.dropped(), 6u);
  auto kept = r.buffers().front()->events();
  ASSERT_EQ(kept.size(), 4u);
  for (std::uint64_t i = 0; i < 4; ++i) {  // the first ones are kept, intact
    EXPECT_EQ(kept[i].kind(), event::epoch_seen);
    EXPECT_EQ(kept[i].start_ns, i);
    EXPECT_EQ(kept[i].value(), i);
  }
}

TEST(timeline, each_thread_records_into_its_own_labelled_buffer) {
  constexpr unsigned threads = 4;
  timeline::recorder r({.capacity = 1000});
  {
    std::vector<std::jthread> workers;
    for (unsigned t = 0; t < threads; ++t)
      workers.emplace_back([&r, t] {
        attached a(r, t);
        for (unsigned i = 0; i <= t * 10; ++i) timeline::record_instant(event::token_receipt, t);
      });
  }
  auto buffers = r.buffers();
  ASSERT_EQ(buffers.size(), threads);
  for (unsigned t = 0; t < threads; ++t) {
    EXPECT_EQ(buffers[t]->thread(), t);  // in label order
    ASSERT_EQ(buffers[t]->events().size(), t * 10 + 1);
    std::uint64_t last = 0;
    for (const timeline::entry& e : buffers[t]->events()) {
      EXPECT_EQ(e.value(), t);
      EXPECT_EQ(e.start_ns, e.end_ns);  // instantaneous
      EXPECT_GE(e.start_ns, last);      // steady clock
      last = e.start_ns;
    }
  }
  EXPECT_EQ(r.dropped(), 0u);
}

TEST(timeline, batch_free_records_one_event_with_the_object_count) {
  std::atomic<long> destroyed{0};
  timeline::recorder r({.capacity = 100});
  reclaim::core::thread_record<reclaim::batch_free> ctx;
  reclaim::core::pending_gauge gauge;
  const std::uint64_t before = timeline::now();
  {
    attached a(r, 0);
    ctx.release_safe(make_list(destroyed, 37, 0, {}), gauge);
  }
  EXPECT_EQ(destroyed.load(), 37);
  auto batches = events_of(r, event::batch_free);
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(batches[0].value(), 37u);
  EXPECT_GE(batches[0].start_ns, before);
  EXPECT_LE(batches[0].start_ns, batches[0].end_ns);
  EXPECT_LE(batches[0].end_ns, timeline::now());
  EXPECT_EQ(ctx.ctr.freed.load(), 37u);
}

TEST(timeline, batch_scope_records_from_construction_to_done) {
  timeline::recorder r;
  std::uint64_t inside = 0;
  {
    attached a(r, 0);
    timeline::batch_scope b;
    inside = timeline::now();
    b.done(5);
  }
  auto batches = events_of(r, event::batch_free);
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_LE(batches[0].start_ns, inside);
  EXPECT_GE(batches[0].end_ns, inside);
  EXPECT_EQ(batches[0].value(), 5u);
}

TEST(timeline, free_calls_longer_than_the_threshold_are_slow_free_events) {
  using namespace std::chrono_literals;
  constexpr std::uint64_t threshold_ns = 5'000'000;  // 5 ms; the slow frees sleep 20 ms
  std::atomic<long> destroyed{0};
  timeline::recorder r({.capacity = 100, .slow_free_ns = threshold_ns});
  reclaim::core::thread_record<reclaim::batch_free> ctx;
  reclaim::core::pending_gauge gauge;
  {
    attached a(r, 0);
    ctx.release_safe(make_list(destroyed, 20, 2, 20ms), gauge);
  }
  EXPECT_EQ(destroyed.load(), 22);
  auto slow = events_of(r, event::slow_free);
  // The two sleeping frees at least; a fast free can be slow only if the thread was preempted.
  ASSERT_GE(slow.size(), 2u);
  EXPECT_LE(slow.size(), 22u);
  for (const timeline::entry& e : slow) {
    EXPECT_GT(e.end_ns - e.start_ns, threshold_ns);
    EXPECT_EQ(e.value(), 1u);
  }
  // The batch encloses its slow frees.
  auto batches = events_of(r, event::batch_free);
  ASSERT_EQ(batches.size(), 1u);
  for (const timeline::entry& e : slow) {
    EXPECT_GE(e.start_ns, batches[0].start_ns);
    EXPECT_LE(e.end_ns, batches[0].end_ns);
  }
}

TEST(timeline, free_one_is_slow_only_past_the_threshold) {
  using namespace std::chrono_literals;
  std::atomic<long> destroyed{0};
  timeline::recorder r({.capacity = 100, .slow_free_ns = 10'000'000'000});  // 10 s: nothing
  {
    attached a(r, 0);
    auto list = make_list(destroyed, 0, 1, 2ms);
    timeline::free_one(list.pop());
  }
  EXPECT_EQ(destroyed.load(), 1);
  EXPECT_EQ(r.events(), 0u);
}

TEST(timeline, amortized_free_records_slow_frees_and_its_drain_as_a_batch) {
  using namespace std::chrono_literals;
  using S = reclaim::debra<reclaim::amortized_free<1>>;
  std::atomic<long> destroyed{0};
  timeline::recorder r({.capacity = 100, .slow_free_ns = 5'000'000});
  reclaim::core::thread_record<S::free_policy> ctx;
  reclaim::core::pending_gauge gauge;
  {
    attached a(r, 0);
    ctx.release_safe(make_list(destroyed, 3, 1, 20ms), gauge);  // the slow node is freed first
    ctx.freeing.on_operation(ctx);
    EXPECT_EQ(destroyed.load(), 1);
    EXPECT_GE(events_of(r, event::slow_free).size(), 1u);
    EXPECT_TRUE(events_of(r, event::batch_free).empty());  // K per operation is not a batch
    ctx.freeing.drain(ctx);
  }
  EXPECT_EQ(destroyed.load(), 4);
  auto batches = events_of(r, event::batch_free);
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(batches[0].value(), 3u);
}

TEST(timeline, debra_records_each_epoch_advance_with_the_new_epoch) {
  using S = reclaim::debra<>;
  std::atomic<long> destroyed{0};
  timeline::recorder r({.capacity = 100'000});
  std::uint64_t epochs = 0;
  {
    S::domain domain;
    attached a(r, 0);
    run_until_epochs<S>(domain, destroyed, 5);
    epochs = domain.stats().epochs;
  }
  auto advances = events_of(r, event::epoch_advance);
  ASSERT_EQ(advances.size(), epochs);
  for (std::size_t i = 0; i < advances.size(); ++i) {
    EXPECT_EQ(advances[i].value(), i + 2);  // the epoch starts at 1
    EXPECT_EQ(advances[i].start_ns, advances[i].end_ns);
  }
  // The thread saw each new epoch, holding what it had retired and not yet freed.
  auto seen = events_of(r, event::epoch_seen);
  EXPECT_GE(seen.size(), epochs - 1);
  EXPECT_TRUE(std::any_of(seen.begin(), seen.end(), [](auto& e) { return e.value() > 0; }));
  EXPECT_FALSE(events_of(r, event::batch_free).empty());
}

// epoch_seen's value is the garbage held: with an amortized policy, a batch that left the limbo
// bags still counts while it waits on the freeable list.
TEST(timeline, epoch_seen_counts_the_freeable_list_as_held_garbage) {
  using S = reclaim::debra<reclaim::amortized_free<1>>;
  constexpr long batch = 256;
  std::atomic<long> destroyed{0};
  timeline::recorder r({.capacity = 100'000});
  {
    S::domain domain;
    attached a(r, 0);
    {
      S::guard g(domain);
      for (long i = 0; i < batch; ++i) g.retire(new tracked<S>(destroyed));
    }
    // Three epoch changes move the batch to the freeable list; then one free per operation.
    ASSERT_TRUE(eventually([&] {
      empty_operation<S>(domain);
      return destroyed.load() > 0;
    }));
    const std::size_t seen_before = events_of(r, event::epoch_seen).size();
    ASSERT_TRUE(eventually([&] {
      empty_operation<S>(domain);
      return events_of(r, event::epoch_seen).size() > seen_before;
    }));
    // The operation that saw the epoch freed one object after recording it; the bags are empty.
    const long freed_before_event = destroyed.load() - 1;
    EXPECT_EQ(events_of(r, event::epoch_seen).back().value(),
              static_cast<std::uint64_t>(batch - freed_before_event));
  }
  EXPECT_EQ(destroyed.load(), batch);
}

TEST(timeline, ebr_qsbr_rcu_record_epoch_advances) {
  std::atomic<long> destroyed{0};
  timeline::recorder r({.capacity = 100'000});
  std::uint64_t epochs = 0;
  {
    attached a(r, 0);
    reclaim::ebr<>::domain ebr;
    run_until_epochs<reclaim::ebr<>>(ebr, destroyed, 3);
    reclaim::qsbr<>::domain qsbr;
    run_until_epochs<reclaim::qsbr<>>(qsbr, destroyed, 3);
    reclaim::rcu<>::domain rcu;
    run_until_epochs<reclaim::rcu<>>(rcu, destroyed, 3);
    epochs = ebr.stats().epochs + qsbr.stats().epochs + rcu.stats().epochs;
  }
  EXPECT_EQ(events_of(r, event::epoch_advance).size(), epochs);
}

TEST(timeline, nothing_is_recorded_by_threads_not_attached) {
  using S = reclaim::debra<>;
  std::atomic<long> destroyed{0};
  timeline::recorder r({.capacity = 1000});
  {
    S::domain domain;
    std::jthread other([&] {
      EXPECT_FALSE(timeline::recording());
      run_until_epochs<S>(domain, destroyed, 5);
    });
  }
  EXPECT_GT(destroyed.load(), 0);
  EXPECT_TRUE(r.buffers().empty());
  EXPECT_EQ(r.events(), 0u);

  // Nor by a thread after detach().
  {
    S::domain domain;
    r.attach(0);
    EXPECT_TRUE(timeline::recording());
    timeline::recorder::detach();
    EXPECT_FALSE(timeline::recording());
    run_until_epochs<S>(domain, destroyed, 5);
    timeline::record(event::epoch_seen, 1, 1, 1);
  }
  ASSERT_EQ(r.buffers().size(), 1u);
  EXPECT_EQ(r.events(), 0u);
  EXPECT_EQ(r.dropped(), 0u);
}

}  // namespace
