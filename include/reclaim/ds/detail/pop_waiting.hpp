// SPDX-License-Identifier: MIT
// Blocking and timed pops for the pool containers (ms_queue, treiber_stack): pop_wait() and
// try_pop_for / try_pop_until around the container's own lock-free pop(), with no system call on
// a push unless a consumer waits.
//
// The container calls pushed() after each push's linking CAS, which must be a seq_cst
// read-modify-write: with core::fence_after_rmw() it is a full fence (the lock-prefixed instruction
// on x86-64, so the push pays a relaxed load and a branch). A consumer that found the container
// empty announces itself in count_ (a seq_cst read-modify-write, also followed by
// fence_after_rmw()), tries pop() again, and only then sleeps on the condition variable, until a
// wake-up newer than the one it saw before announcing.
//
// No lost wake-up. Take a push P and a consumer C that announced itself and then failed its
// second pop(). The two full fences are ordered: if P's comes first, C's second pop() reads the
// links after P's CAS, so it saw P's element (and found it gone only if another consumer took it,
// which needs no wake-up for C); so C failing means C's fence came first, and then P's load of
// count_ after its fence sees C's announcement, and P calls wake(). wake() bumps wakeups_ under the
// mutex; C read `seen` under the mutex before announcing, so in the mutex's order either P's bump
// came after C's read (C's wait predicate is then true, or becomes true with the notify that
// follows the bump) or before it, and then P's CAS happened before C's second pop(), which saw P's
// element: the case above. A consumer woken always tries pop() before it sleeps again or returns,
// so a wake-up is never spent on a thread that leaves without looking.
//
// pop() opens and closes its own guard: the wait is outside every guard and read phase, so a
// waiting consumer holds back no reclamation (unless its caller holds a guard around the call,
// which it must not: docs say so). The mutex is held only to bump or read wakeups_ and inside the
// condition variable's wait; no user code runs under it.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>

#include "../../core/sync.hpp"

namespace reclaim::ds::detail {

class pop_waiting {
 public:
  // After a push's linking CAS (seq_cst): wakes the waiting consumers, if any.
  void pushed() noexcept {
    core::fence_after_rmw();
    // relaxed: ordered after the CAS by the fence above (see the argument at the top).
    if (count_.load(std::memory_order_relaxed) != 0) [[unlikely]]
      wake();
  }

  // pop() until it returns a value or, with a deadline, until the deadline passes (then one last
  // pop()). Pop: the container's lock-free pop, returning std::optional<T>.
  template <class Pop, class Clock, class Duration>
  auto pop_until(Pop pop, const std::chrono::time_point<Clock, Duration>* deadline) {
    for (;;) {
      if (auto value = pop()) return value;
      std::unique_lock lock(mutex_);
      const std::uint64_t seen = wakeups_;
      lock.unlock();
      count_.fetch_add(1, std::memory_order_seq_cst);
      core::fence_after_rmw();
      auto value = pop();
      if (!value) {
        lock.lock();
        const auto woken = [&] { return wakeups_ != seen; };
        if (deadline)
          cond_.wait_until(lock, *deadline, woken);
        else
          cond_.wait(lock, woken);
        lock.unlock();
      }
      // relaxed: a pusher that still sees us calls wake() for nothing, which costs only time.
      count_.fetch_sub(1, std::memory_order_relaxed);
      if (value) return value;
      if (deadline && Clock::now() >= *deadline) return pop();
    }
  }

 private:
  [[gnu::noinline]] void wake() noexcept {
    {
      std::lock_guard lock(mutex_);
      ++wakeups_;
    }
    cond_.notify_all();
  }

  core::atomic<std::uint32_t> count_{0};  // consumers between their announcement and their return
  std::mutex mutex_;
  std::condition_variable cond_;
  std::uint64_t wakeups_ = 0;  // under mutex_
};

// The blocking and timed pops of a pool container (Derived, whose pop() returns std::optional<T>),
// which derives from this and calls waiting_.pushed() after each push's linking CAS.
template <class Derived, class T>
class blocking_pops {
 public:
  // pop_wait() waits until it pops a value; try_pop_for(d) and try_pop_until(t) until they pop one
  // or the time passes (then nullopt). A push pays no system call unless a consumer waits. They
  // wait outside any guard: never call them inside a guard or region you hold (a waiting thread
  // would hold back reclamation).
  T pop_wait() {
    const std::chrono::steady_clock::time_point* forever = nullptr;
    return *waiting_.pop_until([this] { return self().pop(); }, forever);
  }
  template <class Rep, class Period>
  std::optional<T> try_pop_for(std::chrono::duration<Rep, Period> timeout) {
    return try_pop_until(std::chrono::steady_clock::now() + timeout);
  }
  template <class Clock, class Duration>
  std::optional<T> try_pop_until(std::chrono::time_point<Clock, Duration> deadline) {
    return waiting_.pop_until([this] { return self().pop(); }, &deadline);
  }

 protected:
  blocking_pops() = default;
  ~blocking_pops() = default;
  pop_waiting waiting_;

 private:
  Derived& self() noexcept { return static_cast<Derived&>(*this); }
};

}  // namespace reclaim::ds::detail
