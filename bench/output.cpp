// SPDX-License-Identifier: MIT
#include "output.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <system_error>
#include <thread>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "build_info.hpp"
#include "options.hpp"

namespace reclaim_bench {
namespace {

constexpr double mebi = 1024.0 * 1024.0;

double throughput(const trial_result& r) { return r.seconds > 0 ? r.ops / r.seconds : 0; }

// The share of the workers' time spent in free calls (paper 001's "% free"): free_ns over
// threads x measured seconds.
double free_percent(const trial_result& r, unsigned threads) {
  return r.seconds > 0 ? 100.0 * static_cast<double>(r.stats.free_ns) / (threads * r.seconds * 1e9)
                       : 0;
}

// One row of cells in columns of the given widths, two spaces apart; numbers read best
// right-aligned, names left-aligned.
void print_cells(const std::vector<std::string>& cells, const std::vector<std::size_t>& widths,
                 const std::vector<bool>& right) {
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) line += "  ";
    line += right[i] ? fmt::format("{:>{}}", cells[i], widths[i])
                     : fmt::format("{:<{}}", cells[i], widths[i]);
  }
  line.erase(line.find_last_not_of(' ') + 1);
  fmt::print("{}\n", line);
}

// Rows (the first is the header) in columns as wide as their widest cell.
void print_aligned(const std::vector<std::vector<std::string>>& rows,
                   const std::vector<bool>& right) {
  std::vector<std::size_t> widths(right.size(), 0);
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  for (const auto& row : rows) print_cells(row, widths, right);
}

std::string needs_text(unsigned needs) {
  std::vector<std::string_view> names;
  for (reclaim::needs n : reclaim::all_needs)
    if (needs & n) names.push_back(reclaim::to_string(n));
  if (names.empty()) return std::string(reclaim::to_string(reclaim::needs_nothing));
  return fmt::format("{}", fmt::join(names, ", "));
}

// The applicability matrix shows the library's own schemes: not the peers' (their containers are
// their own), nor a parameter sweep's variants (RECLAIM_BENCH_SWEEP).
bool in_matrix(const scheme_info& s) { return s.peer.empty() && !s.sweep_variant; }

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  std::size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

}  // namespace

run_context this_run() {
  std::string model = "unknown";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (!line.starts_with("model name")) continue;
    if (auto colon = line.find(':'); colon != std::string::npos && colon + 2 <= line.size())
      model = line.substr(colon + 2);
    break;
  }
  const auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  return {git_commit(), std::thread::hardware_concurrency(), model,
          fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", now)};
}

nlohmann::ordered_json to_json(const finished_trial& t, const run_context& ctx) {
  const trial_config& c = t.config;
  const trial_result& r = t.result;
  nlohmann::ordered_json j = {
      {"ds", c.ds},
      {"scheme", c.scheme},
      {"family", reclaim::to_string(t.family)},
      {"alloc", t.alloc.name},
      {"alloc_version", t.alloc.version},
      {"alloc_lib", t.alloc.library},
      {"threads", c.threads},
      {"trial", c.trial},
      {"seconds", r.seconds},
      {"seconds_requested", c.ops_per_thread ? 0.0 : c.seconds},
      {"ops_per_thread", c.ops_per_thread},
      {"keys", c.keys},
      {"insert", c.insert_pct},
      {"delete", c.delete_pct},
      {"prefill", c.prefill},
      {"pairs", c.pairs},
      {"region_ops", c.region_ops},
      {"seed", c.seed},
      {"stall", c.stall},
      {"sample_ms", c.sample_ms},
      {"ops", r.ops},
      {"throughput", throughput(r)},
      {"peak_rss_bytes", r.peak_rss_bytes},
      {"rss_bytes", r.rss_bytes},
      {"retired", r.stats.retired},
      {"freed", r.stats.freed},
      {"pending", r.stats.pending},
      {"pending_peak", r.stats.pending_peak},
      {"epochs", r.stats.epochs},
      {"scans", r.stats.scans},
      {"signals", r.stats.signals},
      {"fallbacks", r.stats.fallbacks},
      {"free_ns", r.stats.free_ns},
      {"scan_ns", r.stats.scan_ns},
      {"wide_cas", r.stats.wide_cas},
      {"wide_cas_failed", r.stats.wide_cas_failed},
      {"longest_pause_ns", r.stats.longest_pause_ns},
      {"latency_samples", r.latency.samples},
      {"latency_p50_ns", r.latency.p50},
      {"latency_p99_ns", r.latency.p99},
      {"latency_p999_ns", r.latency.p999},
      {"latency_max_ns", r.latency.max},
      {"final_size", r.final_size},
      {"final_key_sum", r.final_key_sum},
      {"expected_size", r.expected_size},
      {"expected_key_sum", r.expected_key_sum},
      {"well_formed", r.well_formed},
      {"checksum_ok", r.checksum_ok()},
      {"git", ctx.git},
      {"cpus", ctx.cpus},
      {"cpu_model", ctx.cpu_model},
      {"started", ctx.started},
  };
  if (c.sample_ms > 0) {  // --sample-ms
    nlohmann::ordered_json& samples = j["samples"] = nlohmann::ordered_json::array();
    for (const memory_sample& s : r.samples)
      samples.push_back({{"t_ms", s.t_ms},
                         {"pending", s.pending},
                         {"rss_bytes", s.rss_bytes},
                         {"ops", s.ops}});
  }
  if (c.timeline_capacity > 0) {  // --timeline
    j["timeline_events"] = r.timeline_events;
    j["timeline_dropped"] = r.timeline_dropped;
  }
  return j;
}

jsonl_file::~jsonl_file() {
  if (fd_ >= 0) ::close(fd_);
}

void jsonl_file::append(const nlohmann::ordered_json& record) {
  const std::string line = record.dump() + '\n';
  if (fd_ < 0) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "opening " + path_);
  }
  // Where the line begins: the end of the file before it is appended (O_APPEND).
  struct stat before {};
  if (::fstat(fd_, &before) != 0)
    throw std::system_error(errno, std::generic_category(), "writing to " + path_);
  // Normally one write(2) of the whole line. A short one (the disk filled up, the file size limit)
  // is followed by another for the rest, which either succeeds or says why it cannot.
  for (std::string_view rest = line; !rest.empty();) {
    const ssize_t n = ::write(fd_, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      // The line must be whole or not there at all: the next run's first line would be glued to
      // a partial one. Cut the file back to where the line began.
      const int error = n < 0 ? errno : EIO;
      const std::string undo = ::ftruncate(fd_, before.st_size) == 0
                                   ? "the partial line was removed"
                                   : fmt::format("the partial line could not be removed: {}",
                                                 std::strerror(errno));
      throw std::runtime_error(fmt::format("cannot append a JSON line to '{}': {} ({})", path_,
                                           std::strerror(error), undo));
    }
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
}

// Name columns as wide as the longest registered name; numbers right-aligned.
trial_table::trial_table(const registry& reg)
    : widths_{2, 6, 8, 7, 5, 8, 12, 11, 11, 6, 12, 8, 8, 6},
      right_{false, false, false, true, true, true, true, true, true, true, true, true, true,
             false} {
  for (std::string_view ds : reg.containers()) widths_[0] = std::max(widths_[0], ds.size());
  for (const scheme_info& s : reg.schemes()) widths_[1] = std::max(widths_[1], s.name.size());
}

void trial_table::print_header() const {
  print_cells({"ds", "scheme", "alloc", "threads", "trial", "Mops/s", "peak RSS MiB", "retired",
               "freed", "free %", "pending peak", "p99.9 us", "pause ms", "ok"},
              widths_, right_);
}

void trial_table::print_row(const finished_trial& t) const {
  const trial_result& r = t.result;
  print_cells({std::string(t.config.ds), std::string(t.config.scheme), std::string(t.alloc.name),
               std::to_string(t.config.threads), std::to_string(t.config.trial),
               fmt::format("{:.3f}", throughput(r) / 1e6),
               fmt::format("{:.1f}", r.peak_rss_bytes / mebi), std::to_string(r.stats.retired),
               std::to_string(r.stats.freed),
               fmt::format("{:.1f}", free_percent(r, t.config.threads)),
               std::to_string(r.stats.pending_peak),
               fmt::format("{:.1f}", r.latency.p999 / 1e3),
               fmt::format("{:.3f}", r.stats.longest_pause_ns / 1e6),
               r.checksum_ok() ? "yes" : "FAILED"},
              widths_, right_);
  std::fflush(stdout);
}

void print_summary(const std::vector<finished_trial>& trials) {
  // One point per (ds, threads, alloc, scheme), in the order the sweep first ran it.
  struct point {
    std::string_view ds;
    unsigned threads;
    std::string_view alloc;
    std::string_view scheme;
    std::vector<double> mops;
    bool ok = true;
  };
  std::vector<point> points;
  for (const finished_trial& t : trials) {
    const trial_config& c = t.config;
    auto it = std::find_if(points.begin(), points.end(), [&](const point& p) {
      return p.ds == c.ds && p.threads == c.threads && p.alloc == t.alloc.name &&
             p.scheme == c.scheme;
    });
    if (it == points.end())
      it = points.insert(points.end(), point{c.ds, c.threads, t.alloc.name, c.scheme, {}});
    it->mops.push_back(throughput(t.result) / 1e6);
    it->ok = it->ok && t.result.checksum_ok();
  }

  std::vector<std::vector<std::string>> rows = {
      {"ds", "threads", "alloc", "scheme", "trials", "median Mops/s", "min", "max", "vs none",
       "ok"}};
  for (std::size_t i = 0; i < points.size(); ++i) {
    const point& p = points[i];
    // A blank line between (ds, threads) groups.
    if (i > 0 && (p.ds != points[i - 1].ds || p.threads != points[i - 1].threads))
      rows.emplace_back();
    auto none = std::find_if(points.begin(), points.end(), [&](const point& q) {
      return q.ds == p.ds && q.threads == p.threads && q.alloc == p.alloc && q.scheme == "none";
    });
    const double m = median(p.mops);
    const double none_median = none == points.end() ? 0 : median(none->mops);
    auto [lo, hi] = std::minmax_element(p.mops.begin(), p.mops.end());
    rows.push_back({std::string(p.ds), std::to_string(p.threads), std::string(p.alloc),
                    std::string(p.scheme),
                    std::to_string(p.mops.size()), fmt::format("{:.3f}", m),
                    fmt::format("{:.3f}", *lo), fmt::format("{:.3f}", *hi),
                    none_median > 0 ? fmt::format("{:.2f}x", m / none_median) : "-",
                    p.ok ? "yes" : "FAILED"});
  }
  fmt::print("\nSummary (throughput over trials)\n");
  print_aligned(rows, {false, true, false, false, true, true, true, true, true, false});
}

void report_failure(const finished_trial& t) {
  const trial_config& c = t.config;
  const trial_result& r = t.result;
  fmt::print(stderr,
             "reclaim-bench: VALIDATION FAILED: ds={} scheme={} alloc={} threads={} trial={}: "
             "expected size {} and key sum {}, found size {} and key sum {}, well formed: {}\n",
             c.ds, c.scheme, t.alloc.name, c.threads, c.trial, r.expected_size,
             r.expected_key_sum, r.final_size, r.final_key_sum, r.well_formed ? "yes" : "NO");
}

progress::progress(std::size_t total) : active_(::isatty(STDERR_FILENO) == 1), total_(total) {}

void progress::show(std::size_t index, const trial_config& c, std::string_view alloc,
                    unsigned trials) const {
  if (!active_) return;
  // \r and "erase to end of line": the line is rewritten in place.
  fmt::print(stderr, "\r\033[K[{}/{}] {} {} {} threads={} trial {}/{}", index + 1, total_, c.ds,
             c.scheme, alloc, c.threads, c.trial, trials);
  std::fflush(stderr);
}

void progress::clear() const {
  if (!active_) return;
  fmt::print(stderr, "\r\033[K");
  std::fflush(stderr);
}

void print_skipped_pairs(const options& opt, const registry& reg) {
  for (const pairing* p : skipped_pairs(opt, reg))
    fmt::print(stderr, "reclaim-bench: skipping {} x {}: {}\n", p->ds, p->scheme, p->why_not);
}

void print_plan(const std::vector<options>& sweeps, const registry& reg) {
  std::size_t trials = 0, fixed = 0;
  double seconds = 0;
  for (std::size_t i = 0; i < sweeps.size(); ++i) {
    const options& opt = sweeps[i];
    const std::size_t n = trial_count(opt, reg);
    if (sweeps.size() > 1) fmt::print("{}[[run]] {} of {}\n", i > 0 ? "\n" : "", i + 1, sweeps.size());
    fmt::print("{} trials x {}; keys {}, {}, {}, seed {}{}{}{}{}{}\n", n,
               opt.ops ? fmt::format("{} operations per worker", opt.ops)
                       : fmt::format("{} s", opt.seconds),
               opt.keys,
               opt.pairs ? "push-pop pairs"
                         : fmt::format("insert {}%, delete {}%", opt.insert_pct, opt.delete_pct),
               opt.prefill ? "prefilled" : "not prefilled", opt.seed,
               opt.stall > 0 ? fmt::format(", {} stalled", opt.stall) : "",
               opt.region_ops > 1 ? fmt::format(", {} operations per region", opt.region_ops) : "",
               opt.sample_ms > 0 ? fmt::format(", memory sampled every {} ms", opt.sample_ms) : "",
               opt.out.empty() ? "" : fmt::format(", appended to {}", opt.out),
               opt.timeline.empty() ? "" : fmt::format(", timeline in {}", opt.timeline));
    print_skipped_pairs(opt, reg);
    for_each_trial(opt, reg, [&](const pairing& pair, unsigned threads, const std::string& alloc,
                                 unsigned trial) {
      fmt::print("  {} {} {} threads={} trial {}/{}\n", pair.ds, pair.scheme, alloc, threads,
                 trial, opt.trials);
    });
    trials += n;
    if (opt.ops)
      fixed += n;
    else
      seconds += static_cast<double>(n) * opt.seconds;
  }
  fmt::print("\nDry run: {} trials, {:.1f} s measured ({:.1f} min){}; prefill and process start "
             "come on top. Nothing was run.\n",
             trials, seconds, seconds / 60,
             fixed ? fmt::format(", and {} of fixed work (--ops) whose time is not known before",
                                 fixed)
                   : "");
}

void print_list(const registry& reg, const allocator_info& alloc) {
  fmt::print("Schemes\n");
  std::vector<std::vector<std::string>> schemes = {{"  name", "family", "bounds garbage", "needs"}};
  std::vector<std::vector<std::string>> peers = {{"  name", "family", "containers"}};
  for (const scheme_info& s : reg.schemes()) {
    if (!s.peer.empty()) {
      std::vector<std::string_view> offered;
      for (std::string_view ds : reg.containers())
        if (reg.find(ds, s.name)->supported()) offered.push_back(ds);
      peers.push_back({fmt::format("  {}", s.name), std::string(reclaim::to_string(s.family)),
                       fmt::format("{}", fmt::join(offered, ", "))});
      continue;
    }
    schemes.push_back({fmt::format("  {}", s.name), std::string(reclaim::to_string(s.family)),
                       s.bounds_garbage ? "yes" : "no", needs_text(s.needs)});
  }
  print_aligned(schemes, {false, false, false, false});
  if (peers.size() > 1) {
    fmt::print("\nPeers (other libraries' schemes with their own containers; bench/peers.hpp)\n");
    print_aligned(peers, {false, false, false});
  }

  fmt::print("\nContainers\n");
  std::vector<std::vector<std::string>> containers = {{"  name", "workload"}};
  for (std::string_view ds : reg.containers())
    containers.push_back({fmt::format("  {}", ds), std::string(to_string(reg.workload_of(ds)))});
  print_aligned(containers, {false, false});

  // Each one with the shared object a child would preload, or why it cannot; and the one in
  // effect here with its version.
  fmt::print("\nAllocators\n");
  std::vector<std::vector<std::string>> allocators;
  for (std::string_view name : allocator_names) {
    const allocator_library lib = find_allocator_library(name);
    std::string where = lib.path.empty() ? lib.why_not : lib.path;
    if (name == alloc.name)
      where += fmt::format(" (in effect: {}{}{})", alloc.version, alloc.version.empty() ? "" : " ",
                           alloc.library);
    allocators.push_back({fmt::format("  {}", name), where});
  }
  print_aligned(allocators, {false, false});

  fmt::print("\nApplicability (rows: containers, columns: schemes)\n");
  std::vector<std::vector<std::string>> matrix = {{"  "}};
  for (const scheme_info& s : reg.schemes())
    if (in_matrix(s)) matrix[0].emplace_back(s.name);
  std::vector<const pairing*> refused;
  for (std::string_view ds : reg.containers()) {
    std::vector<std::string>& row = matrix.emplace_back();
    row.push_back(fmt::format("  {}", ds));
    for (const scheme_info& s : reg.schemes()) {
      if (!in_matrix(s)) continue;  // peers: listed above with the containers they offer
      const pairing* p = reg.find(ds, s.name);
      row.emplace_back(p->supported() ? "yes" : "no");
      if (!p->supported()) refused.push_back(p);
    }
  }
  print_aligned(matrix, std::vector<bool>(matrix[0].size(), false));
  if (refused.empty()) {
    fmt::print("\nEvery container supports every scheme.\n");
    return;
  }
  fmt::print("\nWhy not:\n");
  for (const pairing* p : refused)
    fmt::print("  {} does not support {}: {}\n", p->ds, p->scheme, p->why_not);
}

void print_applicability_markdown(const registry& reg) {
  struct column {
    unsigned needs;
    std::vector<std::string_view> schemes;
  };
  std::vector<column> columns;  // in the order their first scheme was registered
  for (const scheme_info& s : reg.schemes()) {
    if (!in_matrix(s)) continue;  // the library's own schemes only
    auto it = std::find_if(columns.begin(), columns.end(),
                           [&](const column& c) { return c.needs == s.needs; });
    if (it == columns.end()) it = columns.insert(columns.end(), column{s.needs, {}});
    it->schemes.push_back(s.name);
  }
  fmt::print("| container |");
  for (const column& c : columns)
    fmt::print(" needs {}: `{}` |", needs_text(c.needs), fmt::join(c.schemes, "`, `"));
  fmt::print("\n|---|");
  for (std::size_t i = 0; i < columns.size(); ++i) fmt::print("---|");
  fmt::print("\n");
  for (std::string_view ds : reg.containers()) {
    fmt::print("| `{}` |", ds);
    for (const column& c : columns) {
      // A container over atomic_rc_ptr is refused by scheme, not by need (reclaim::rc_applies,
      // rc_ptr.hpp): `none` shares its column with schemes it serves.
      std::vector<std::string_view> refused;
      std::string_view why_not;
      for (std::string_view scheme : c.schemes)
        if (const pairing* p = reg.find(ds, scheme); !p->supported()) {
          refused.push_back(scheme);
          why_not = p->why_not;
        }
      if (refused.empty())
        fmt::print(" yes |");
      else if (refused.size() == c.schemes.size())
        fmt::print(" **no**: {} |", why_not);
      else
        fmt::print(" yes, **not** `{}`: {} |", fmt::join(refused, "`, `"), why_not);
    }
    fmt::print("\n");
  }
}

}  // namespace reclaim_bench
