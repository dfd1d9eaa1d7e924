// SPDX-License-Identifier: MIT
#include "child.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <system_error>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cleanup.hpp"
#include "thread_failure.hpp"
#include "timeline_file.hpp"

extern char** environ;

namespace reclaim_bench {
namespace {

// Every field of a trial_result with its name, for both directions of the pipe: one list, so the
// two sides cannot drift apart.
template <class Result, class Visit>
void each_field(Result& r, Visit&& visit) {
  visit("ops", r.ops);
  visit("seconds", r.seconds);
  visit("peak_rss_bytes", r.peak_rss_bytes);
  visit("rss_bytes", r.rss_bytes);
  visit("expected_size", r.expected_size);
  visit("expected_key_sum", r.expected_key_sum);
  visit("final_size", r.final_size);
  visit("final_key_sum", r.final_key_sum);
  visit("well_formed", r.well_formed);
  visit("retired", r.stats.retired);
  visit("freed", r.stats.freed);
  visit("pending", r.stats.pending);
  visit("pending_peak", r.stats.pending_peak);
  visit("epochs", r.stats.epochs);
  visit("scans", r.stats.scans);
  visit("signals", r.stats.signals);
  visit("fallbacks", r.stats.fallbacks);
  visit("free_ns", r.stats.free_ns);
  visit("scan_ns", r.stats.scan_ns);
  visit("wide_cas", r.stats.wide_cas);
  visit("wide_cas_failed", r.stats.wide_cas_failed);
  visit("threads", r.stats.threads);
  visit("records", r.stats.records);
  visit("longest_pause_ns", r.stats.longest_pause_ns);
  visit("latency_samples", r.latency.samples);
  visit("latency_p50_ns", r.latency.p50);
  visit("latency_p99_ns", r.latency.p99);
  visit("latency_p999_ns", r.latency.p999);
  visit("latency_max_ns", r.latency.max);
  visit("timeline_events", r.timeline_events);
  visit("timeline_dropped", r.timeline_dropped);
}

// The memory samples travel as [t_ms, pending, rss_bytes, ops] arrays.
nlohmann::json result_to_json(const trial_result& r) {
  nlohmann::json j = nlohmann::json::object();
  each_field(r, [&](const char* name, const auto& value) { j[name] = value; });
  nlohmann::json& samples = j["samples"] = nlohmann::json::array();
  for (const memory_sample& s : r.samples)
    samples.push_back({s.t_ms, s.pending, s.rss_bytes, s.ops});
  return j;
}

trial_result result_from_json(const nlohmann::json& j) {
  trial_result r;
  each_field(r, [&](const char* name, auto& value) { j.at(name).get_to(value); });
  for (const nlohmann::json& s : j.at("samples"))
    r.samples.push_back({s.at(0).get<double>(), s.at(1).get<std::uint64_t>(),
                         s.at(2).get<std::uint64_t>(), s.at(3).get<std::uint64_t>()});
  return r;
}

// The entry of allocator_names spelled `name`, or "unknown".
std::string_view known_name(std::string_view name) {
  for (std::string_view a : allocator_names)
    if (a == name) return a;
  return "unknown";
}

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::system_error(errno, std::generic_category(), "writing to the parent");
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

std::string read_all(int fd) {
  std::string text;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::system_error(errno, std::generic_category(), "reading from a child");
    if (n == 0) return text;
    text.append(buffer, static_cast<std::size_t>(n));
  }
}

// This process's environment with `preload` put first in LD_PRELOAD (other preloads stay after
// it; the first one that defines malloc is the one in effect).
std::vector<std::string> child_environment(const std::string& preload) {
  std::vector<std::string> env;
  std::string preloads = preload;
  for (char** e = environ; *e; ++e) {
    std::string_view var = *e;
    if (var.starts_with("LD_PRELOAD=")) {
      var.remove_prefix(std::strlen("LD_PRELOAD="));
      if (var.empty()) continue;
      if (!preloads.empty()) preloads += ':';
      preloads += var;
    } else {
      env.emplace_back(var);
    }
  }
  if (!preloads.empty()) env.push_back("LD_PRELOAD=" + preloads);
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> p;
  for (std::string& s : strings) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

std::string exit_text(int status) {
  if (WIFSIGNALED(status))
    return fmt::format("the child process was killed by signal {} ({})", WTERMSIG(status),
                       ::strsignal(WTERMSIG(status)));
  return fmt::format("the child process exited with status {}", WEXITSTATUS(status));
}

}  // namespace

child_outcome run_in_child(const trial_config& c, std::string_view alloc,
                           const std::string& preload, const std::string& timeline_rows) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw std::system_error(errno, std::generic_category(), "creating a pipe");
  // The write end stays open across the exec: it is the child's --child-fd. The read end does not.
  ::fcntl(fds[1], F_SETFD, 0);

  std::vector<std::string> args = {"reclaim-bench",
                                   "--ds", std::string(c.ds),
                                   "--scheme", std::string(c.scheme),
                                   "--alloc", std::string(alloc),
                                   "--threads", std::to_string(c.threads),
                                   c.ops_per_thread ? "--ops" : "--seconds",
                                   c.ops_per_thread ? std::to_string(c.ops_per_thread)
                                                    : fmt::format("{}", c.seconds),  // round-trips
                                   "--keys", std::to_string(c.keys),
                                   "--insert", std::to_string(c.insert_pct),
                                   "--delete", std::to_string(c.delete_pct),
                                   c.prefill ? "--prefill" : "--no-prefill",
                                   c.pairs ? "--pairs" : "--no-pairs",
                                   "--region-ops", std::to_string(c.region_ops),
                                   "--seed", std::to_string(c.seed),
                                   "--stall", std::to_string(c.stall),
                                   "--sample-ms", std::to_string(c.sample_ms),
                                   "--child-trial", std::to_string(c.trial),
                                   "--child-fd", std::to_string(fds[1])};
  if (c.timeline_capacity > 0)
    args.insert(args.end(), {"--child-timeline", timeline_rows,
                             "--timeline-capacity", std::to_string(c.timeline_capacity),
                             "--slow-free-us", std::to_string(c.slow_free_ns / 1'000)});
  std::vector<std::string> env = child_environment(preload);
  std::vector<char*> argv = pointers(args), envp = pointers(env);

  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(),
                                    envp.data());
  ::close(fds[1]);  // the child holds the only write end now: EOF when it exits
  std::string reply;
  try {
    if (spawned != 0)
      throw std::system_error(spawned, std::generic_category(), "starting a child process");
    set_running_child(pid);  // a signal that ends the lab ends the child too
    reply = read_all(fds[0]);
  } catch (...) {
    set_running_child(0);
    ::close(fds[0]);
    if (spawned == 0) ::waitpid(pid, nullptr, 0);
    throw;
  }
  set_running_child(0);  // before waitpid() reaps it: its pid may then be reused
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }

  child_outcome outcome;
  const nlohmann::json j = nlohmann::json::parse(reply, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("output_error")) {
    // Writing the run's output (the timeline rows) failed: that ends the run, as it does when
    // the trial runs in this process.
    throw std::runtime_error(j["output_error"].get<std::string>());
  } else if (j.is_object() && j.contains("error")) {
    outcome.error = j["error"].get<std::string>();
  } else if (j.is_object() && j.contains("result")) {
    try {
      outcome.result = result_from_json(j.at("result"));
      outcome.alloc = {known_name(j.at("alloc").get<std::string>()),
                       j.at("alloc_version").get<std::string>(),
                       j.at("alloc_lib").get<std::string>()};
    } catch (const std::exception& e) {
      outcome.error = fmt::format("malformed reply from the child process: {}", e.what());
    }
  } else if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
    outcome.error = exit_text(status);
  } else {
    outcome.error = "the child process sent no result";
  }
  if (outcome.error.empty() && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
    outcome.error = exit_text(status);
  return outcome;
}

int child_main(const options& opt, const registry& reg) {
  nlohmann::json reply;
  int status = 0;
  try {
    // The allocator is checked before the trial runs: a trial under the wrong malloc is not run.
    const allocator_info found = detect_allocator();
    if (found.name != opt.allocs[0]) {
      reply = {{"error", fmt::format("requested {}, but the allocator in effect is {} ({})",
                                     opt.allocs[0], found.name,
                                     found.library.empty() ? "library unknown" : found.library)}};
      status = 1;
    } else {
      const pairing& pair = *reg.find(opt.ds[0], opt.schemes[0]);  // validated
      const trial_config config = make_trial_config(opt, pair, opt.threads[0], opt.child_trial);
      const trial_result r = pair.run(config);
      try {
        if (!opt.child_timeline.empty())
          write_timeline_rows(opt.child_timeline,
                              {config.ds, config.scheme, found.name, config.threads, config.trial},
                              r);
        reply = {{"alloc", found.name},
                 {"alloc_version", found.version},
                 {"alloc_lib", found.library},
                 {"result", result_to_json(r)}};
      } catch (const std::system_error& e) {  // the run's output failed, not the trial
        reply = {{"output_error", e.what()}};
        status = 1;
      }
    }
  } catch (const std::exception& e) {
    reply = {{"error", failure_text(e)}};
    status = 1;
  }
  write_all(opt.child_fd, reply.dump());
  ::close(opt.child_fd);
  return status;
}

}  // namespace reclaim_bench
