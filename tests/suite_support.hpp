// SPDX-License-Identifier: MIT
// What the scheme-level test files share beyond test_support.hpp (which the container test files
// include too: what changes here rebuilds only the files that use it): the declaration of a typed
// suite, a reader that holds a node while other threads retire it, readers racing with a writer
// that swaps nodes out, and threads that loop until told to stop.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "test_support.hpp"

// RECLAIM_TYPED_SUITE(name, types); declares the suite `name` (GoogleTest wants a fixture class
// template per suite) and runs its TYPED_TESTs over `types`, a ::testing::Types list. The suite
// keeps its name in the test output.
#define RECLAIM_TYPED_SUITE(name, types)  \
  template <class>                        \
  class name : public ::testing::Test {}; \
  TYPED_TEST_SUITE(name, types)

namespace reclaim_test {

// A reader thread's body: in an operation of its own it protects the node at `shared` (slot 0),
// opens `protecting`, holds the node until `may_release` opens and reads it once more (`intact`:
// still there, payload 42), then ends the operation and opens `released`.
template <class S>
void protect_until_released(typename S::domain& domain, std::atomic<tracked<S>*>& shared,
                            gate& protecting, const gate& may_release, gate& released,
                            std::atomic<bool>& intact) {
  {
    typename S::guard g(domain);
    tracked<S>* p = g.protect(shared, 0);
    protecting.open();
    may_release.wait();
    intact = p != nullptr && p->payload == 42;
  }
  released.open();
}

// Two readers run operations of `per_op` protected reads each, read(guard, i) for i = 0, 1, ...
// (the node it protected), and check every node they read (payload `magic`), while a writer runs
// operations of one swap(guard, k) each (the k-th: replace a node the readers read, and retire the
// old one) for the stress time and at least 2000 swaps; each reader reads at least 1000 times.
// Scans (or seals) run all the time: a reader whose protection one missed would read a freed node
// (poisoned in debug builds, reported by ASan). Returns how many reads there were and how many of
// them found a node that was not intact.
struct read_tally {
  std::uint64_t reads;
  std::uint64_t bad;
};
template <class S, class Read, class Swap>
read_tally reads_racing_with_swaps(typename S::domain& domain, unsigned per_op, long magic,
                                   Read read, Swap swap) {
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> reads{0}, bad{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t)
    readers.emplace_back([&] {
      std::uint64_t n = 0, wrong = 0;
      while (!stop.load(std::memory_order_relaxed) || n < 1000) {
        typename S::guard g(domain);
        for (unsigned i = 0; i < per_op; ++i, ++n)
          if (read(g, i)->payload != magic) ++wrong;
      }
      reads += n;
      bad += wrong;
    });
  long swaps = 0;
  const auto end = std::chrono::steady_clock::now() + stress_time();
  while (std::chrono::steady_clock::now() < end || swaps < 2000) {
    typename S::guard g(domain);
    swap(g, swaps);
    ++swaps;
  }
  stop = true;
  for (auto& r : readers) r.join();
  return {reads.load(), bad.load()};
}

// Runs step(t) over and over on `threads` threads (t = 0, 1, ...) while meanwhile() runs on the
// calling thread; once it returns, stops the threads (each after the step it is in) and joins them.
template <class Step, class Meanwhile>
void loop_on_threads_while(int threads, Step step, Meanwhile meanwhile) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      while (!stop.load(std::memory_order_relaxed)) step(t);
    });
  meanwhile();
  stop = true;
  for (auto& w : workers) w.join();
}

}  // namespace reclaim_test
