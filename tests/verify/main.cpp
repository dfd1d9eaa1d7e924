// SPDX-License-Identifier: MIT
// reclaim-verify: runs the models of tests/verify/ under Relacy (docs/verification.md).
//   reclaim-verify --list
//   reclaim-verify [--model TEXT] [--shard K/N] [--iterations N] [--search random|bounded|full]
//                  [--mutant NAME] [--state STATE] [--history]
//       runs every model whose name contains TEXT (with --shard, only the K-th of every N of
//       them, counted from 0: make test runs the models in parallel shards; random: N random
//       schedules; bounded: every
//       schedule with few preemptions, full: every schedule, each up to N); a failure prints
//       Relacy's report (what went wrong and the schedule that got there, from a replay of it) and
//       the command that replays that schedule; --history records every schedule as it runs
//       (slower), for a failure whose replay differs
//   reclaim-verify --mutants [--model TEXT] [--iterations N] [--search ...] [--skip-known]
//       injects each fault into the models of its schemes and prints the table of which model
//       caught it, in how many schedules; fails if one survives that is not known to;
//       --skip-known leaves out the pairs known to survive (make test's budget)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "model.hpp"

namespace {

using namespace reclaim_verify;

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr,
               "reclaim-verify: %s (accepted: --list, --mutants, --model TEXT, --shard K/N "
               "(0 <= K < N), --iterations N (a positive number), --search random|bounded|full, "
               "--mutant NAME, --state STATE, --history, --skip-known)\n",
               what.c_str());
  std::exit(2);
}

struct command {
  bool list = false, mutants = false, skip_known = false;
  std::string model;
  unsigned long shard = 0, shards = 1;  // --shard K/N: the models K, K + N, K + 2N, ...
  options run;
};

// A positive number, or nothing if `v` is not one.
bool parse_count(const std::string& v, unsigned long& n) {
  char* end = nullptr;
  n = std::strtoul(v.c_str(), &end, 10);
  return !v.empty() && v[0] != '-' && *end == '\0';
}

command parse(int argc, char** argv) {
  command c;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(std::string(arg) + " needs a value");
      return argv[++i];
    };
    if (arg == "--list") {
      c.list = true;
    } else if (arg == "--history") {
      c.run.history = true;
    } else if (arg == "--mutants") {
      c.mutants = true;
    } else if (arg == "--skip-known") {
      c.skip_known = true;
    } else if (arg == "--model") {
      c.model = value();
    } else if (arg == "--mutant") {
      c.run.mutant = value();
    } else if (arg == "--state") {
      c.run.state = value();
    } else if (arg == "--shard") {
      const std::string v = value();
      const std::size_t slash = v.find('/');
      if (slash == std::string::npos || !parse_count(v.substr(0, slash), c.shard) ||
          !parse_count(v.substr(slash + 1), c.shards) || c.shards == 0 || c.shard >= c.shards)
        usage_error("--shard: '" + v + "' is not K/N with 0 <= K < N");
    } else if (arg == "--iterations") {
      const std::string v = value();
      unsigned long n = 0;
      if (!parse_count(v, n) || n == 0)
        usage_error("--iterations: '" + v + "' is not a positive number");
      c.run.iterations = n;
    } else if (arg == "--search") {
      const std::string v = value();
      if (v == "random")
        c.run.search = rl::random_scheduler_type;
      else if (v == "full")
        c.run.search = rl::fair_full_search_scheduler_type;
      else if (v == "bounded")
        c.run.search = rl::fair_context_bound_scheduler_type;
      else
        usage_error("--search: '" + v + "' is not random, bounded or full");
    } else {
      usage_error("unknown argument '" + std::string(arg) + "'");
    }
  }
  return c;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

const char* search_name(rl::scheduler_type_e s) {
  if (s == rl::random_scheduler_type) return "random";
  return s == rl::fair_context_bound_scheduler_type ? "bounded" : "full";
}

int run_models(const registry& r, const command& c) {
  if (!c.run.mutant.empty()) {
    bool known = false;
    for (const mutant_entry& m : r.mutants) known = known || m.name == c.run.mutant;
    if (!known) usage_error("--mutant: no fault named '" + c.run.mutant + "' (--list names them)");
  }
  int failed = 0, ran = 0;
  unsigned long matched = 0;
  for (const model_entry& m : r.models) {
    if (m.name.find(c.model) == std::string::npos) continue;
    if (matched++ % c.shards != c.shard) continue;
    ++ran;
    const auto start = std::chrono::steady_clock::now();
    const outcome o = m.run(c.run);
    if (!o.failed) {
      std::printf("ok      %-32s %lu %s schedules, %.1f s\n", m.name.c_str(), o.iterations,
                  search_name(c.run.search), seconds_since(start));
      continue;
    }
    ++failed;
    std::printf("FAILED  %-32s %s at schedule %lu%s%s\n%s\nreplay: reclaim-verify --model %s%s%s "
                "--search %s --state '%s'\n",
                m.name.c_str(), o.verdict.c_str(), o.iterations,
                c.run.mutant.empty() ? "" : " with fault ", c.run.mutant.c_str(), o.report.c_str(),
                m.name.c_str(),
                c.run.mutant.empty() ? "" : " --mutant ", c.run.mutant.c_str(),
                search_name(c.run.search), o.state.c_str());
  }
  if (matched == 0)
    usage_error("--model: no model's name contains '" + c.model + "' (--list names them)");
  std::printf("%d of %d models passed\n", ran - failed, ran);
  return failed == 0 ? 0 : 1;
}

int run_mutants(const registry& r, const command& c) {
  std::printf("| fault | scheme | caught by | schedules |\n|---|---|---|---|\n");
  int survived = 0, explained = 0, total = 0;
  for (const mutant_entry& mutant : r.mutants) {
    for (const std::string& scheme : mutant.schemes) {
      if (c.skip_known && mutant.known_to_survive(scheme)) continue;
      bool any = false;
      options o = c.run;
      o.mutant = mutant.name;
      std::string killer;
      unsigned long schedules = 0;
      // Every model of the scheme shallow first, then deep: most faults fall within a few
      // schedules of the right model, which need not be the first one registered. (Random
      // schedules are the same sequence either way: a deep run repeats the shallow one first.)
      const unsigned long shallow = std::min(c.run.iterations, 1000ul);
      for (const unsigned long budget : {shallow, c.run.iterations}) {
        o.iterations = budget;
        for (const model_entry& m : r.models) {
          if (m.scheme != scheme || m.name.find(c.model) == std::string::npos) continue;
          any = true;
          const outcome result = m.run(o);
          if (result.failed) {
            killer = m.name;
            schedules = result.iterations;
            break;
          }
        }
        if (!killer.empty() || budget == c.run.iterations) break;
      }
      if (!any) continue;
      ++total;
      if (killer.empty() && mutant.known_to_survive(scheme)) {
        ++explained;
        std::printf("| %s | %s | survived, known: %s | - |\n", mutant.name.c_str(), scheme.c_str(),
                    mutant.survives.c_str());
      } else if (killer.empty()) {
        ++survived;
        std::printf("| %s | %s | SURVIVED | - |\n", mutant.name.c_str(), scheme.c_str());
      } else {
        std::printf("| %s | %s | %s | %lu |\n", mutant.name.c_str(), scheme.c_str(),
                    killer.c_str(), schedules);
      }
      std::fflush(stdout);
    }
  }
  std::printf("%d of %d mutants caught, %d known to survive (%s search, up to %lu schedules per "
              "model)\n",
              total - survived - explained, total, explained, search_name(c.run.search),
              c.run.iterations);
  return survived == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const command c = parse(argc, argv);
  // Process-wide state that the library makes on first use, made here, outside any simulation:
  // memory of the checker's heap must be freed by the end of each simulated run.
  (void)reclaim::core::detail::live();  // the live domains, by id
  registry r;
  add_epoch_models(r);
  add_region_models(r);
  add_hp_models(r);
  add_signal_models(r);
  add_era_models(r);
  add_batch_models(r);
  add_stamp_it_models(r);
  add_lfrc_models(r);
  add_rc_models(r);
  if (c.list) {
    for (const model_entry& m : r.models) std::printf("model   %s\n", m.name.c_str());
    for (const mutant_entry& m : r.mutants)
      std::printf("fault   %-36s %s\n", m.name.c_str(), m.what.c_str());
    return 0;
  }
  return c.mutants ? run_mutants(r, c) : run_models(r, c);
}
