// SPDX-License-Identifier: MIT
// What the lab writes: JSON Lines records, the tables on stdout, the failure and progress lines on
// stderr, and the `list` report.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <reclaim/concepts.hpp>

#include "alloc.hpp"
#include "options.hpp"
#include "registry.hpp"

namespace reclaim_bench {

// Facts shared by every trial of a run.
struct run_context {
  std::string_view git;    // the commit the lab was built from
  unsigned cpus;           // std::thread::hardware_concurrency()
  std::string cpu_model;   // /proc/cpuinfo's model name, or "unknown"
  std::string started;     // when the run began, UTC, ISO 8601 (2026-11-24T21:05:00Z)
};

// The run_context of a run that begins now.
run_context this_run();

struct finished_trial {
  trial_config config;
  trial_result result;
  reclaim::family family;  // of the scheme
  allocator_info alloc;    // as detected in the process that ran the trial (= the one requested)
};

nlohmann::ordered_json to_json(const finished_trial& t, const run_context& ctx);

// A JSON Lines file opened for appending. Each record is one line written with a single write(2)
// on an O_APPEND descriptor, so a concurrent writer never splits it; a write that fails part way
// (a full disk, the file size limit) is undone, so the file holds whole lines only.
// The file is opened (and created if needed) at the first append, so a run in which no trial ran
// leaves no empty file behind; check_output_files() has checked that it can be.
class jsonl_file {
 public:
  explicit jsonl_file(std::string path) : path_(std::move(path)) {}
  ~jsonl_file();
  jsonl_file(const jsonl_file&) = delete;
  jsonl_file& operator=(const jsonl_file&) = delete;

  // Throws std::runtime_error naming the cause (errno's text) if the line cannot be written whole;
  // the file is then as it was before.
  void append(const nlohmann::ordered_json& record);

 private:
  std::string path_;
  int fd_ = -1;  // not open yet
};

// The per-trial table on stdout, printed row by row as trials finish.
class trial_table {
 public:
  explicit trial_table(const registry& reg);
  void print_header() const;
  void print_row(const finished_trial& t) const;

 private:
  std::vector<std::size_t> widths_;
  std::vector<bool> right_;
};

// Per (ds, threads, alloc) and scheme: median, min and max throughput over the trials, and the
// median relative to the `none` median of the same (ds, threads, alloc) when `none` ran.
void print_summary(const std::vector<finished_trial>& trials);

// The loud line on stderr for a trial whose structure does not match its operations.
void report_failure(const finished_trial& t);

// "[7/18] hm_list debra jemalloc threads=2 trial 1/3" on stderr, rewritten in place; only on a
// terminal.
class progress {
 public:
  explicit progress(std::size_t total);
  void show(std::size_t index, const trial_config& config, std::string_view alloc,
            unsigned trials) const;  // index: 0-based
  void clear() const;

 private:
  bool active_;
  std::size_t total_;
};

// "reclaim-bench: skipping hm_list x nbr_plus: <why>" on stderr for each pair of the sweep that
// does not apply.
void print_skipped_pairs(const options& opt, const registry& reg);

// --dry-run: each trial of the sweeps, one line each, and the measured time they would take.
void print_plan(const std::vector<options>& sweeps, const registry& reg);

// `reclaim-bench list`: `alloc` is the allocator in effect in this process.
void print_list(const registry& reg, const allocator_info& alloc);
// The applicability matrix as a Markdown table, one column per set of needs (schemes that need the
// same of a container apply to the same containers): what docs/applicability.md shows, checked
// against it by tests/cli.
void print_applicability_markdown(const registry& reg);

}  // namespace reclaim_bench
