#include "memory.hpp"

#include <fstream>
#include <string>
#include <string_view>

namespace reclaim_bench {
namespace {

// The value of a "Name:   1234 kB" line of /proc/self/status, in bytes.
std::uint64_t status_kib_field(std::string_view field) noexcept {
  try {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
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

std::uint64_t peak_rss_bytes() noexcept { return status_kib_field("VmHWM"); }
std::uint64_t rss_bytes() noexcept { return status_kib_field("VmRSS"); }

}  // namespace reclaim_bench
