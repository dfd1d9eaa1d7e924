// SPDX-License-Identifier: MIT
// The lab's command line: its flags, and their parsing and validation (bench/README.md).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "registry.hpp"
#include "usage_error.hpp"

namespace reclaim_bench {

// A validated command line; the defaults live in parse_command_line(), where the help shows them.
// A sweep runs ds x threads x alloc x scheme x trials.
struct options {
  bool list = false;  // `reclaim-bench list`
  bool list_markdown = false;  // `reclaim-bench list --markdown`: the matrix for the docs
  std::vector<std::string> ds;
  std::vector<std::string> schemes;
  std::vector<unsigned> threads;
  std::vector<std::string> allocs;  // each one installed (checked here)
  double seconds{};
  std::uint64_t ops{};  // --ops: operations per worker instead of --seconds; 0: timed
  unsigned trials{};
  std::int64_t keys{};
  unsigned insert_pct{};
  unsigned delete_pct{};
  bool prefill = true;
  bool pairs = false;       // --pairs: pools push then pop (trial_config::pairs)
  unsigned region_ops = 1;  // --region-ops: operations per region (trial_config::region_ops)
  bool interleave = false;  // --interleave: trial 1 of every point, then trial 2, ...
  bool in_process = false;  // --in-process: trials in the lab's process (glibc only), not children
  std::uint64_t seed{};
  std::string out;  // JSON Lines file to append to; empty: none
  unsigned stall{};      // --stall: threads stalled inside an operation (trial_config::stall)
  unsigned sample_ms{};  // --sample-ms: memory sampler period, 0 for none

  // --experiment FILE: the sweeps are the file's [[run]] tables (experiment.hpp), each parsed as a
  // command line of its own, with the sweep flags given here overriding the file's values.
  std::string experiment;
  bool dry_run = false;  // --dry-run: print the trials and their measured time, run none
  // The sweep flags given on the command line, by name without the dashes, with their text as
  // given ("threads", "1,2"); --prefill and --no-prefill are ("prefill", "true" or "false").
  std::vector<std::pair<std::string, std::string>> given;

  // --timeline FILE: every trial's timeline events as CSV (timeline_file.hpp); empty: none.
  std::string timeline;
  std::size_t timeline_capacity{};  // --timeline-capacity: events per worker thread
  std::uint64_t slow_free_ns{};     // --slow-free-us, in nanoseconds
  // Set only in a child that records a timeline: the file it writes its trial's CSV rows to.
  std::string child_timeline;

  // Set only in a child process that runs one trial (child.hpp): its number, and the descriptor
  // to write the result to. The sweep's lists then hold one value each. Hidden from --help.
  unsigned child_trial = 0;
  int child_fd = -1;
  bool child() const { return child_trial > 0; }
};

// Parses and validates argv; scheme and container names are checked against the registry, and at
// least one (ds, scheme) pair of the sweep must apply (the others are skipped). Returns nullopt
// when help was asked for (it has been printed). Throws usage_error on bad input.
std::optional<options> parse_command_line(int argc, char** argv, const registry& reg);

// Checks, before anything is written, that the sweep's output files can take its output
// (check_output_path in paths.hpp): --out, --timeline, and that the timeline is not the --out file
// under another name. `directories_made`: the caller creates their directories (an experiment).
// Throws usage_error.
void check_output_files(const options& opt, bool directories_made);

// The (ds, scheme) pairs of a validated sweep that do not apply: the sweep skips them (at least
// one pair applies, parse_command_line() checked).
std::vector<const pairing*> skipped_pairs(const options& opt, const registry& reg);

// The number of trials of a validated sweep, and each of them in the order the lab runs them (ds,
// threads, alloc, scheme, trial; with --interleave the trial first): fn(pair, threads, alloc,
// trial). Pairs that do not apply are skipped by both.
std::size_t trial_count(const options& opt, const registry& reg);

template <class Fn>
void for_each_trial(const options& opt, const registry& reg, Fn&& fn) {
  auto points = [&](unsigned first_trial, unsigned last_trial) {
    for (const std::string& ds : opt.ds)
      for (unsigned threads : opt.threads)
        for (const std::string& alloc : opt.allocs)
          for (const std::string& scheme : opt.schemes) {
            const pairing& pair = *reg.find(ds, scheme);  // validated: known
            if (!pair.supported()) continue;
            for (unsigned trial = first_trial; trial <= last_trial; ++trial)
              fn(pair, threads, alloc, trial);
          }
  };
  if (!opt.interleave) return points(1, opt.trials);
  for (unsigned trial = 1; trial <= opt.trials; ++trial) points(trial, trial);
}

// The point (pair, threads, trial) of the sweep of `opt` as a trial to run; `pair` is registered,
// so the config's names outlive it.
trial_config make_trial_config(const options& opt, const pairing& pair, unsigned threads,
                               unsigned trial);

}  // namespace reclaim_bench
