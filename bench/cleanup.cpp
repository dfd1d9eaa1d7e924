// SPDX-License-Identifier: MIT
#include "cleanup.hpp"

#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

#include "usage_error.hpp"

namespace reclaim_bench {
namespace {

// One registered path. `used` is set (release) after the path is written and cleared before it
// is overwritten, and the handler reads the path only after seeing it set (acquire). Registration
// happens on the main thread while no trial thread runs, so a handler that interrupts it runs on
// that same thread.
struct temporary {
  std::atomic<bool> used{false};
  char path[PATH_MAX];
};
constexpr std::size_t max_temporaries = 64;  // two per timeline file
temporary temporaries[max_temporaries];
std::atomic<pid_t> running_child{0};

static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<pid_t>::is_always_lock_free,
              "the signal handler reads them");

constexpr int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGABRT};

// Async-signal-safe only: kill(2), unlink(2), raise(3). SA_RESETHAND has restored the default
// action, so the signal raised again ends the process once the handler returns.
extern "C" void remove_temporaries(int sig) {
  if (const pid_t child = running_child.load(std::memory_order_relaxed); child > 0)
    ::kill(child, SIGTERM);
  for (temporary& t : temporaries)
    if (t.used.load(std::memory_order_acquire)) ::unlink(t.path);
  ::raise(sig);
}

}  // namespace

void remove_temporaries_on_signals() {
  struct sigaction action {};
  action.sa_handler = remove_temporaries;
  action.sa_flags = SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (int sig : cleanup_signals) sigaddset(&action.sa_mask, sig);  // one cleanup at a time
  for (int sig : cleanup_signals) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler != SIG_IGN)
      ::sigaction(sig, &action, nullptr);
  }
}

void remove_on_signal(const std::string& path) {
  if (path.size() >= PATH_MAX)
    throw usage_error(fmt::format("'{}': {}", path, std::strerror(ENAMETOOLONG)));
  for (temporary& t : temporaries) {
    if (t.used.load(std::memory_order_relaxed)) continue;
    std::memcpy(t.path, path.c_str(), path.size() + 1);
    t.used.store(true, std::memory_order_release);
    return;
  }
  throw usage_error(fmt::format("--timeline: more than {} timeline files in one run",
                                max_temporaries / 2));
}

void forget_on_signal(const std::string& path) {
  for (temporary& t : temporaries)
    if (t.used.load(std::memory_order_relaxed) && path == t.path)
      t.used.store(false, std::memory_order_relaxed);
}

void set_running_child(pid_t child) { running_child.store(child, std::memory_order_relaxed); }

void remove_stale_temporaries(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path file(path);
  const std::string prefix = file.filename().string() + ".tmp";
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix) || !entry.is_regular_file(ec)) continue;
    // NAME.tmpPID or NAME.tmpPID.child
    const std::string_view rest = std::string_view(name).substr(prefix.size());
    pid_t pid = 0;
    const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), pid);
    const std::string_view suffix(end, static_cast<std::size_t>(rest.data() + rest.size() - end));
    if (error != std::errc{} || pid <= 0 || !(suffix.empty() || suffix == ".child")) continue;
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive
    if (fs::remove(entry.path(), ec))
      fmt::print(stderr, "reclaim-bench: removed '{}', left by process {}, which has ended\n",
                 entry.path().string(), pid);
  }
}

}  // namespace reclaim_bench
