// SPDX-License-Identifier: MIT
// Paper 003's HashMap benchmark (its section 4.1): a simulation keeps its partial results in a hash
// map for reuse, evicting the oldest (FIFO) to bound the map, and holds every result it uses in a
// long-lived guard_ptr until the simulation is done. What it stresses that the set benchmarks do
// not: an unbounded number of nodes held on purpose (a thread holds up to a simulation's worth),
// guard_ptrs that live across many operations (under hp a dynamic number of hazard pointers: one
// slot per held result, from the thread's growing pool; under the region schemes the thread stays
// inside one operation for the whole simulation), and large nodes (1 KiB each).
//
// The lab's container is guarded_hm_hashmap (containers.hpp), as results_cache below: the map of
// 2048 buckets from int64 keys to partial_result, and a FIFO of the keys in insertion order, an
// ms_queue under the same scheme and domain. The flags map as follows: --keys is the number of
// possible partial results (the paper: 30,000), and the map holds at most a third of them (the
// paper: 10,000); every worker runs simulations of 1,000 results; an operation is one result,
// reused from the map or computed and added (so Mops/s are results per microsecond); --prefill
// fills the map to its bound before the trial (--no-prefill starts it empty: the paper's warm-up,
// which it kept across trials by running them in one process); --insert and --delete do not
// apply (the cache decides), nor does --pairs.
//
// Per result: get(key); if absent, compute the result, insert it, and if this thread's insert
// added it, push the key to the FIFO and, once the map holds more than its bound, pop the oldest
// key and erase it; then get(key) again (it may be gone already, evicted by another thread: the
// simulation then uses its own copy). Every held result is checked when the simulation combines
// them: it must be the one computed for its key (its key, and the sum of its words as made),
// which a freed or reused node fails.
//
// Validation at the end, as for sets: expected_size and expected_key_sum are what the workers'
// (and the prefill's) successful inserts added and their evictions removed, final_size and
// final_key_sum what the map holds; well_formed also requires every held result intact, every
// eviction to have found its key (one FIFO entry per live insertion, erased by whoever pops it),
// the FIFO to hold exactly the map's keys, and the map within its bound plus one pending eviction
// per worker.
#pragma once
#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include <reclaim/concepts.hpp>
#include <reclaim/ds/guarded_hm_hashmap.hpp>
#include <reclaim/ds/ms_queue.hpp>

#include "thread_failure.hpp"
#include "trial.hpp"

namespace reclaim_bench {

// One partial result: 1 KiB, as in the paper, made from its key alone.
struct partial_result {
  static constexpr std::size_t words = 126;  // with key and sum: 1024 bytes
  std::int64_t key = 0;
  std::uint64_t sum = 0;  // of words, as computed
  std::array<std::uint64_t, words> word{};

  static partial_result compute(std::int64_t key) {
    partial_result r;
    r.key = key;
    std::uint64_t state = static_cast<std::uint64_t>(key) * 0x9e3779b97f4a7c15ULL;
    for (std::uint64_t& w : r.word) {
      state += 0x9e3779b97f4a7c15ULL;  // splitmix64: a calculation that costs what it costs
      std::uint64_t z = state;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      w = z ^ (z >> 31);
      r.sum += w;
    }
    return r;
  }
  // The result computed for `expected`, untouched since.
  bool intact(std::int64_t expected) const {
    std::uint64_t s = 0;
    for (std::uint64_t w : word) s += w;
    return key == expected && s == sum;
  }
};
static_assert(sizeof(partial_result) == 1024);

// The map of partial results and the FIFO that evicts from it.
template <class Scheme>
class results_cache : public reclaim::ds::guarded_hm_hashmap<std::int64_t, partial_result, Scheme> {
  using map = reclaim::ds::guarded_hm_hashmap<std::int64_t, partial_result, Scheme>;
  using fifo_type = reclaim::ds::ms_queue<std::int64_t, Scheme>;

 public:
  static constexpr std::size_t buckets = 2048;  // the paper's
  static constexpr std::int64_t simulation_size = 1000;  // results per simulation, the paper's

  results_cache(typename Scheme::domain& domain, const trial_config& cfg)
      : map(domain, buckets), fifo_(domain),
        bound_(static_cast<std::uint64_t>(std::max<std::int64_t>(1, cfg.keys / 3))) {
    static_assert(!reclaim::protects<Scheme, map> || reclaim::protects<Scheme, fifo_type>,
                  "the FIFO must run under every scheme the map runs under");
  }

  // Called after this thread's insert of `key` succeeded: queues the key, and evicts the oldest
  // once the map holds more than its bound. Returns the key evicted, if any; `lost` counts pops
  // whose key was not in the map (never, if the map is correct).
  std::optional<std::int64_t> admitted(std::int64_t key, std::uint64_t& lost) {
    fifo_.push(key);
    // relaxed: a count, not a publication; the map and the FIFO order their own contents.
    if (live_.fetch_add(1, std::memory_order_relaxed) + 1 <= bound_) return std::nullopt;
    const std::optional<std::int64_t> oldest = fifo_.pop();
    if (!oldest) return std::nullopt;  // the FIFO lags its inserts: a later insert evicts
    if (!this->erase(*oldest)) {
      ++lost;
      return std::nullopt;
    }
    live_.fetch_sub(1, std::memory_order_relaxed);
    return oldest;
  }

  std::uint64_t bound() const noexcept { return bound_; }
  std::uint64_t live() const noexcept { return live_.load(std::memory_order_relaxed); }
  // Quiescent: empties the FIFO, returning what it held.
  tally drain_fifo() {
    tally queued;
    while (std::optional<std::int64_t> key = fifo_.pop()) queued.add(*key);
    return queued;
  }

 private:
  fifo_type fifo_;
  const std::uint64_t bound_;
  std::atomic<std::uint64_t> live_{0};  // entries the map holds, as counted by insert and evict
};

template <class DS>
class cache_workload {
 public:
  cache_workload(DS& cache, const trial_config& cfg)
      : cache_(cache), cfg_(cfg), outcomes_(cfg.threads), checks_(cfg.threads),
        progress_(cfg.threads) {}

  // Fills the map to its bound with random results, as a run that had warmed it up would have. On
  // a thread of its own that exits, as the sets' prefill threads do: the main thread must not use
  // the domain (under qsbr it would stay online, and the epoch would never move).
  void prefill() {
    thread_failures failures;
    {
      std::vector<std::jthread> filler;
      failures.start(filler, "prefill", 1, [&](unsigned i) {
        failures.run("prefill", i, 1, [&] {
          xoshiro256 rng(stream_seed(cfg_.seed, cfg_.trial, prefill_stream_base));
          while (cache_.live() < cache_.bound()) {
            const std::int64_t key = rng.below(static_cast<std::uint32_t>(cfg_.keys));
            if (!cache_.insert(key, partial_result::compute(key))) continue;
            prefilled_.add(key);
            if (std::optional<std::int64_t> gone = cache_.admitted(key, prefill_checks_.lost))
              prefilled_.remove(*gone);
          }
        });
      });
    }  // joins
    failures.rethrow();
  }

  template <class Span>
  void run(unsigned i, const std::atomic<bool>& stop, Span& span) {
    using value_ptr = typename DS::value_ptr;
    xoshiro256 rng(stream_seed(cfg_.seed, cfg_.trial, i));
    latency_sampler latency(stream_seed(cfg_.seed, cfg_.trial, latency_stream_base + i));
    tally mine;
    check_counts& checks = checks_[i];
    std::vector<std::pair<std::int64_t, value_ptr>> held;  // this simulation's results
    held.reserve(DS::simulation_size);
    const auto keys = static_cast<std::uint32_t>(cfg_.keys);
    std::uint64_t ops = 0;
    const std::uint64_t limit = operation_limit(cfg_);
    // relaxed: `stop` carries no data; the join orders the tallies before finish() reads them.
    while (ops < limit && !stop.load(std::memory_order_relaxed)) {
      for (std::int64_t r = 0;
           r < DS::simulation_size && ops < limit && !stop.load(std::memory_order_relaxed);
           ++r, ++ops) {
        const std::int64_t key = rng.below(keys);
        span.next();
        latency.time([&] {
          value_ptr result = cache_.get(key);
          if (!result) {
            if (cache_.insert(key, partial_result::compute(key))) {
              mine.add(key);
              if (std::optional<std::int64_t> gone = cache_.admitted(key, checks.lost))
                mine.remove(*gone);
            }
            result = cache_.get(key);  // empty if evicted meanwhile: the copy made is used
          }
          if (result) held.emplace_back(key, std::move(result));
        });
      }
      // The simulation combines its results, and lets go of them.
      for (const auto& [key, result] : held)
        if (!result->intact(key)) ++checks.corrupt;
      held.clear();
      // relaxed: a count for the sampler (progress()), published once per simulation.
      progress_[i].ops.store(ops, std::memory_order_relaxed);
    }
    outcomes_[i].delta = mine;
    outcomes_[i].ops = ops;
    outcomes_[i].latency = latency.histogram();
  }

  // Results done so far, as of each worker's last finished simulation: the memory samples'
  // `ops`, from which a plot draws the time per result over the trial (paper 003, Figure 7).
  std::uint64_t progress() const {
    std::uint64_t ops = 0;
    for (const worker_progress& p : progress_) ops += p.ops.load(std::memory_order_relaxed);
    return ops;
  }

  void finish(trial_result& result) {
    tally expected = prefilled_;
    check_counts checks = prefill_checks_;
    latency_histogram latency;
    for (unsigned i = 0; i < cfg_.threads; ++i) {
      expected += outcomes_[i].delta;
      result.ops += outcomes_[i].ops;
      latency += outcomes_[i].latency;
      checks.corrupt += checks_[i].corrupt;
      checks.lost += checks_[i].lost;
    }
    result.latency = latency.summary();
    result.expected_size = expected.count;
    result.expected_key_sum = expected.key_sum;
    result.final_size = static_cast<std::int64_t>(cache_.unsafe_size());
    result.final_key_sum = cache_.unsafe_key_sum();
    const tally queued = cache_.drain_fifo();
    result.well_formed = cache_.unsafe_well_formed() && checks.corrupt == 0 && checks.lost == 0 &&
                         queued.count == result.final_size &&
                         queued.key_sum == result.final_key_sum &&
                         cache_.live() == static_cast<std::uint64_t>(result.final_size) &&
                         cache_.live() <= cache_.bound() + cfg_.threads;
  }

 private:
  // A worker's failed checks: held results not as computed, evictions that found no key.
  struct alignas(128) check_counts {
    std::uint64_t corrupt = 0;
    std::uint64_t lost = 0;
  };

  struct alignas(128) worker_progress {
    std::atomic<std::uint64_t> ops{0};
  };

  DS& cache_;
  const trial_config& cfg_;
  tally prefilled_;
  check_counts prefill_checks_;
  std::vector<thread_outcome> outcomes_;
  std::vector<check_counts> checks_;
  std::vector<worker_progress> progress_;
};

}  // namespace reclaim_bench
