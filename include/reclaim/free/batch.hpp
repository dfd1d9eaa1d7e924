// The `batch` free policy: a batch of retired objects that the scheme has proven safe is freed at
// once, as the original papers do. It is the default for every scheme that frees in batches.
#pragma once
#include "../core/retired.hpp"
#include "../core/stats.hpp"

namespace reclaim {

struct free_policy_kind {};

// The interface every free policy implements through its per-thread `local` part:
//   release(list, ctx)  the scheme hands over a batch that is safe to free
//   on_operation(ctx)   called at the start of every operation (where amortized policies free)
//   drain(ctx)          free everything held, at thread exit and domain destruction
// ctx is the thread's record (core::thread_record), which counts what is freed.
struct batch_free {
  using policy_kind = free_policy_kind;

  struct local {
    template <class Ctx>
    void release(core::retired_list&& safe, Ctx& ctx) noexcept {
      if (safe.empty()) return;
      core::free_timer timer(ctx.ctr);
      ctx.count_freed(safe.destroy_all());
    }
    template <class Ctx>
    void on_operation(Ctx&) noexcept {}
    template <class Ctx>
    void drain(Ctx&) noexcept {}
  };
};

}  // namespace reclaim
