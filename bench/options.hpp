// The lab's command line: its flags, and their parsing and validation (DESIGN.md section 5).
#pragma once
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "registry.hpp"

namespace reclaim_bench {

// Bad input. main() prints "reclaim-bench: <what>" as one line and exits with status 2; nothing has
// been written by then, because every argument is checked before the output file is opened.
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A validated command line; the defaults live in parse_command_line(), where the help shows them.
// A sweep runs ds x threads x alloc x scheme x trials.
struct options {
  bool list = false;  // `reclaim-bench list`
  std::vector<std::string> ds;
  std::vector<std::string> schemes;
  std::vector<unsigned> threads;
  std::vector<std::string> allocs;  // each one installed (checked here)
  double seconds{};
  unsigned trials{};
  std::int64_t keys{};
  unsigned insert_pct{};
  unsigned delete_pct{};
  bool prefill = true;
  std::uint64_t seed{};
  std::string out;  // JSON Lines file to append to; empty: none

  // Set only in a child process that runs one trial (child.hpp): its number, and the descriptor
  // to write the result to. The sweep's lists then hold one value each. Hidden from --help.
  unsigned child_trial = 0;
  int child_fd = -1;
  bool child() const { return child_trial > 0; }
};

// Parses and validates argv; scheme and container names are checked against the registry, and so
// is every pair of the sweep. Returns nullopt when help was asked for (it has been printed).
// Throws usage_error on bad input.
std::optional<options> parse_command_line(int argc, char** argv, const registry& reg);

// The point (pair, threads, trial) of the sweep of `opt` as a trial to run; `pair` is registered,
// so the config's names outlive it.
trial_config make_trial_config(const options& opt, const pairing& pair, unsigned threads,
                               unsigned trial);

}  // namespace reclaim_bench
