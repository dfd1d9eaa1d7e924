// reclaim-bench, the lab: runs the sweep given on the command line (see options.hpp), one trial
// at a time, and reports each trial as a table row and a JSON line. Exit status: 0 if every trial
// validated, 1 if one did not (or the run failed), 2 for bad input.
#include <cstdio>
#include <exception>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "alloc.hpp"
#include "build_info.hpp"
#include "options.hpp"
#include "output.hpp"
#include "registry.hpp"

namespace reclaim_bench {
namespace {

int run_sweep(const options& opt, const registry& reg) {
  // Opened only now that every argument has been checked: bad input never touches the file.
  std::optional<jsonl_file> out;
  if (!opt.out.empty()) out.emplace(opt.out);

  const allocator_info alloc = detect_allocator();
  const run_context ctx{alloc.name, git_commit(), std::thread::hardware_concurrency()};
  const std::size_t total = opt.ds.size() * opt.threads.size() * opt.schemes.size() * opt.trials;
  const progress bar(total);
  const trial_table table(reg);
  std::vector<finished_trial> done;
  std::size_t failed = 0;

  table.print_header();
  for (const std::string& ds : opt.ds) {
    for (unsigned threads : opt.threads) {
      for (const std::string& scheme : opt.schemes) {
        const pairing& pair = *reg.find(ds, scheme);  // validated: known and supported
        for (unsigned trial = 1; trial <= opt.trials; ++trial) {
          const trial_config config{.ds = pair.ds,
                                    .scheme = pair.scheme,
                                    .threads = threads,
                                    .seconds = opt.seconds,
                                    .trial = trial,
                                    .keys = opt.keys,
                                    .insert_pct = opt.insert_pct,
                                    .delete_pct = opt.delete_pct,
                                    .prefill = opt.prefill,
                                    .seed = opt.seed};
          bar.show(done.size(), config, opt.trials);
          finished_trial t{config, pair.run(config), reg.find_scheme(scheme)->family};
          bar.clear();
          if (!t.result.checksum_ok()) {
            report_failure(t);
            ++failed;
          }
          if (out) out->append(to_json(t, ctx));
          table.print_row(t);
          done.push_back(t);
        }
      }
    }
  }
  print_summary(done);
  if (failed > 0) {
    fmt::print(stderr, "reclaim-bench: {} of {} trials FAILED validation\n", failed, total);
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace reclaim_bench

int main(int argc, char** argv) {
  using namespace reclaim_bench;
  try {
    const registry reg = all_schemes();
    const std::optional<options> opt = parse_command_line(argc, argv, reg);
    if (!opt) return 0;  // help
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
