// SPDX-License-Identifier: MIT
// One trial of one (container, scheme) pair: a fresh domain and container, a prefill, T workers
// running the container's workload for the configured time, then validation of what is left
// against what the successful operations did. The workload depends on the container's kind: a set
// (set_workload below: inserts, deletes and lookups of random keys, the prefill to half the key
// range) or a pool, a stack or a queue (pool_workload.hpp). With --stall, N more threads sit inside
// an operation for the whole measured interval (stalled_operations); with --sample-ms, the main
// thread samples pending garbage and RSS while the workers run (measure_interval). A thread that
// cannot be created or throws (an allocation that failed) ends the trial with thread_error once the
// threads that started have been released and joined (thread_failure.hpp).
//
// A workload W of container DS is constructed as W(ds, cfg) before the prefill (whatever it
// allocates is allocated outside the measured interval) and provides:
//   void prefill()                                      fill the container (only with cfg.prefill)
//   void run(unsigned worker, const std::atomic<bool>& stop, Span& span)
//                                                       one worker's loop until stop, calling
//                                                       span.next() before each operation
//   void finish(trial_result&)  once the workers joined: ops, expected and final contents
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <latch>
#include <limits>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <reclaim/concepts.hpp>
#include <reclaim/read_phase.hpp>

#include "latency.hpp"
#include "memory.hpp"
#include "registry.hpp"
#include "rng.hpp"
#include "thread_failure.hpp"

namespace reclaim_bench {

// Random streams: workers use streams 0..T-1, prefill threads a range of their own, and the
// workers' latency samplers another.
inline constexpr std::uint64_t prefill_stream_base = std::uint64_t{1} << 32;
inline constexpr std::uint64_t latency_stream_base = std::uint64_t{2} << 32;

inline unsigned hardware_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

// Counters over an interval; the gauges (pending, pending_peak, threads) as they are at its end.
inline reclaim::stats stats_delta(const reclaim::stats& before, const reclaim::stats& after) {
  reclaim::stats d = after;
  d.retired -= before.retired;
  d.freed -= before.freed;
  d.epochs -= before.epochs;
  d.scans -= before.scans;
  d.signals -= before.signals;
  d.fallbacks -= before.fallbacks;
  d.free_ns -= before.free_ns;
  d.scan_ns -= before.scan_ns;
  d.wide_cas -= before.wide_cas;
  d.wide_cas_failed -= before.wide_cas_failed;
  return d;
}

// --stall: `count` threads that each begin an operation on `domain` and stay inside it, in a read
// phase, until release(): a thread preempted in the middle of an operation, at its worst. It needs
// only the scheme's guard and RECLAIM_READ_PHASE, so it is the same for every container. What it
// does to each family: an epoch scheme's guard announces the epoch the thread entered, which no
// later advance can pass (reclamation stops); a hazard pointer guard holds no hazard until a
// protect(), so nothing is held back; under nbr the thread is restartable, so a reclaimer's signal
// neutralizes it: the handler jumps back to the restart point here, and the thread stalls again.
template <class Scheme>
class stalled_operations {
 public:
  // Returns once every thread is inside its read phase, so the whole measured interval that
  // follows sees them there. Throws thread_error, with every thread joined, if one could not be
  // created or failed to begin its operation.
  stalled_operations(typename Scheme::domain& domain, unsigned count) {
    const unsigned started = failures_.start(threads_, "stalled", count, [&, count](unsigned i) {
      // One that fails counts as inside too: the wait below is for the threads that started.
      if (!failures_.run("stalled", i, count, [&] { stall(domain); }))
        inside_.fetch_add(1, std::memory_order_release);
    });
    // acquire: pairs with the release increments; sleeping in slices, not spinning, so that on 2
    // cores the stalling threads get to run.
    while (inside_.load(std::memory_order_acquire) < started)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    if (failures_.failed()) {
      release();
      failures_.rethrow();
    }
  }
  ~stalled_operations() { release(); }
  stalled_operations(const stalled_operations&) = delete;
  stalled_operations& operator=(const stalled_operations&) = delete;

  // Ends the stalled operations and joins their threads.
  void release() {
    release_.store(true, std::memory_order_relaxed);  // relaxed: carries no data; the join orders
    threads_.clear();                                  // joins
  }

 private:
  void stall(typename Scheme::domain& domain) {
    typename Scheme::guard g(domain);
    // volatile: read again after a neutralized read phase jumps back (siglongjmp) to the restart
    // point below; a non-volatile local changed after sigsetjmp would be indeterminate there.
    volatile bool counted = false;
    RECLAIM_READ_PHASE(g);
    // From here to the end of the loop only trivially destructible state and system calls: no
    // allocation, no lock (the read phase's rules, docs/writing-a-container.md).
    if constexpr (Scheme::guard::validates) {
      // A reader stalled right after a protected read: the era schemes then reserve that read's
      // era, as a stalled reader of the container would (the pointer read is null: under hp it
      // holds nothing). Lock-free and allocation-free, as the read phase requires.
      static constinit std::atomic<typename Scheme::node_base*> nothing{nullptr};
      (void)g.protect(nothing, 0);
    }
    if (!counted) {
      counted = true;
      inside_.fetch_add(1, std::memory_order_release);  // release: pairs with the constructor's acquire
    }
    // relaxed: the flag only has to be seen eventually.
    while (!release_.load(std::memory_order_relaxed))
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }

  std::atomic<unsigned> inside_{0};
  std::atomic<bool> release_{false};
  thread_failures failures_;
  std::vector<std::jthread> threads_;  // last: joined before the members above go
};

// The memory sampler (--sample-ms) keeps at most this many samples: when the buffer is full it
// keeps every other sample and doubles its period, so the samples always span the whole interval.
inline constexpr std::size_t max_memory_samples = 10'000;

// The operations a worker runs before it stops on its own: --ops, or (timed) no limit.
inline std::uint64_t operation_limit(const trial_config& cfg) {
  return cfg.ops_per_thread ? cfg.ops_per_thread : std::numeric_limits<std::uint64_t>::max();
}

// The measured interval, from `begin`, as the main thread spends it: asleep, or with
// cfg.sample_ms, sampling probe() (a memory_sample with the domain's pending garbage and the
// operations done so far, where the workload counts them) and the process RSS every sample_ms,
// starting at `begin`. It lasts cfg.seconds, or with --ops (cfg.ops_per_thread) until
// workers_done() says the workers have run their operations (the caller joins them then).
template <class Probe, class Done>
void measure_interval(std::chrono::steady_clock::time_point begin, const trial_config& cfg,
                      Probe&& probe, std::vector<memory_sample>& samples, Done&& workers_done) {
  using clock = std::chrono::steady_clock;
  const bool fixed_work = cfg.ops_per_thread > 0;
  const auto end = fixed_work ? clock::time_point::max()
                              : begin + std::chrono::duration_cast<clock::duration>(
                                            std::chrono::duration<double>(cfg.seconds));
  if (cfg.sample_ms > 0) {
    samples.reserve(max_memory_samples);  // outside the interval: no allocation while sampling
    clock::duration period = std::chrono::milliseconds(cfg.sample_ms);
    for (auto next = begin; next < end && !(fixed_work && workers_done()); next += period) {
      std::this_thread::sleep_until(next);
      if (samples.size() == max_memory_samples) {
        // Samples 0, 2, 4, ... were taken on the grid of the doubled period, and so is `next`.
        for (std::size_t i = 0; 2 * i < samples.size(); ++i) samples[i] = samples[2 * i];
        samples.resize((samples.size() + 1) / 2);
        period *= 2;
      }
      const double t_ms = std::chrono::duration<double, std::milli>(clock::now() - begin).count();
      memory_sample s = probe();
      s.t_ms = t_ms;
      s.rss_bytes = rss_bytes();
      samples.push_back(s);
    }
  }
  if (!fixed_work) std::this_thread::sleep_until(end);
}

// The prefill's threads: min(threads, hardware threads) of them, each running body(i, claim),
// where claim() hands out one of keys/2 claims and returns false once all are taken, so that the
// threads never overshoot; a thread uses each claim for one element it adds. Once the prefill has
// failed, the threads still filling stop: every claim is handed out. Throws thread_error if a
// thread could not be created or failed.
inline unsigned prefill_thread_count(const trial_config& cfg) {
  return std::min(cfg.threads, hardware_threads());
}
template <class Body>
void prefill_threads(const trial_config& cfg, Body&& body) {
  const std::int64_t target = cfg.keys / 2;
  const unsigned n = prefill_thread_count(cfg);
  std::atomic<std::int64_t> claimed{0};
  // relaxed: the counter only hands out claims; the joins publish what the threads did.
  const auto claim = [&] { return claimed.fetch_add(1, std::memory_order_relaxed) < target; };
  thread_failures failures;
  {
    std::vector<std::jthread> fillers;
    const auto give_up = [&] { claimed.store(target, std::memory_order_relaxed); };
    const unsigned started = failures.start(fillers, "prefill", n, [&](unsigned i) {
      if (!failures.run("prefill", i, n, [&] { body(i, claim); })) give_up();
    });
    if (started < n) give_up();
  }  // joins
  failures.rethrow();
}

// The trial's timeline recorder when the trial asks for one (trial_config::timeline_capacity),
// else null.
inline std::shared_ptr<reclaim::timeline::recorder> make_timeline(const trial_config& cfg) {
  if (cfg.timeline_capacity == 0) return nullptr;
  return std::make_shared<reclaim::timeline::recorder>(reclaim::timeline::recorder::settings{
      .capacity = cfg.timeline_capacity, .slow_free_ns = cfg.slow_free_ns});
}

// Hands the trial's recorder, if any, and its counts to the result.
inline void keep_timeline(trial_result& result,
                          std::shared_ptr<reclaim::timeline::recorder> timeline) {
  if (!timeline) return;
  result.timeline_events = timeline->events();
  result.timeline_dropped = timeline->dropped();
  result.timeline = std::move(timeline);
}

// The measured interval: the workers start together on a latch that the main thread joins last,
// each runs work(i, stop) until the main thread calls at_end() and raises `stop` (with --ops, until
// it has run its operations; the main thread calls at_end() once the last one has). Returns the
// measured seconds, from the start until every worker has joined. With a timeline recorder, each
// worker attaches before the start latch (its buffer is allocated and touched outside the measured
// interval) and `origin_ns` receives the start's timestamp. Meanwhile the main thread runs
// measure_interval() with `probe` and `samples`. Throws thread_error, with every worker joined,
// if one could not be created, attached or failed.
template <class Work, class Probe, class AtEnd>
double run_workers(const trial_config& cfg, reclaim::timeline::recorder* timeline,
                   std::uint64_t& origin_ns, Probe&& probe,
                   std::vector<memory_sample>& samples, AtEnd&& at_end, Work&& work) {
  std::atomic<bool> stop{false};
  std::atomic<unsigned> finished{0};  // --ops: workers done with their operations
  std::latch start(cfg.threads + 1);
  thread_failures failures;
  std::vector<std::jthread> workers;
  const unsigned started = failures.start(workers, "worker", cfg.threads, [&](unsigned i) {
    // A worker that cannot attach still arrives: the latch waits for every worker that started.
    failures.run("worker", i, cfg.threads, [&] { if (timeline) timeline->attach(i); });
    start.arrive_and_wait();
    // Every worker that could not be created or attached was recorded before the latch opened
    // (which orders it before this read): then the trial ends before its first operation.
    if (!failures.failed()) failures.run("worker", i, cfg.threads, [&] { work(i, stop); });
    // The worker stays attached to the timeline as its thread exits: the scheme's work at thread
    // exit (its last frees, the last thread out's epoch advances) is recorded too, and counted in
    // the stats; the join below waits for it, and the recorder outlives the join.
    finished.fetch_add(1, std::memory_order_relaxed);  // relaxed: the join orders the rest
  });
  // The workers that never started never arrive: count them down, or the others wait forever.
  start.count_down(cfg.threads - started);
  // Read just before the main thread releases the latch, so that no worker's event precedes it.
  const auto begin = std::chrono::steady_clock::now();  // the clock of timeline::now()
  origin_ns = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(begin.time_since_epoch()).count());
  start.arrive_and_wait();
  // Every worker that started has attached or failed to: without all of them, nothing to measure.
  if (!failures.failed())
    measure_interval(begin, cfg, probe, samples,
                     [&] { return finished.load(std::memory_order_relaxed) >= started; });
  // Fixed work: the interval ends when the last worker has run its operations (unless the trial
  // failed); the workers stop on their own.
  if (cfg.ops_per_thread > 0 && !failures.failed())
    while (finished.load(std::memory_order_relaxed) < started)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
  at_end();
  stop.store(true, std::memory_order_relaxed);
  workers.clear();  // joins
  failures.rethrow();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

// What a thread's successful inserts added to a set or map and its successful erases removed.
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

// One slot per worker, each on its own cache lines: written once, by its owner, at the end.
struct alignas(128) thread_outcome {
  tally delta;
  std::uint64_t ops = 0;
  latency_histogram latency;
};

// The workload of a set (lazy_list, hm_list, ...): the prefill inserts uniformly random keys from
// [0, keys) until exactly keys/2 inserts have succeeded; each worker draws a key and an operation
// (insert, delete or lookup, by --insert and --delete); at the end the set must hold exactly what
// the successful inserts and deletes left: size, key sum, well-formedness.
template <class DS>
class set_workload {
  static_assert(std::same_as<typename DS::key_type, std::int64_t>,
                "the lab draws int64 keys from [0, keys) and validates by key sums");

 public:
  set_workload(DS& ds, const trial_config& cfg) : ds_(ds), cfg_(cfg), outcomes_(cfg.threads) {}

  void prefill() {
    std::vector<thread_outcome> filled(prefill_thread_count(cfg_));
    const auto keys = static_cast<std::uint32_t>(cfg_.keys);
    prefill_threads(cfg_, [&](unsigned i, const auto& claim) {
      xoshiro256 rng(stream_seed(cfg_.seed, cfg_.trial, prefill_stream_base + i));
      tally mine;
      while (claim()) {
        for (;;) {
          const std::int64_t key = rng.below(keys);
          if (ds_.insert(key)) {
            mine.add(key);
            break;
          }
        }
      }
      filled[i].delta = mine;
    });
    for (const thread_outcome& o : filled) prefilled_ += o.delta;
  }

  template <class Span>
  void run(unsigned i, const std::atomic<bool>& stop, Span& span) {
    const auto keys = static_cast<std::uint32_t>(cfg_.keys);
    const unsigned insert_below = cfg_.insert_pct;
    const unsigned erase_below = cfg_.insert_pct + cfg_.delete_pct;
    xoshiro256 rng(stream_seed(cfg_.seed, cfg_.trial, i));
    latency_sampler latency(stream_seed(cfg_.seed, cfg_.trial, latency_stream_base + i));
    tally mine;
    std::uint64_t ops = 0;
    const std::uint64_t limit = operation_limit(cfg_);
    // relaxed: `stop` carries no data, it only has to be seen eventually; the join orders the
    // tallies before the main thread reads them.
    while (ops < limit && !stop.load(std::memory_order_relaxed)) {
      const std::int64_t key = rng.below(keys);
      const unsigned dice = rng.below(100);
      span.next();
      latency.time([&] {
        if (dice < insert_below) {
          if (ds_.insert(key)) mine.add(key);
        } else if (dice < erase_below) {
          if (ds_.erase(key)) mine.remove(key);
        } else {
          ds_.contains(key);
        }
      });
      ++ops;
    }
    outcomes_[i].delta = mine;
    outcomes_[i].ops = ops;
    outcomes_[i].latency = latency.histogram();
  }

  void finish(trial_result& result) const {
    tally expected = prefilled_;
    latency_histogram latency;
    for (const thread_outcome& o : outcomes_) {
      expected += o.delta;
      result.ops += o.ops;
      latency += o.latency;
    }
    result.latency = latency.summary();
    result.expected_size = expected.count;
    result.expected_key_sum = expected.key_sum;
    result.final_size = static_cast<std::int64_t>(ds_.unsafe_size());
    result.final_key_sum = ds_.unsafe_key_sum();
    result.well_formed = ds_.unsafe_well_formed();
  }

 private:
  DS& ds_;
  const trial_config& cfg_;
  tally prefilled_;
  std::vector<thread_outcome> outcomes_;
};

// --region-ops N: a worker keeps one region open across N operations, as paper 003's benchmarks
// hold a region_guard across 100 (the operations inside nest in it: their guards only count a
// depth, and under stamp_it they neither enter nor leave the stamp pool). Only for schemes whose
// guard is a region (the epoch family: debra, ebr, ner, qsbr, rcu, token_*, stamp_it); for the
// others a region would protect nothing, and each operation stays its own region, as a
// region_guard does nothing under xenium's hazard pointers. A region's guard is made and ended on
// its worker's thread: next() before each operation, and the span's end with the worker's loop.
template <class Scheme>
class region_span {
 public:
  static constexpr bool holds_regions = Scheme::family == reclaim::family::epoch;

  region_span(typename Scheme::domain& domain, unsigned ops)
      : domain_(domain), ops_(holds_regions ? ops : 1) {}

  void next() {
    if (ops_ <= 1) return;
    if (left_ == 0) {
      guard_.reset();  // the region's end first: a guard at a time
      guard_.emplace(domain_);
      left_ = ops_;
    }
    --left_;
  }

 private:
  typename Scheme::domain& domain_;
  const unsigned ops_;
  unsigned left_ = 0;  // operations the open region still takes
  std::optional<typename Scheme::guard> guard_;
};

// The container of a trial, on `domain`: a container whose lab entry sizes it from the trial
// (cuckoo_map's table from the key range, containers.hpp) is given the configuration too.
template <class DS>
DS make_container(typename DS::domain_type& domain, const trial_config& cfg) {
  if constexpr (std::constructible_from<DS, typename DS::domain_type&, const trial_config&>)
    return DS(domain, cfg);
  else
    return DS(domain);
}

template <class Scheme, class DS, class Workload = set_workload<DS>>
trial_result run_trial(const trial_config& cfg) {
  reset_peak_rss();
  trial_result result;
  {
    typename Scheme::domain domain;
    DS ds = make_container<DS>(domain, cfg);  // destroyed before the domain
    Workload workload(ds, cfg);

    if (cfg.prefill) workload.prefill();
    stalled_operations<Scheme> stalled(domain, cfg.stall);  // inside their operations from here
    const reclaim::stats before = domain.stats();
    std::shared_ptr<reclaim::timeline::recorder> timeline = make_timeline(cfg);
    std::uint64_t longest_pause_ns = 0;
    result.seconds = run_workers(
        cfg, timeline.get(), result.timeline_origin_ns,
        [&] {
          memory_sample s;
          s.pending = domain.stats().pending;
          if constexpr (requires { workload.progress(); }) s.ops = workload.progress();
          return s;
        },
        result.samples,
        [&] { longest_pause_ns = domain.stats().longest_pause_ns; },
        [&](unsigned i, const std::atomic<bool>& stop) {
          region_span<Scheme> span(domain, cfg.region_ops);
          workload.run(i, stop, span);
        });
    result.stats = stats_delta(before, domain.stats());
    result.stats.longest_pause_ns = longest_pause_ns;
    result.rss_bytes = rss_bytes();
    stalled.release();  // after the workers joined and the interval's end was read

    workload.finish(result);
    keep_timeline(result, std::move(timeline));
  }
  result.peak_rss_bytes = peak_rss_bytes();
  return result;
}

}  // namespace reclaim_bench
