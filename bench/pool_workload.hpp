// SPDX-License-Identifier: MIT
// The workload of a pool container, a stack (treiber_stack) or a queue (ms_queue): every worker
// pushes and pops, and every value names its producer and the producer's sequence number, so that
// the end of the trial can check that what came out is exactly what went in.
//
// How the lab's flags map: --insert is the push share (percent), --delete the pop share; they must
// add up to 100 (a pool has no lookups; options.cpp refuses anything else). The prefill
// (--prefill, the default) pushes keys/2 values, so --keys sets the initial size, and
// bytes_per_key the prefill's memory estimate as for sets. With --pairs each worker pushes and
// then pops, two operations, so that the pool keeps its size (a random mix lets it drift by
// thousands of nodes in a trial, and a trial's speed with it).
//
// Values: producer x 2^40 + sequence number, the producers being the workers (0..T-1) and the
// prefill threads (T..T+P-1), each numbering its values 0, 1, 2, ... A consumer (each worker, and
// the drain at the end) keeps, per producer, the count, the sum and the sum of squares of the
// sequence numbers it popped and the highest one; for a queue it checks, on every pop, that each
// producer's numbers come strictly increasing (per-producer FIFO: a producer's pushes are ordered,
// so no consumer may see them out of order; this also catches a value popped twice by one
// consumer). The checks at the end, per producer p that pushed n values:
//   - every number any consumer saw is below n (highest < n);
//   - the consumers' counts add up to n, their sums to 0 + 1 + ... + (n-1) and their sums of
//     squares to 0 + 1 + ... + (n-1)^2 (in 64-bit wrapping arithmetic).
// A value lost or popped twice changes the count; a value popped twice while another was lost
// keeps the count but changes the sum, and two such swaps that keep the sum change the sum of
// squares: what passes is, with at most two values wrong per producer, exactly {0, ..., n-1}, each
// once. (Checking every value exactly would log 8 bytes per pop, which would count in the trial's
// RSS; the unit tests do log them: tests/pool_typed_tests.hpp.)
// The result's fields, as for sets: expected_size and expected_key_sum are what the pushes put in
// minus what the pops took out (values, not sequence numbers; sums wrap modulo 2^64), final_size
// and final_key_sum what the drain found, well_formed the checks above.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

#include "trial.hpp"

namespace reclaim_bench {

template <class DS, bool Fifo>
class pool_workload {
 public:
  pool_workload(DS& ds, const trial_config& cfg)
      : ds_(ds), cfg_(cfg), producers_(cfg.threads + prefill_thread_count(cfg)),
        pushed_(producers_, 0), consumers_(cfg.threads + 1, consumer(producers_)) {}

  void prefill() {
    prefill_threads(cfg_, [&](unsigned i, const auto& claim) {
      const std::uint64_t producer = cfg_.threads + i;
      std::uint64_t seq = 0;
      while (claim()) ds_.push(encode(producer, seq++));
      pushed_[producer] = seq;  // each thread its own element; the join publishes it
    });
  }

  template <class Span>
  void run(unsigned i, const std::atomic<bool>& stop, Span& span) {
    xoshiro256 rng(stream_seed(cfg_.seed, cfg_.trial, i));
    consumer& mine = consumers_[i];
    std::uint64_t seq = 0, ops = 0;
    const std::uint64_t limit = operation_limit(cfg_);
    // relaxed: `stop` carries no data; the join orders what the worker wrote before the checks.
    latency_sampler latency(stream_seed(cfg_.seed, cfg_.trial, latency_stream_base + i));
    auto pop = [&] {
      if (std::optional<std::int64_t> v = ds_.pop()) mine.take(*v);
    };
    while (ops < limit && !stop.load(std::memory_order_relaxed)) {
      if (cfg_.pairs) {  // two operations (--ops counts both)
        span.next();
        latency.time([&] { ds_.push(encode(i, seq++)); });
        span.next();
        latency.time(pop);
        ops += 2;
        continue;
      }
      const bool push = rng.below(100) < cfg_.insert_pct;
      span.next();
      latency.time([&] {
        if (push)
          ds_.push(encode(i, seq++));
        else
          pop();
      });
      ++ops;
    }
    pushed_[i] = seq;
    mine.ops = ops;
    mine.latency = latency.histogram();
  }

  // Drains the container (the last consumer) and checks every producer's values.
  void finish(trial_result& result) {
    consumer& drain = consumers_.back();
    while (std::optional<std::int64_t> v = ds_.pop()) drain.take(*v);

    std::uint64_t pushed_count = 0, pushed_sum = 0, popped_count = 0, popped_sum = 0;
    bool exact = std::all_of(consumers_.begin(), consumers_.end(),
                             [](const consumer& c) { return c.in_order; });
    for (std::uint64_t p = 0; p < producers_; ++p) {
      const std::uint64_t n = pushed_[p];
      pushed_count += n;
      pushed_sum += n * (p << producer_shift) + sum_below(n);
      per_producer all;
      for (std::size_t c = 0; c < consumers_.size(); ++c) {
        const per_producer& seen = consumers_[c].from[p];
        exact = exact && seen.highest < static_cast<std::int64_t>(n);
        all.count += seen.count;
        all.sum += seen.sum;
        all.squares += seen.squares;
        if (c + 1 < consumers_.size()) {  // the workers' pops, during the trial
          popped_count += seen.count;
          popped_sum += seen.count * (p << producer_shift) + seen.sum;
        }
      }
      exact = exact && all.count == n && all.sum == sum_below(n) &&
              all.squares == squares_below(n);
    }
    latency_histogram latency;
    for (const consumer& c : consumers_) {
      result.ops += c.ops;
      latency += c.latency;
    }
    result.latency = latency.summary();
    result.expected_size = static_cast<std::int64_t>(pushed_count - popped_count);
    result.expected_key_sum = static_cast<std::int64_t>(pushed_sum - popped_sum);
    std::uint64_t drained_sum = 0;
    for (std::uint64_t p = 0; p < producers_; ++p)
      drained_sum += drain.from[p].count * (p << producer_shift) + drain.from[p].sum;
    result.final_size = static_cast<std::int64_t>(drain.count);
    result.final_key_sum = static_cast<std::int64_t>(drained_sum);
    result.well_formed = exact;
  }

 private:
  static constexpr unsigned producer_shift = 40;  // 2^40 values per producer and trial
  static_assert(producer_shift + 12 < 63, "producers (at most 2 x 1024 threads) fit the value");

  static std::int64_t encode(std::uint64_t producer, std::uint64_t seq) {
    return static_cast<std::int64_t>(producer << producer_shift | seq);
  }
  // 0 + 1 + ... + (n-1) and 0^2 + ... + (n-1)^2, modulo 2^64 as the consumers' sums are; the
  // products are exact in 128 bits (n < 2^40), so the divisions are.
  __extension__ using wide = unsigned __int128;
  static std::uint64_t sum_below(std::uint64_t n) {
    return n == 0 ? 0 : static_cast<std::uint64_t>(wide{n} * (n - 1) / 2);
  }
  static std::uint64_t squares_below(std::uint64_t n) {
    return n == 0 ? 0 : static_cast<std::uint64_t>(wide{n} * (n - 1) * (2 * wide{n} - 1) / 6);
  }

  // What one consumer popped of one producer's values.
  struct per_producer {
    std::uint64_t count = 0;
    std::uint64_t sum = 0;      // of the sequence numbers, wrapping
    std::uint64_t squares = 0;  // of the sequence numbers, wrapping
    std::int64_t highest = -1;
  };
  // One per worker and one for the drain, each written only by its thread; alignas: the tables of
  // two workers never share a cache line.
  struct alignas(128) consumer {
    explicit consumer(std::size_t producers) : from(producers) {}
    std::vector<per_producer> from;
    std::uint64_t count = 0;
    std::uint64_t ops = 0;
    bool in_order = true;  // no value came from an unknown producer or, in a queue, out of order
    latency_histogram latency;  // a worker's sampled operation latency (latency.hpp)

    void take(std::int64_t value) {
      const auto v = static_cast<std::uint64_t>(value);
      const std::uint64_t producer = v >> producer_shift;
      const std::uint64_t seq = v & ((std::uint64_t{1} << producer_shift) - 1);
      if (producer >= from.size()) {
        in_order = false;
        return;
      }
      per_producer& p = from[producer];
      const auto s = static_cast<std::int64_t>(seq);
      if (Fifo && s <= p.highest) in_order = false;
      p.highest = std::max(p.highest, s);
      ++p.count;
      p.sum += seq;
      p.squares += seq * seq;
      ++count;
    }
  };

  DS& ds_;
  const trial_config& cfg_;
  const std::size_t producers_;
  std::vector<std::uint64_t> pushed_;  // per producer, written by it at its end
  std::vector<consumer> consumers_;
};

}  // namespace reclaim_bench
