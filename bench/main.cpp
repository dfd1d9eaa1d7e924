// SPDX-License-Identifier: MIT
// reclaim-bench, the lab: runs the sweep given on the command line (see options.hpp), or the sweeps
// of an experiment file (experiment.hpp), one trial at a time, and reports each trial as a table
// row and a JSON line; --dry-run lists the trials instead. Exit status: 0 if every trial
// ran under the allocator asked for and validated, 1 if one did not (or the run failed), 2 for bad
// input.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "alloc.hpp"
#include "child.hpp"
#include "cleanup.hpp"
#include "experiment.hpp"
#include "options.hpp"
#include "output.hpp"
#include "registry.hpp"
#include "thread_failure.hpp"
#include "timeline_file.hpp"

namespace reclaim_bench {
namespace {

// Runs one trial under allocator `alloc` in a fresh child process, so that every trial starts from
// the same state: a trial run after others in one process inherits the heap they left (after a
// `none` trial that leaked a gigabyte, glibc's fragmented heap slowed the next trials 2 to 5
// times), and an allocator must be in effect from the process's first malloc. With --in-process
// (glibc only: what a debugger sees) the trial runs here instead. Either way the allocator in
// effect is asked, and a trial that would run under another one is not run: the error says why.
// A trial that records a timeline appends its rows to `timeline`.
child_outcome run_point(const options& opt, const pairing& pair, const trial_config& config,
                        const std::string& alloc, timeline_file* timeline) {
  if (opt.in_process) {  // options.cpp: glibc only
    const allocator_info found = detect_allocator();
    if (found.name != alloc)
      return {{}, found,
              fmt::format("requested {}, but the allocator in effect is {} ({})", alloc,
                          found.name, found.library)};
    child_outcome outcome{{}, found, {}};
    try {
      outcome.result = pair.run(config);
    } catch (const std::exception& e) {
      // A thread that could not be created, an allocation that failed: this trial's failure, and
      // the run goes on (thread_failure.hpp). The trial has unwound: its memory is back.
      outcome.error = failure_text(e);
      return outcome;
    }
    if (timeline)
      timeline->append({config.ds, config.scheme, found.name, config.threads, config.trial},
                       outcome.result);
    outcome.result.timeline.reset();  // written: the buffers go now, not with the run's results
    return outcome;
  }
  const allocator_library lib = find_allocator_library(alloc);  // validated: found
  child_outcome outcome = run_in_child(config, alloc, alloc == "glibc" ? "" : lib.path,
                                       timeline ? timeline->child_rows_path() : "");
  if (outcome.error.empty() && outcome.alloc.name != alloc)  // the child checks too
    outcome.error = fmt::format("requested {}, but the child reported {}", alloc,
                                outcome.alloc.name);
  if (timeline) timeline->append_child_rows(outcome.error.empty());
  return outcome;
}

// `timeline` receives the trials' timelines when opt.timeline names a file.
int run_sweep(const options& opt, const registry& reg, timeline_file* timeline) {
  // Opened at the first line: a run in which no trial ran leaves no file.
  std::optional<jsonl_file> out;
  if (!opt.out.empty()) out.emplace(opt.out);

  const run_context ctx = this_run();
  const std::size_t total = trial_count(opt, reg);
  print_skipped_pairs(opt, reg);
  const progress bar(total);
  const trial_table table(reg);
  std::vector<finished_trial> done;
  std::size_t failed = 0, not_run = 0, index = 0;

  table.print_header();
  for_each_trial(opt, reg, [&](const pairing& pair, unsigned threads, const std::string& alloc,
                               unsigned trial) {
    const trial_config config = make_trial_config(opt, pair, threads, trial);
    bar.show(index++, config, alloc, opt.trials);
    child_outcome outcome = run_point(opt, pair, config, alloc, timeline);
    bar.clear();
    if (!outcome.error.empty()) {
      fmt::print(stderr,
                 "reclaim-bench: TRIAL NOT RUN: ds={} scheme={} alloc={} threads={} trial={}: "
                 "{}\n",
                 pair.ds, pair.scheme, alloc, threads, trial, outcome.error);
      ++not_run;
      return;
    }
    finished_trial t{config, outcome.result, reg.find_scheme(pair.scheme)->family,
                     std::move(outcome.alloc)};
    if (!t.result.checksum_ok()) {
      report_failure(t);
      ++failed;
    }
    if (out) out->append(to_json(t, ctx));
    table.print_row(t);
    done.push_back(std::move(t));
  });
  print_summary(done);
  if (not_run > 0)
    fmt::print(stderr, "reclaim-bench: {} of {} trials did NOT RUN (see above)\n", not_run, total);
  if (failed > 0)
    fmt::print(stderr, "reclaim-bench: {} of {} trials FAILED validation\n", failed, total);
  return failed > 0 || not_run > 0 ? 1 : 0;
}

// --experiment FILE: every sweep is checked before the first one runs; then they run one after
// another, each with its table and summary, into the experiment's output file. The status is the
// worst of the sweeps'.
int run_experiment(const options& command_line, const registry& reg) {
  const experiment e = load_experiment(command_line, reg);
  fmt::print("Experiment: {} ({})\n", e.title, e.path);
  if (!e.paper.empty()) fmt::print("Reproduces: paper {}\n", e.paper);
  fmt::print("Output: {} (appended)\n\n", e.out);
  if (command_line.dry_run) {
    print_plan(e.sweeps, reg);
    return 0;
  }
  make_output_directories(e);
  // A sweep records a timeline when its run has a `timeline` key or the command line a --timeline
  // (which then overrides every run's, like the other flags: experiment.hpp). One file per name:
  // the runs that name the same file share it.
  std::map<std::string, timeline_file> timelines;
  for (const options& sweep : e.sweeps)
    if (!sweep.timeline.empty()) timelines.try_emplace(sweep.timeline, sweep.timeline);
  int status = 0;
  for (std::size_t i = 0; i < e.sweeps.size(); ++i) {
    fmt::print("{}[[run]] {} of {}\n", i > 0 ? "\n" : "", i + 1, e.sweeps.size());
    const options& sweep = e.sweeps[i];
    auto timeline = timelines.find(sweep.timeline);
    status = std::max(status, run_sweep(sweep, reg,
                                        timeline == timelines.end() ? nullptr : &timeline->second));
  }
  for (auto& [name, timeline] : timelines) timeline.commit();
  return status;
}

}  // namespace
}  // namespace reclaim_bench

int main(int argc, char** argv) {
  using namespace reclaim_bench;
  try {
    const registry reg = all_schemes();
    const std::optional<options> opt = parse_command_line(argc, argv, reg);
    if (!opt) return 0;  // help
    if (opt->child()) return child_main(*opt, reg);
    if (opt->list) {
      if (opt->list_markdown)
        print_applicability_markdown(reg);
      else
        print_list(reg, detect_allocator());
      return 0;
    }
    remove_temporaries_on_signals();
    if (!opt->experiment.empty()) return run_experiment(*opt, reg);
    check_output_files(*opt, /*directories_made=*/false);
    if (opt->dry_run) {
      print_plan({*opt}, reg);
      return 0;
    }
    // Created only now that every argument has been checked; renamed to its name at the end.
    std::optional<timeline_file> timeline;
    if (!opt->timeline.empty()) timeline.emplace(opt->timeline);
    const int status = run_sweep(*opt, reg, timeline ? &*timeline : nullptr);
    if (timeline) timeline->commit();
    return status;
  } catch (const usage_error& e) {
    fmt::print(stderr, "reclaim-bench: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "reclaim-bench: error: {}\n", failure_text(e));
    return 1;
  }
}
