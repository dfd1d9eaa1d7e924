// reclaim-bench, the lab: runs the sweep given on the command line (see options.hpp), one trial
// at a time, and reports each trial as a table row and a JSON line. Exit status: 0 if every trial
// ran under the allocator asked for and validated, 1 if one did not (or the run failed), 2 for bad
// input.
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "alloc.hpp"
#include "build_info.hpp"
#include "child.hpp"
#include "options.hpp"
#include "output.hpp"
#include "registry.hpp"

namespace reclaim_bench {
namespace {

// Runs one trial under allocator `alloc`: in this process when glibc is the only allocator of the
// run (the default: what a debugger sees), otherwise in a fresh child process, so that every
// allocator of a comparison starts from the same state. Either way the allocator in effect is
// asked, and a trial that would run under another one is not run: the error says why.
child_outcome run_point(const options& opt, const pairing& pair, const trial_config& config,
                        const std::string& alloc) {
  if (opt.allocs.size() == 1 && alloc == "glibc") {
    const allocator_info found = detect_allocator();
    if (found.name != alloc)
      return {{}, found,
              fmt::format("requested {}, but the allocator in effect is {} ({})", alloc,
                          found.name, found.library)};
    return {pair.run(config), found, {}};
  }
  const allocator_library lib = find_allocator_library(alloc);  // validated: found
  child_outcome outcome = run_in_child(config, alloc, alloc == "glibc" ? "" : lib.path);
  if (outcome.error.empty() && outcome.alloc.name != alloc)  // the child checks too
    outcome.error = fmt::format("requested {}, but the child reported {}", alloc,
                                outcome.alloc.name);
  return outcome;
}

int run_sweep(const options& opt, const registry& reg) {
  // Opened only now that every argument has been checked: bad input never touches the file.
  std::optional<jsonl_file> out;
  if (!opt.out.empty()) out.emplace(opt.out);

  const run_context ctx{git_commit(), std::thread::hardware_concurrency()};
  const std::size_t total =
      opt.ds.size() * opt.threads.size() * opt.allocs.size() * opt.schemes.size() * opt.trials;
  const progress bar(total);
  const trial_table table(reg);
  std::vector<finished_trial> done;
  std::size_t failed = 0, not_run = 0, index = 0;

  table.print_header();
  for (const std::string& ds : opt.ds) {
    for (unsigned threads : opt.threads) {
      for (const std::string& alloc : opt.allocs) {
        for (const std::string& scheme : opt.schemes) {
          const pairing& pair = *reg.find(ds, scheme);  // validated: known and supported
          for (unsigned trial = 1; trial <= opt.trials; ++trial, ++index) {
            const trial_config config = make_trial_config(opt, pair, threads, trial);
            bar.show(index, config, alloc, opt.trials);
            child_outcome outcome = run_point(opt, pair, config, alloc);
            bar.clear();
            if (!outcome.error.empty()) {
              fmt::print(stderr,
                         "reclaim-bench: TRIAL NOT RUN: ds={} scheme={} alloc={} threads={} "
                         "trial={}: {}\n",
                         ds, scheme, alloc, threads, trial, outcome.error);
              ++not_run;
              continue;
            }
            finished_trial t{config, outcome.result, reg.find_scheme(scheme)->family,
                             std::move(outcome.alloc)};
            if (!t.result.checksum_ok()) {
              report_failure(t);
              ++failed;
            }
            if (out) out->append(to_json(t, ctx));
            table.print_row(t);
            done.push_back(std::move(t));
          }
        }
      }
    }
  }
  print_summary(done);
  if (not_run > 0)
    fmt::print(stderr, "reclaim-bench: {} of {} trials did NOT RUN (see above)\n", not_run, total);
  if (failed > 0)
    fmt::print(stderr, "reclaim-bench: {} of {} trials FAILED validation\n", failed, total);
  return failed > 0 || not_run > 0 ? 1 : 0;
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
      print_list(reg, detect_allocator());
      return 0;
    }
    return run_sweep(*opt, reg);
  } catch (const usage_error& e) {
    fmt::print(stderr, "reclaim-bench: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "reclaim-bench: error: {}\n", e.what());
    return 1;
  }
}
