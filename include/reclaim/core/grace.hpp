// SPDX-License-Identifier: MIT
// What synchronize(), barrier() and their try_ forms share across schemes: a deadline, and how a
// caller waits for other threads to make progress.
#pragma once
#include <chrono>
#include <thread>
#include "sync.hpp"

namespace reclaim::core {

using clock = std::chrono::steady_clock;
using deadline = clock::time_point;
inline constexpr deadline no_deadline = deadline::max();

// now + timeout, saturating at no_deadline (a timeout of hours must not overflow).
template <class Rep, class Period>
deadline after(std::chrono::duration<Rep, Period> timeout) {
  const deadline now = clock::now();
  const auto left = no_deadline - now;
  if (timeout >= left) return no_deadline;
  return now + std::chrono::duration_cast<clock::duration>(timeout);
}

// Waits a little longer each time: yields first (a running thread answers within microseconds),
// then sleeps up to a millisecond (a descheduled or stalled one may take long).
class waiter {
 public:
  explicit waiter(deadline d) noexcept : deadline_(d) {}
  // Waits once; false, without waiting, once the deadline has passed.
  bool wait() {
    if (deadline_ != no_deadline && clock::now() >= deadline_) return false;
    if (++rounds_ < 64)
      core::yield_now();
    else
      core::sleep_for(std::chrono::microseconds(rounds_ < 256 ? 50 : 1000));
    return true;
  }

 private:
  deadline deadline_;
  unsigned rounds_ = 0;
};

}  // namespace reclaim::core
