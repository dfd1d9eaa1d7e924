// SPDX-License-Identifier: MIT
// The lab's registry: every scheme, every container, and for each (container, scheme) pair either a
// function that runs one trial or the container's reason for refusing the scheme. It is filled by
// the generated per-scheme translation units (bench/CMakeLists.txt, scheme.cpp.in) from the
// library's own declarations, so the applicability matrix is never written by hand.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <reclaim/concepts.hpp>
#include <reclaim/core/timeline.hpp>

namespace reclaim_bench {

// One point of the sweep: what a trial runs.
struct trial_config {
  std::string_view ds;
  std::string_view scheme;
  unsigned threads = 1;
  double seconds = 1;       // how long the workers run (unless ops_per_thread is set)
  // --ops: each worker runs exactly this many operations, and the trial lasts as long as they
  // take; 0: the workers run for `seconds`.
  std::uint64_t ops_per_thread = 0;
  unsigned trial = 1;       // 1-based; seeds the trial's random streams together with `seed`
  std::int64_t keys = 2;    // keys are drawn uniformly from [0, keys)
  unsigned insert_pct = 0;  // the rest of 100 - insert - delete are lookups
  unsigned delete_pct = 0;
  bool prefill = true;      // insert keys/2 distinct keys before measuring
  // --pairs (a stack or a queue): each operation is a push followed by a pop by the same worker,
  // so that the pool keeps its size (paper 003's Queue benchmark), instead of a random choice.
  bool pairs = false;
  // --region-ops N: each worker holds one region across N operations (paper 003's region_guard),
  // where the scheme's guard is a region (region_span, trial.hpp); 1: each operation is its own.
  unsigned region_ops = 1;
  std::uint64_t seed = 1;
  // Timeline recording (--timeline): events per worker thread, 0 for none; the slow-free threshold.
  std::size_t timeline_capacity = 0;
  std::uint64_t slow_free_ns = 100'000;
  // --stall: threads that begin an operation and stay inside it for the whole measured interval
  // (not workers, not measured). --sample-ms: the memory sampler's period, 0 for none.
  unsigned stall = 0;
  unsigned sample_ms = 0;
};

// One reading of the memory sampler (--sample-ms), taken during the measured interval.
struct memory_sample {
  double t_ms = 0;              // since the measured start
  std::uint64_t pending = 0;    // the domain's stats().pending: retired, not yet freed
  std::uint64_t rss_bytes = 0;  // VmRSS; 0 if unknown
  std::uint64_t ops = 0;        // operations done by then, where the workload counts them (cache)
};

// Sampled per-operation latency over a trial's workers (latency.hpp), nanoseconds.
struct latency_summary {
  std::uint64_t samples = 0;
  std::uint64_t p50 = 0, p99 = 0, p999 = 0, max = 0;
};

// What a trial measured and found.
struct trial_result {
  std::uint64_t ops = 0;
  double seconds = 0;  // measured: from the start barrier until every worker joined
  // Counters are deltas over the measured interval; pending and pending_peak are as reported at the
  // end of it (pending_peak covers the prefill too).
  reclaim::stats stats;
  std::uint64_t peak_rss_bytes = 0;  // VmHWM over the whole trial; 0 if unknown
  std::uint64_t rss_bytes = 0;       // VmRSS at the end of the measured interval; 0 if unknown
  // With trial_config::sample_ms: in time order, at most max_memory_samples (trial.hpp).
  std::vector<memory_sample> samples;
  // Sampled operation latency; stats.longest_pause_ns is read when the workers are told to stop
  // (their exit frees are no operation's pause).
  latency_summary latency;

  // Validation: the structure must hold exactly what the successful operations put there.
  std::int64_t expected_size = 0;
  std::int64_t expected_key_sum = 0;
  std::int64_t final_size = 0;
  std::int64_t final_key_sum = 0;
  bool well_formed = false;

  // The workers' timeline events when the trial recorded one (trial_config::timeline_capacity),
  // with the steady-clock time of the measured start; the counts also come back from a child.
  std::shared_ptr<const reclaim::timeline::recorder> timeline;
  std::uint64_t timeline_origin_ns = 0;
  std::uint64_t timeline_events = 0;
  std::uint64_t timeline_dropped = 0;

  bool checksum_ok() const {
    return well_formed && final_size == expected_size && final_key_sum == expected_key_sum;
  }
};

using trial_fn = trial_result (*)(const trial_config&);

struct scheme_info {
  std::string_view name;
  reclaim::family family;
  bool bounds_garbage;
  unsigned needs;  // reclaim::needs bits
  // A peer's scheme (peers.hpp): the library it comes from; empty for the library's own.
  std::string_view peer = {};
  // A variant of a parameter sweep (RECLAIM_BENCH_SWEEP): not in the applicability matrix.
  bool sweep_variant = false;
  // Why the scheme cannot run on this machine ("" if it can): what its domain's constructor
  // throws (hp_splitcas where split locks trap, hp_mprotect where TLB flushes do not interrupt).
  std::string (*refusal)() = nullptr;
};

// What a container's trials do (containers.hpp): a set runs inserts, deletes and lookups of random
// keys (trial.hpp); a stack or a queue pushes and pops values that name their producer
// (pool_workload.hpp), and a queue is also checked for per-producer FIFO order; a cache runs paper
// 003's HashMap benchmark, simulations that reuse or compute partial results and hold them
// (cache_workload.hpp); a config shares one object between threads that read it and store new
// ones (config_workload.hpp).
enum class workload { set, stack, queue, cache, config };

constexpr std::string_view to_string(workload w) {
  switch (w) {
    case workload::set: return "set";
    case workload::stack: return "stack";
    case workload::queue: return "queue";
    case workload::cache: return "cache";
    case workload::config: return "config";
  }
  return "?";
}

// A (container, scheme) pair: runnable, or refused with the container's reason.
struct pairing {
  std::string_view ds;
  std::string_view scheme;
  trial_fn run = nullptr;  // null when the scheme does not apply to the container
  std::string_view why_not;
  std::size_t bytes_per_key = 0;  // the container's floor (containers.hpp)
  workload kind = workload::set;

  bool supported() const { return run != nullptr; }
};

class registry {
 public:
  void add_scheme(const scheme_info& s);
  void add_pairing(const pairing& p);  // registers p.ds as a container on first sight

  // In registration order.
  const std::vector<scheme_info>& schemes() const { return schemes_; }
  const std::vector<std::string_view>& containers() const { return containers_; }
  std::vector<std::string_view> scheme_names() const;

  const scheme_info* find_scheme(std::string_view name) const;    // null if unknown
  // A scheme this build of the lab leaves out (a defaults-sweep variant without
  // RECLAIM_BENCH_SWEEP; a peer library whose package is missing, given as "LIBRARY:"): how to
  // get it. Empty for any other name.
  void add_absent(std::string_view name, std::string_view how);
  std::string_view why_absent(std::string_view name) const;
  const pairing* find(std::string_view ds, std::string_view scheme) const;  // null if unknown
  workload workload_of(std::string_view ds) const;  // ds must be registered

 private:
  std::vector<scheme_info> schemes_;
  std::vector<std::string_view> containers_;
  std::vector<pairing> pairings_;
  std::vector<std::pair<std::string_view, std::string_view>> absent_;
};

// Every scheme listed in bench/CMakeLists.txt, each with every container (generated from
// schemes.cpp.in).
registry all_schemes();

}  // namespace reclaim_bench
