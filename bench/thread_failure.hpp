// SPDX-License-Identifier: MIT
// What stops a trial part way through: one of its threads (a worker, a prefill or a stalled thread)
// could not be created (RLIMIT_NPROC, no address space for its stack), or threw (an allocation
// failed). An exception that leaves a thread ends the process (std::terminate), and a thread that
// never starts never arrives at the start latch, so the trial's threads go through
// thread_failures: it starts them, records the first failure instead, and lets the trial release
// and join the threads that did start, then throw thread_error. The runner (main.cpp, child.cpp)
// reports that as the trial's failure in one line (failure_text) and the run goes on.
#pragma once
#include <atomic>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace reclaim_bench {

// Thread `index` (0-based) of the `count` threads of a kind (`role`: "worker", "prefill",
// "stalled") could not be created or threw `cause`. Nothing is formatted until failure_text(),
// which runs once the trial has unwound and given its memory back: formatting right where an
// allocation just failed could fail too.
class thread_error : public std::exception {
 public:
  thread_error(bool creating, const char* role, unsigned index, unsigned count,
               std::exception_ptr cause) noexcept
      : creating_(creating), role_(role), index_(index), count_(count), cause_(cause) {}
  const char* what() const noexcept override { return "a thread of the trial failed"; }

 private:
  friend std::string failure_text(const std::exception& e);
  bool creating_;
  const char* role_;
  unsigned index_;
  unsigned count_;
  std::exception_ptr cause_;
};

// Why a trial stopped, in one line: "cannot create worker thread 17 of 64: Resource temporarily
// unavailable", "prefill thread 1 of 2: out of memory (std::bad_alloc)", or the exception's what().
std::string failure_text(const std::exception& e);

// The first failure among a trial's threads.
class thread_failures {
 public:
  // Starts threads running fn(i) for i in [0, count) into `threads`. A thread that cannot be
  // created is recorded and ends the loop; returns how many threads started.
  template <class Fn>
  unsigned start(std::vector<std::jthread>& threads, const char* role, unsigned count, Fn fn) {
    for (unsigned i = 0; i < count; ++i) {
      try {
        threads.emplace_back(fn, i);
      } catch (...) {
        record(true, role, i, count);
        return i;
      }
    }
    return count;
  }

  // Runs fn() in thread `index` of `count`; an exception from it is recorded. Returns whether fn()
  // returned.
  template <class Fn>
  bool run(const char* role, unsigned index, unsigned count, Fn&& fn) noexcept {
    try {
      fn();
      return true;
    } catch (...) {
      record(false, role, index, count);
      return false;
    }
  }

  // relaxed: exact for the failures that happen before the call (through a latch or a join), a
  // hint to stop early for the others.
  bool failed() const noexcept { return failed_.load(std::memory_order_relaxed); }

  // Throws the first failure, if any; call once the threads have joined.
  void rethrow() const {
    std::lock_guard lock(mutex_);
    if (first_) throw *first_;
  }

 private:
  // In a catch block: std::current_exception() is the failure. Allocates nothing.
  void record(bool creating, const char* role, unsigned index, unsigned count) noexcept {
    std::lock_guard lock(mutex_);
    if (!first_) first_.emplace(creating, role, index, count, std::current_exception());
    failed_.store(true, std::memory_order_relaxed);
  }

  mutable std::mutex mutex_;
  std::optional<thread_error> first_;
  std::atomic<bool> failed_{false};
};

}  // namespace reclaim_bench
