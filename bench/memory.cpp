// SPDX-License-Identifier: MIT
#include "memory.hpp"

#include <fstream>
#include <string>
#include <string_view>

namespace reclaim_bench {
namespace {

// The value of a "Name:   1234 kB" line of `file` (/proc/self/status, /proc/meminfo), in bytes.
std::uint64_t kib_field(const char* file, std::string_view field) noexcept {
  try {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
      if (line.starts_with(field) && line.size() > field.size() && line[field.size()] == ':')
        return std::stoull(line.substr(field.size() + 1)) * 1024;
    }
  } catch (...) {
    // Unreadable or malformed: report unknown.
  }
  return 0;
}

}  // namespace

void reset_peak_rss() noexcept {
  std::ofstream clear_refs("/proc/self/clear_refs");
  clear_refs << "5";
}

std::uint64_t peak_rss_bytes() noexcept { return kib_field("/proc/self/status", "VmHWM"); }
std::uint64_t rss_bytes() noexcept { return kib_field("/proc/self/status", "VmRSS"); }
std::uint64_t address_space_bytes() noexcept { return kib_field("/proc/self/status", "VmSize"); }
std::uint64_t available_memory_bytes() noexcept {
  return kib_field("/proc/meminfo", "MemAvailable");
}

}  // namespace reclaim_bench
