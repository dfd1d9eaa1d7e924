// SPDX-License-Identifier: MIT
// What both config-pointer examples run and check, so that each example file shows only its
// facade: three reader threads read the configuration in a loop and check its fields, a writer
// thread replaces it every 50 microseconds for 200 ms, and afterwards a barrier must leave every
// configuration deleted.
#pragma once
#include <reclaim/core/stats.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

// Settings<Scheme>: read() returns a copy of the current configuration (version, timeout_ms,
// retries, which agree: timeout_ms = 100 + version, retries = version % 5), update(version)
// replaces it, and its destructor retires the last one. barrier() waits until everything retired
// was deleted. Prints one line; returns false if a reader saw a torn configuration or if the
// scheme's stats do not show every configuration deleted.
template <template <class> class Settings, class Scheme, class Barrier>
bool check_config_pointer(const char* name, Barrier barrier) {
  std::atomic<long> torn{0}, reads{0};
  long updates = 0;
  {
    Settings<Scheme> s;
    std::atomic<bool> stop{false};
    std::vector<std::thread> readers;
    for (int t = 0; t < 3; ++t) {
      readers.emplace_back([&] {
        for (; !stop.load(std::memory_order_relaxed); reads.fetch_add(1)) {
          const auto c = s.read();
          if (c.timeout_ms != 100 + c.version || c.retries != c.version % 5) torn.fetch_add(1);
        }
      });
    }
    // The writer is a thread of its own, which exits before the barrier: under qsbr a live thread
    // that stops using the domain would hold every grace period.
    std::thread writer([&] {
      const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
      while (std::chrono::steady_clock::now() < end) {
        s.update(++updates);
        std::this_thread::sleep_for(std::chrono::microseconds(50));  // swapped rarely
      }
    });
    writer.join();
    stop = true;
    for (auto& r : readers) r.join();
  }
  // Every configuration was retired (the last by ~Settings): after a barrier all are deleted.
  barrier();
  const reclaim::stats st = Scheme::default_domain().stats();
  const bool ok = torn.load() == 0 && st.retired == static_cast<std::uint64_t>(updates + 1) &&
                  st.freed == st.retired;
  std::printf("%-6s %ld reads, %ld torn, %ld updates, retired %llu, deleted %llu: %s\n", name,
              reads.load(), torn.load(), updates, static_cast<unsigned long long>(st.retired),
              static_cast<unsigned long long>(st.freed), ok ? "ok" : "FAILED");
  return ok;
}
