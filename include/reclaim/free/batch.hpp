// SPDX-License-Identifier: MIT
// The `batch` free policy: a batch of retired objects that the scheme has proven safe is freed at
// once, as the original papers do. It is the default for every scheme that frees in batches.
#pragma once
#include "../core/retired.hpp"
#include "../core/stats.hpp"
#include "../core/timeline.hpp"

namespace reclaim {

// The policy_kind tag of every free policy: a scheme takes the first policy of this kind among its
// Policies... (core::find_policy_t), batch_free where there is none.
struct free_policy_kind {};

// Every free policy declares `bounded`: whether garbage the scheme proved safe is freed within a
// bound that does not depend on the retire rate. A scheme that bounds its own garbage (hp) bounds
// it in all only with a bounded policy, and derives its bounds_garbage from it.
//
// The interface every free policy implements through its per-thread `local` part:
//   release(list, ctx)  the scheme hands over a batch that is safe to free
//   on_operation(ctx)   called at the start of every operation (where amortized policies free)
//   drain(ctx)          free everything held, at thread exit and domain destruction
//   held()              how many safe objects it still holds (for timeline::event::epoch_seen)
//   take()              hands over everything held, unfreed (a barrier frees it: core/domain.hpp)
// and declares keeps_safe_garbage: whether on_operation() touches garbage (a list a barrier takes).
// ctx is the thread's record (core::thread_record), which counts what is freed.
struct batch_free {
  using policy_kind = free_policy_kind;
  static constexpr bool bounded = true;  // nothing safe is kept
  static constexpr bool keeps_safe_garbage = false;

  // The part in each thread's record: release() frees the whole safe batch at once (a batch_free
  // event while a timeline records), so it never holds anything and the other calls do nothing.
  struct local {
    template <class Ctx>
    void release(core::retired_list&& safe, Ctx& ctx) noexcept {
      if (safe.empty()) return;
      core::free_timer timer(ctx.ctr);
      // Recording a timeline: a batch_free event, and slow_free events for the slow frees.
      ctx.count_freed(timeline::free_all(safe));
    }
    template <class Ctx>
    void on_operation(Ctx&) noexcept {}
    template <class Ctx>
    void drain(Ctx&) noexcept {}
    std::size_t held() const noexcept { return 0; }
    core::retired_list take() noexcept { return {}; }
  };
};

}  // namespace reclaim
