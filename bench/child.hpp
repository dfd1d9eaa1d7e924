// SPDX-License-Identifier: MIT
// One trial in a fresh child process under a chosen allocator. An allocator must be in effect from
// the first malloc of the process, so the lab re-executes itself (/proc/self/exe) with the
// allocator's shared object first in LD_PRELOAD and hidden flags naming the one trial to run. The
// child checks that the allocator it detects is the one requested, runs the trial, and writes one
// JSON object back through a pipe; the parent stays the only writer of the tables and of --out.
#pragma once
#include <string>
#include <string_view>

#include "alloc.hpp"
#include "options.hpp"
#include "registry.hpp"

namespace reclaim_bench {

// What came back from a child: the trial's result and the allocator it found in effect, or an
// error (allocator mismatch, a crash, an exception) that stopped it.
struct child_outcome {
  trial_result result;
  allocator_info alloc;  // name as detected: a string_view into allocator_names
  std::string error;     // empty on success
};

// Runs trial `config` in a child with `preload` (empty: none) put first in LD_PRELOAD; the child
// is told to expect allocator `alloc` (one of allocator_names). Waits for the child. A trial that
// records a timeline (config.timeline_capacity) writes its CSV rows to `timeline_rows`.
child_outcome run_in_child(const trial_config& config, std::string_view alloc,
                           const std::string& preload, const std::string& timeline_rows = {});

// The child's side: runs the one trial of `opt` (opt.child()) and writes its outcome to
// opt.child_fd. Returns the exit status.
int child_main(const options& opt, const registry& reg);

}  // namespace reclaim_bench
