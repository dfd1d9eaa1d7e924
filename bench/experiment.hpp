// SPDX-License-Identifier: MIT
// Experiment files: `reclaim-bench --experiment experiments/NAME.toml` (format: experiments/README.md).
// An experiment is a title, the paper's figure or table it reproduces, one JSON Lines output, and
// one or more [[run]] tables. Each [[run]] is a command-line sweep: its keys are the lab's flags
// without the dashes, turned into the words of a command line and parsed by parse_command_line(),
// so a sweep from a file is checked exactly as one typed by hand. The sweep flags given with
// --experiment override the file's values in every run. Every run is checked before the first one
// starts; an error is one line naming the file, the line, the run and the key.
#pragma once
#include <string>
#include <vector>

#include "options.hpp"
#include "registry.hpp"

namespace reclaim_bench {

struct experiment {
  std::string path;   // the file, as given
  std::string title;
  std::string paper;  // which figure or table it reproduces; may be empty
  std::string out;    // the JSON Lines file of every sweep (the file's, or --out's)
  std::vector<options> sweeps;  // one per [[run]], validated
};

// Reads and checks command_line.experiment. Throws usage_error on bad input; writes nothing.
experiment load_experiment(const options& command_line, const registry& reg);

// Creates the directories of the output file and of the sweeps' timeline files. Throws usage_error
// if it cannot.
void make_output_directories(const experiment& e);

}  // namespace reclaim_bench
