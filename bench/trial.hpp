// One trial of one (container, scheme) pair: a fresh domain and container, a prefill to half the
// key range, T workers running the operation mix for the configured time, then validation of the
// structure against what the successful operations did.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <latch>
#include <thread>
#include <vector>

#include <reclaim/concepts.hpp>

#include "memory.hpp"
#include "registry.hpp"
#include "rng.hpp"

namespace reclaim_bench {

// What a thread's successful inserts added and its successful erases removed.
struct tally {
  std::int64_t count = 0;
  std::int64_t key_sum = 0;

  void add(std::int64_t key) {
    ++count;
    key_sum += key;
  }
  void remove(std::int64_t key) {
    --count;
    key_sum -= key;
  }
  tally& operator+=(const tally& t) {
    count += t.count;
    key_sum += t.key_sum;
    return *this;
  }
};

// One slot per thread, each on its own cache lines: written once, by its owner, at the end.
struct alignas(128) thread_outcome {
  tally delta;
  std::uint64_t ops = 0;
};

// Random streams: workers use streams 0..T-1, prefill threads a range of their own.
inline constexpr std::uint64_t prefill_stream_base = std::uint64_t{1} << 32;

inline unsigned hardware_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

// Counters over an interval; the gauges (pending, pending_peak, threads) as they are at its end.
inline reclaim::stats stats_delta(const reclaim::stats& before, const reclaim::stats& after) {
  reclaim::stats d = after;
  d.retired -= before.retired;
  d.freed -= before.freed;
  d.epochs -= before.epochs;
  d.scans -= before.scans;
  d.signals -= before.signals;
  d.free_ns -= before.free_ns;
  return d;
}

// Inserts uniformly random keys from [0, keys) until exactly keys/2 inserts have succeeded, with
// min(threads, hardware threads) threads. Each success is claimed from a shared counter first, so
// the threads never overshoot.
template <class DS>
tally prefill(DS& ds, const trial_config& cfg) {
  const std::int64_t target = cfg.keys / 2;
  const auto keys = static_cast<std::uint32_t>(cfg.keys);
  const unsigned n = std::min(cfg.threads, hardware_threads());
  std::atomic<std::int64_t> claimed{0};
  std::vector<thread_outcome> outcomes(n);
  {
    std::vector<std::jthread> fillers;
    for (unsigned i = 0; i < n; ++i) {
      fillers.emplace_back([&, i] {
        xoshiro256 rng(stream_seed(cfg.seed, cfg.trial, prefill_stream_base + i));
        tally mine;
        // relaxed: the counter only hands out claims; the joins publish the tallies.
        while (claimed.fetch_add(1, std::memory_order_relaxed) < target) {
          for (;;) {
            const std::int64_t key = rng.below(keys);
            if (ds.insert(key)) {
              mine.add(key);
              break;
            }
          }
        }
        outcomes[i].delta = mine;
      });
    }
  }  // joins
  tally total;
  for (const thread_outcome& o : outcomes) total += o.delta;
  return total;
}

// The measured interval: the workers start together on a latch that the main thread joins last,
// run the operation mix until the main thread raises `stop`, and report their tallies in
// `outcomes`. Returns the measured seconds, from the start until every worker has joined.
template <class DS>
double run_workers(DS& ds, const trial_config& cfg, std::vector<thread_outcome>& outcomes) {
  const auto keys = static_cast<std::uint32_t>(cfg.keys);
  const unsigned insert_below = cfg.insert_pct;
  const unsigned erase_below = cfg.insert_pct + cfg.delete_pct;
  std::atomic<bool> stop{false};
  std::latch start(cfg.threads + 1);
  std::vector<std::jthread> workers;
  for (unsigned i = 0; i < cfg.threads; ++i) {
    workers.emplace_back([&, i] {
      xoshiro256 rng(stream_seed(cfg.seed, cfg.trial, i));
      tally mine;
      std::uint64_t ops = 0;
      start.arrive_and_wait();
      // relaxed: `stop` carries no data, it only has to be seen eventually; the join orders the
      // tallies before the main thread reads them.
      while (!stop.load(std::memory_order_relaxed)) {
        const std::int64_t key = rng.below(keys);
        const unsigned dice = rng.below(100);
        if (dice < insert_below) {
          if (ds.insert(key)) mine.add(key);
        } else if (dice < erase_below) {
          if (ds.erase(key)) mine.remove(key);
        } else {
          ds.contains(key);
        }
        ++ops;
      }
      outcomes[i] = {mine, ops};
    });
  }
  start.arrive_and_wait();
  const auto begin = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(cfg.seconds));
  stop.store(true, std::memory_order_relaxed);
  workers.clear();  // joins
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

template <class Scheme, class DS>
trial_result run_trial(const trial_config& cfg) {
  static_assert(DS::min_key <= 0 && DS::max_key >= std::int64_t{UINT32_MAX},
                "the lab draws keys from [0, keys) with keys < 2^32");
  reset_peak_rss();
  trial_result result;
  {
    typename Scheme::domain domain;
    DS ds(domain);  // destroyed before the domain

    tally expected = cfg.prefill ? prefill(ds, cfg) : tally{};
    const reclaim::stats before = domain.stats();
    std::vector<thread_outcome> outcomes(cfg.threads);
    result.seconds = run_workers(ds, cfg, outcomes);
    result.stats = stats_delta(before, domain.stats());
    result.rss_bytes = rss_bytes();

    for (const thread_outcome& o : outcomes) {
      expected += o.delta;
      result.ops += o.ops;
    }
    result.expected_size = expected.count;
    result.expected_key_sum = expected.key_sum;
    result.final_size = static_cast<std::int64_t>(ds.size());
    result.final_key_sum = ds.key_sum();
    result.well_formed = ds.well_formed();
  }
  result.peak_rss_bytes = peak_rss_bytes();
  return result;
}

}  // namespace reclaim_bench
