// SPDX-License-Identifier: MIT
#include "options.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <charconv>
#include <iterator>
#include <limits>
#include <string_view>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "alloc.hpp"
#include "memory.hpp"
#include "paths.hpp"
#include "registry.hpp"

namespace reclaim_bench {
namespace {

constexpr std::uint64_t max_threads = 1024;
constexpr double max_seconds = 24 * 60 * 60;
// Key sums of up to keys/2 keys below `keys` must fit an int64 with room to spare.
constexpr std::uint64_t min_keys = 2, max_keys = 1'000'000'000;
// 24 bytes per event and thread: 10M events are 240 MB per worker.
constexpr std::uint64_t max_timeline_capacity = 10'000'000;
constexpr std::uint64_t max_slow_free_us = 1'000'000'000;
constexpr std::uint64_t max_stall = 64;
constexpr std::uint64_t max_region_ops = 1'000'000;
constexpr std::uint64_t max_sample_ms = 60'000;
constexpr std::uint64_t max_ops = 1'000'000'000'000;

[[noreturn]] void bad(std::string_view flag, std::string_view expected, std::string_view got) {
  throw usage_error(fmt::format("{}: expected {}, got '{}'", flag, expected, got));
}

// A whole string as a number: no sign, no blanks, nothing after the digits.
template <class T>
std::optional<T> parse_number(std::string_view text) {
  T value{};
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc{} || stop != end) return std::nullopt;
  return value;
}

std::uint64_t parse_uint(std::string_view flag, std::string_view text, std::uint64_t lo,
                         std::uint64_t hi, std::string_view expected) {
  auto value = parse_number<std::uint64_t>(text);
  if (!value || *value < lo || *value > hi) bad(flag, expected, text);
  return *value;
}

// A comma list; empty items are refused.
std::vector<std::string> split_list(std::string_view flag, std::string_view text) {
  std::vector<std::string> items;
  for (std::size_t start = 0;;) {
    std::size_t comma = std::min(text.find(',', start), text.size());
    if (comma == start) bad(flag, "a comma list without empty items", text);
    items.emplace_back(text.substr(start, comma - start));
    if (comma == text.size()) return items;
    start = comma + 1;
  }
}

// A value listed twice would run the same points twice under the same trial numbers.
template <class T>
void refuse_duplicates(std::string_view flag, const std::vector<T>& items) {
  for (auto it = items.begin(); it != items.end(); ++it)
    if (std::find(items.begin(), it, *it) != it)
      throw usage_error(fmt::format("{}: '{}' is listed twice (each value runs once; --trials N "
                                    "repeats a point)",
                                    flag, *it));
}

std::vector<std::string> parse_names(std::string_view flag, std::string_view what,
                                     std::string_view text,
                                     const std::vector<std::string_view>& accepted) {
  std::vector<std::string> names = split_list(flag, text);
  for (const std::string& name : names) {
    if (std::find(accepted.begin(), accepted.end(), name) == accepted.end())
      throw usage_error(fmt::format("{}: unknown {} '{}' (accepted: {})", flag, what, name,
                                    fmt::join(accepted, ", ")));
  }
  refuse_duplicates(flag, names);
  return names;
}

double parse_seconds(std::string_view text) {
  auto value = parse_number<double>(text);
  // from_chars takes "inf" and "nan": the range check refuses both.
  if (!value || !(*value > 0 && *value <= max_seconds))
    bad("--seconds", fmt::format("a positive number of seconds, at most {}", max_seconds), text);
  return *value;
}

// A count in [lo, hi] with an optional K (x 1000) or M (x 1000000) suffix.
std::uint64_t parse_count(std::string_view flag, std::string_view text, std::uint64_t lo,
                          std::uint64_t hi, std::string_view expected) {
  std::uint64_t scale = 1;
  std::string_view digits = text;
  if (text.ends_with('K') || text.ends_with('M')) {
    scale = text.ends_with('K') ? 1'000 : 1'000'000;
    digits.remove_suffix(1);
  }
  auto count = parse_number<std::uint64_t>(digits);
  if (!count || *count > hi / scale || *count * scale < lo) bad(flag, expected, text);
  return *count * scale;
}

std::int64_t parse_keys(std::string_view text) {
  return static_cast<std::int64_t>(parse_count(
      "--keys", text, min_keys, max_keys, "a number of keys from 2 to 1000M (suffixes K and M)"));
}

std::string size_text(double bytes) {
  return bytes >= 1e9 ? fmt::format("{:.1f} GB", bytes / 1e9)
                      : fmt::format("{:.1f} MB", bytes / 1e6);
}

// Refuses, before anything is written, a sweep whose largest trial cannot fit: its prefilled nodes
// (keys/2 x the container's bytes per key) and timeline buffers (capacity x 24 bytes x threads),
// both touched before the measured interval, against the memory available (MemAvailable) and the
// address space that RLIMIT_AS leaves. A floor, so that only what surely cannot fit is refused:
// allocator overhead, garbage, thread stacks (8 MiB of address space each, a few pages of memory)
// and malloc's arenas are not counted; what runs out anyway fails its trial (thread_failure.hpp).
// `keys` and `capacity` are the flags' texts as given, for the message.
void check_memory(const options& opt, const registry& reg, std::string_view keys,
                  std::string_view capacity) {
  std::vector<std::string> parts, flags;
  double need = 0;
  if (opt.prefill) {
    const pairing* largest = nullptr;  // of the pairs that run: at least one does
    for (const std::string& ds : opt.ds)
      for (const std::string& scheme : opt.schemes)
        if (const pairing* p = reg.find(ds, scheme);
            p->supported() && (!largest || p->bytes_per_key > largest->bytes_per_key))
          largest = p;
    const double bytes = static_cast<double>(opt.keys / 2) * largest->bytes_per_key;
    need += bytes;
    parts.push_back(fmt::format("--keys {}: {} prefilled keys x {} bytes in {} = {}", keys,
                                opt.keys / 2, largest->bytes_per_key, largest->ds,
                                size_text(bytes)));
    flags.emplace_back("--keys");
  }
  if (!opt.timeline.empty()) {
    const unsigned threads = *std::max_element(opt.threads.begin(), opt.threads.end());
    const double bytes =
        static_cast<double>(opt.timeline_capacity) * sizeof(reclaim::timeline::entry) * threads;
    need += bytes;
    parts.push_back(fmt::format("--timeline-capacity {} x --threads {} x {} bytes = {}", capacity,
                                threads, sizeof(reclaim::timeline::entry), size_text(bytes)));
    flags.insert(flags.end(), {"--timeline-capacity", "--threads"});
  }

  const double available = static_cast<double>(available_memory_bytes());  // 0: unknown
  rlimit as{};
  const bool limited = ::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY;
  const double in_use = static_cast<double>(address_space_bytes());
  const double room = limited ? std::max(0.0, static_cast<double>(as.rlim_cur) - in_use) : 0;
  std::string limit;
  if (available > 0 && need > available)
    limit = fmt::format("the {} of memory available (MemAvailable in /proc/meminfo)",
                        size_text(available));
  else if (limited && need > room)
    limit = fmt::format("the {} of address space that RLIMIT_AS (ulimit -v) leaves",
                        size_text(room));
  if (limit.empty()) return;
  throw usage_error(fmt::format("a trial needs at least {} ({}), more than {}: lower {}",
                                size_text(need), fmt::join(parts, " + "), limit,
                                fmt::join(flags, " or ")));
}

// "--threads: 1 required TEXT missing" and the like, as one line.
std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n') c = ' ';
  return text;
}

}  // namespace

std::optional<options> parse_command_line(int argc, char** argv, const registry& reg) {
  const std::vector<std::string_view> containers = reg.containers();
  const std::vector<std::string_view> schemes = reg.scheme_names();

  // Every value is taken as text and parsed here, so that each error names its flag the same way.
  std::string ds = "lazy_list", scheme = "none", threads = "1", seconds = "1", trials = "1",
              keys = "20K", insert = "50", erase = "50", seed = "1", alloc = "glibc";
  std::string child_trial, child_fd;
  std::string timeline_capacity = "200K", slow_free_us = "100";
  std::string stall = "0", sample_ms = "0", ops, region_ops = "1";
  options opt;

  CLI::App app{"The lab of reclaim: runs trials of containers under reclamation schemes, prints a "
               "table and appends one JSON line per trial to --out. Values of --ds, --scheme, "
               "--alloc and --threads are comma lists; the run is their product, times --trials.",
               "reclaim-bench"};
  app.add_option("--ds", ds, fmt::format("containers ({})", fmt::join(containers, ", ")))
      ->type_name("LIST")
      ->capture_default_str();
  app.add_option("--scheme", scheme, fmt::format("schemes ({})", fmt::join(schemes, ", ")))
      ->type_name("LIST")
      ->capture_default_str();
  app.add_option("--threads", threads, "worker thread counts")
      ->type_name("LIST")
      ->capture_default_str();
  app.add_option("--alloc", alloc,
                 fmt::format("allocators ({}), each verified at run time",
                             fmt::join(allocator_names, ", ")))
      ->type_name("LIST")
      ->capture_default_str();
  app.add_option("--seconds", seconds, "measured time per trial")
      ->type_name("S")
      ->capture_default_str();
  app.add_option("--ops", ops,
                 "fixed work instead of --seconds: each worker runs N operations, and the trial "
                 "lasts as long as they take (K and M suffixes)")
      ->type_name("N");
  app.add_option("--trials", trials, "trials per point")->type_name("N")->capture_default_str();
  app.add_option("--keys", keys,
                 "key range [0, N) (a stack or queue starts with N/2 values); K and M suffixes")
      ->type_name("N")
      ->capture_default_str();
  app.add_option("--insert", insert, "percent inserts (pushes in a stack or queue)")
      ->type_name("PCT")
      ->capture_default_str();
  app.add_option("--delete", erase,
                 "percent deletes (pops); lookups are the rest (a stack or queue has none)")
      ->type_name("PCT")
      ->capture_default_str();
  app.add_flag("--prefill,!--no-prefill", opt.prefill,
               "fill to half the key range before measuring (default) or start empty");
  app.add_flag("--pairs,!--no-pairs", opt.pairs,
               "a stack or a queue: each operation is a push followed by a pop by the same "
               "worker, so that its size stays put (paper 003's Queue benchmark); default: each "
               "operation is a push or a pop as --insert and --delete say");
  app.add_option("--region-ops", region_ops,
                 "operations per region: each worker holds one region across N operations, as "
                 "paper 003's benchmarks do (100), where the scheme's guard is a region (the "
                 "epoch family: debra, ebr, ner, qsbr, rcu, token_*, stamp_it); for other schemes "
                 "each operation stays its own region")
      ->type_name("N")
      ->capture_default_str();
  app.add_flag("--interleave,!--no-interleave", opt.interleave,
               "run the trials round-robin (trial 1 of every point, then trial 2, ...), so that "
               "the machine's drift falls on every point alike; default: each point's trials in "
               "a row");
  app.add_flag("--in-process", opt.in_process,
               "run the trials in the lab's own process (glibc only), e.g. under a debugger; "
               "default: each trial in a fresh child process, so that no trial inherits the heap "
               "that earlier ones left");
  app.add_option("--seed", seed, "seed of the random streams")
      ->type_name("N")
      ->capture_default_str();
  app.add_option("--stall", stall,
                 "threads (not workers, not measured) that begin an operation and stay inside it "
                 "for the whole measured interval")
      ->type_name("N")
      ->capture_default_str();
  app.add_option("--sample-ms", sample_ms,
                 "sample pending garbage and RSS every MS milliseconds into the JSON line "
                 "(`samples`); 0: off")
      ->type_name("MS")
      ->capture_default_str();
  app.add_option("--out", opt.out, "JSON Lines file to append one line per trial to")
      ->type_name("FILE");
  app.add_option("--experiment", opt.experiment,
                 "run the sweeps of an experiment file (experiments/README.md); the flags above "
                 "given with it override the file's values")
      ->type_name("FILE");
  app.add_flag("--dry-run", opt.dry_run,
               "print the trials that would run and their measured time; run none");
  app.add_option("--timeline", opt.timeline,
                 "write every trial's timeline events (batch frees, slow frees, epoch changes) to "
                 "this CSV file")
      ->type_name("FILE");
  app.add_option("--timeline-capacity", timeline_capacity,
                 "timeline events kept per worker thread (24 bytes each); K and M suffixes")
      ->type_name("N")
      ->capture_default_str();
  app.add_option("--slow-free-us", slow_free_us,
                 "a free call longer than this is a slow_free timeline event")
      ->type_name("US")
      ->capture_default_str();
  // The parent's private channel to a child that runs one trial (child.cpp); no group: hidden.
  app.add_option("--child-timeline", opt.child_timeline)->group("");
  app.add_option("--child-trial", child_trial)->group("");
  app.add_option("--child-fd", child_fd)->group("");
  CLI::App* list = app.add_subcommand("list", "schemes, containers, allocators, applicability");
  list->add_flag("--markdown", opt.list_markdown,
                 "only the applicability matrix, as the Markdown table of docs/applicability.md");
  app.require_subcommand(0, 1);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help
    app.exit(e);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    throw usage_error(one_line(e.what()) + " (see --help)");
  }

  opt.list = list->parsed();
  // Kept as given: with --experiment they are parsed again over each of the file's sweeps.
  for (const auto& [name, text] : {std::pair<const char*, const std::string*>{"ds", &ds},
                                   {"scheme", &scheme}, {"threads", &threads}, {"alloc", &alloc},
                                   {"seconds", &seconds}, {"ops", &ops}, {"trials", &trials},
                                   {"keys", &keys},
                                   {"insert", &insert}, {"delete", &erase}, {"seed", &seed},
                                   {"out", &opt.out}, {"timeline", &opt.timeline},
                                   {"timeline-capacity", &timeline_capacity},
                                   {"slow-free-us", &slow_free_us}, {"stall", &stall},
                                   {"sample-ms", &sample_ms}, {"region-ops", &region_ops}}) {
    if (app.count(fmt::format("--{}", name))) opt.given.emplace_back(name, *text);
  }
  if (app.count("--prefill")) opt.given.emplace_back("prefill", opt.prefill ? "true" : "false");
  if (app.count("--pairs")) opt.given.emplace_back("pairs", opt.pairs ? "true" : "false");
  if (app.count("--interleave"))
    opt.given.emplace_back("interleave", opt.interleave ? "true" : "false");
  if (!opt.experiment.empty() && opt.list) throw usage_error("--experiment: not with `list`");
  if (app.count("--experiment") && opt.experiment.empty()) bad("--experiment", "a file name", "");
  opt.ds = parse_names("--ds", "container", ds, containers);
  for (const std::string& name : split_list("--scheme", scheme))
    if (!reg.find_scheme(name))
      if (std::string_view how = reg.why_absent(name); !how.empty())
        throw usage_error(fmt::format("--scheme: '{}' is not in this build of the lab: {}", name,
                                      how));
  opt.schemes = parse_names("--scheme", "scheme", scheme, schemes);
  // A scheme whose domain refuses this machine (its barrier cannot work here) is bad input.
  if (!opt.list)
    for (const std::string& name : opt.schemes)
      if (const scheme_info* s = reg.find_scheme(name); s->refusal)
        if (std::string why = s->refusal(); !why.empty())
          throw usage_error(fmt::format("--scheme: {} cannot run on this machine: {}", name, why));
  const std::string positive_threads = fmt::format("a positive integer, at most {}", max_threads);
  for (const std::string& t : split_list("--threads", threads))
    opt.threads.push_back(
        static_cast<unsigned>(parse_uint("--threads", t, 1, max_threads, positive_threads)));
  refuse_duplicates("--threads", opt.threads);
  const std::vector<std::string_view> allocators(std::begin(allocator_names),
                                                 std::end(allocator_names));
  opt.allocs = parse_names("--alloc", "allocator", alloc, allocators);
  for (const std::string& a : opt.allocs) {
    const allocator_library lib = find_allocator_library(a);
    if (lib.path.empty()) throw usage_error(fmt::format("--alloc: {} {}", a, lib.why_not));
    if (opt.in_process && a != "glibc")
      throw usage_error(fmt::format("--in-process with --alloc {}: only glibc trials run in the "
                                    "lab's process (another allocator must be in effect from a "
                                    "process's first malloc); drop one of the two", a));
  }
  opt.seconds = parse_seconds(seconds);
  if (app.count("--ops")) {
    if (app.count("--seconds"))
      throw usage_error("--ops and --seconds: give one (--ops N runs N operations per worker, "
                        "--seconds S runs the workers for S seconds)");
    opt.ops = parse_count("--ops", ops, 1, max_ops,
                          "a positive number of operations per worker, at most 1000000M "
                          "(suffixes K and M)");
  }
  opt.trials = static_cast<unsigned>(parse_uint("--trials", trials, 1,
                                                std::numeric_limits<unsigned>::max(),
                                                "a positive integer"));
  opt.keys = parse_keys(keys);
  const std::string_view percent = "a percentage from 0 to 100";
  opt.insert_pct = static_cast<unsigned>(parse_uint("--insert", insert, 0, 100, percent));
  opt.delete_pct = static_cast<unsigned>(parse_uint("--delete", erase, 0, 100, percent));
  // A config has no deletes: a sweep of configs alone takes --delete 0 unless given one.
  const auto is_config = [&](const std::string& ds) {
    return reg.workload_of(ds) == workload::config;
  };
  if (!app.count("--delete") && !opt.ds.empty() &&
      std::all_of(opt.ds.begin(), opt.ds.end(), is_config))
    opt.delete_pct = 0;
  // A stack or a queue has no lookups: each operation is a push (--insert) or a pop (--delete).
  // A cache decides its inserts and erases itself (cache_workload.hpp); a config has no deletes.
  for (const std::string& name : opt.ds) {
    const workload kind = reg.workload_of(name);
    if (kind == workload::cache && (opt.insert_pct != 50 || opt.delete_pct != 50))
      throw usage_error(fmt::format("--insert {} and --delete {}: {} runs paper 003's HashMap "
                                    "benchmark, whose inserts and evictions follow from the "
                                    "cache's misses; leave --insert and --delete at 50 (the "
                                    "default)",
                                    opt.insert_pct, opt.delete_pct, name));
    // A config's operations are stores (--insert) and reads (the rest): it has no deletes.
    if (kind == workload::config && opt.delete_pct != 0)
      throw usage_error(fmt::format("--delete {}: {} is a config, whose operations are stores "
                                    "(--insert) and reads (the rest); give --delete 0",
                                    opt.delete_pct, name));
    if ((kind == workload::stack || kind == workload::queue) &&
        opt.insert_pct + opt.delete_pct != 100)
      throw usage_error(fmt::format("--insert {} and --delete {} add up to {} percent, but {} is a "
                                    "{}: its operations are pushes (--insert) and pops (--delete), "
                                    "which must add up to 100 (it has no lookups)",
                                    opt.insert_pct, opt.delete_pct,
                                    opt.insert_pct + opt.delete_pct, name, to_string(kind)));
  }
  if (opt.pairs) {
    for (const std::string& name : opt.ds)
      if (const workload kind = reg.workload_of(name);
          kind != workload::stack && kind != workload::queue)
        throw usage_error(fmt::format("--pairs: {} is a {}; --pairs applies to a stack or a "
                                      "queue (push then pop)", name, to_string(kind)));
    if (opt.insert_pct != 50 || opt.delete_pct != 50)
      throw usage_error(fmt::format("--pairs with --insert {} and --delete {}: a pair is one push "
                                    "and one pop, so give 50 and 50 (the default) or no --pairs",
                                    opt.insert_pct, opt.delete_pct));
  }
  if (opt.insert_pct + opt.delete_pct > 100)
    throw usage_error(fmt::format("--insert {} and --delete {} add up to {} percent (at most 100; "
                                  "lookups are the rest)",
                                  opt.insert_pct, opt.delete_pct, opt.insert_pct + opt.delete_pct));
  opt.seed = parse_uint("--seed", seed, 0, std::numeric_limits<std::uint64_t>::max(),
                        "an unsigned 64-bit integer");
  opt.stall = static_cast<unsigned>(
      parse_uint("--stall", stall, 0, max_stall,
                 fmt::format("a number of stalled threads from 0 to {}", max_stall)));
  opt.region_ops = static_cast<unsigned>(
      parse_uint("--region-ops", region_ops, 1, max_region_ops,
                 fmt::format("a number of operations per region from 1 to {}", max_region_ops)));
  opt.sample_ms = static_cast<unsigned>(
      parse_uint("--sample-ms", sample_ms, 0, max_sample_ms,
                 fmt::format("whole milliseconds from 0 (off) to {}", max_sample_ms)));
  if (app.count("--out") && opt.out.empty()) bad("--out", "a file name", "");
  if (app.count("--timeline") && opt.timeline.empty()) bad("--timeline", "a file name", "");
  // With --experiment, a file's run may name the timeline: checked per run (experiment.cpp).
  const bool timeline =
      !opt.timeline.empty() || !opt.child_timeline.empty() || !opt.experiment.empty();
  for (const char* flag : {"--timeline-capacity", "--slow-free-us"})
    if (app.count(flag) && !timeline) throw usage_error(fmt::format("{}: needs --timeline", flag));
  opt.timeline_capacity = static_cast<std::size_t>(parse_count(
      "--timeline-capacity", timeline_capacity, 1, max_timeline_capacity,
      fmt::format("a number of events from 1 to {}M (suffixes K and M)",
                  max_timeline_capacity / 1'000'000)));
  opt.slow_free_ns = 1'000 * parse_uint("--slow-free-us", slow_free_us, 0, max_slow_free_us,
                                        fmt::format("microseconds from 0 to {}", max_slow_free_us));
  if (!child_trial.empty()) {
    opt.child_trial = static_cast<unsigned>(parse_uint(
        "--child-trial", child_trial, 1, std::numeric_limits<unsigned>::max(), "a trial number"));
    opt.child_fd = static_cast<int>(parse_uint("--child-fd", child_fd, 0,
                                               std::numeric_limits<int>::max(), "a descriptor"));
    if (opt.ds.size() != 1 || opt.schemes.size() != 1 || opt.threads.size() != 1 ||
        opt.allocs.size() != 1 || opt.list)
      throw usage_error("--child-trial: one container, scheme, thread count and allocator only");
  }

  // A sweep skips the pairs that do not apply; one in which none does is bad input.
  const std::vector<const pairing*> skipped = skipped_pairs(opt, reg);
  if (skipped.size() == opt.ds.size() * opt.schemes.size()) {
    std::vector<std::string> reasons;
    for (const pairing* p : skipped)
      reasons.push_back(fmt::format("{} does not support {}: {}", p->ds, p->scheme, p->why_not));
    throw usage_error(reasons.size() == 1
                          ? reasons[0]
                          : fmt::format("no pair of --ds and --scheme applies: {}",
                                        fmt::join(reasons, "; ")));
  }
  // A peer (peers.hpp) has no guard of ours for a stalled thread to hold.
  if (opt.stall > 0)
    for (const std::string& scheme : opt.schemes)
      if (const scheme_info* s = reg.find_scheme(scheme); s && !s->peer.empty())
        throw usage_error(fmt::format("--stall: {} is a peer's scheme ({}), which the lab cannot "
                                      "stall; --stall applies to the library's own schemes",
                                      scheme, s->peer));
  // A peer's operations open their own regions (peers.hpp); --region-ops would not reach them.
  if (opt.region_ops > 1)
    for (const std::string& scheme : opt.schemes)
      if (const scheme_info* s = reg.find_scheme(scheme); s && !s->peer.empty())
        throw usage_error(fmt::format("--region-ops {}: {} is a peer's scheme ({}), whose "
                                      "operations each open a region of their own; --region-ops "
                                      "applies to the library's own schemes",
                                      opt.region_ops, scheme, s->peer));
  // The run's own process checks the memory; a child runs one trial of a checked sweep.
  if (!opt.child()) check_memory(opt, reg, keys, timeline_capacity);
  return opt;
}

std::vector<const pairing*> skipped_pairs(const options& opt, const registry& reg) {
  std::vector<const pairing*> skipped;
  for (const std::string& ds : opt.ds)
    for (const std::string& scheme : opt.schemes)
      if (const pairing* p = reg.find(ds, scheme); !p->supported()) skipped.push_back(p);
  return skipped;
}

std::size_t trial_count(const options& opt, const registry& reg) {
  const std::size_t pairs = opt.ds.size() * opt.schemes.size() - skipped_pairs(opt, reg).size();
  return pairs * opt.threads.size() * opt.allocs.size() * opt.trials;
}

void check_output_files(const options& opt, bool directories_made) {
  if (!opt.out.empty())
    check_output_path("--out", opt.out, output_use::append, directories_made);
  if (opt.timeline.empty()) return;
  check_output_path("--timeline", opt.timeline, output_use::replace, directories_made);
  if (!opt.out.empty() && same_file(opt.timeline, opt.out))
    throw usage_error(fmt::format("--timeline: '{}' is the same file as the JSON Lines output "
                                  "'{}' (the timeline needs a file of its own)",
                                  opt.timeline, opt.out));
}

trial_config make_trial_config(const options& opt, const pairing& pair, unsigned threads,
                               unsigned trial) {
  return {.ds = pair.ds,
          .scheme = pair.scheme,
          .threads = threads,
          .seconds = opt.seconds,
          .ops_per_thread = opt.ops,
          .trial = trial,
          .keys = opt.keys,
          .insert_pct = opt.insert_pct,
          .delete_pct = opt.delete_pct,
          .prefill = opt.prefill,
          .pairs = opt.pairs,
          .region_ops = opt.region_ops,
          .seed = opt.seed,
          .timeline_capacity =
              opt.timeline.empty() && opt.child_timeline.empty() ? 0 : opt.timeline_capacity,
          .slow_free_ns = opt.slow_free_ns,
          .stall = opt.stall,
          .sample_ms = opt.sample_ms};
}

}  // namespace reclaim_bench
