// A configuration pointer with C++26-shaped hazard pointers (reclaim/std/hazard_pointer.hpp):
// reader threads read the current configuration often, a writer replaces it now and then, and the
// replaced one is deleted once no reader holds it. Run under hp<> and hp_af (hp with an amortized
// free policy). Exits non-zero if a reader sees a torn configuration (fields that disagree) or
// if the scheme did not delete every replaced one; the sanitizer presets also see any read of a
// freed one.
#include <reclaim/free/amortized.hpp>
#include <reclaim/std/hazard_pointer.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

namespace cxx26 = reclaim::cxx26;

// With the default scheme (hp<>) the user writes hazard_pointer_obj_base<config> and
// make_hazard_pointer(), as in the standard; here the scheme is a template parameter.
template <class Scheme>
struct settings {
  // user code: begin
  struct config : cxx26::hazard_pointer_obj_base<config, std::default_delete<config>, Scheme> {
    explicit config(long v) : version(v), timeout_ms(100 + v), retries(v % 5) {}
    long version, timeout_ms, retries;
  };
  std::atomic<config*> current{new config(0)};

  config read() { return *cxx26::make_hazard_pointer<Scheme>().protect(current); }
  void update(long version) { current.exchange(new config(version))->retire(); }
  // user code: end

  ~settings() { current.load()->retire(); }
};

template <class Scheme>
bool run(const char* name) {
  std::atomic<long> torn{0}, reads{0};
  long updates = 0;
  {
    settings<Scheme> s;
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
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
    while (std::chrono::steady_clock::now() < end) {
      s.update(++updates);
      std::this_thread::sleep_for(std::chrono::microseconds(50));  // swapped rarely
    }
    stop = true;
    for (auto& r : readers) r.join();
  }
  // Every configuration was retired (the last by ~settings): after a barrier all are deleted.
  auto& domain = Scheme::default_domain();
  domain.barrier();
  const reclaim::stats st = domain.stats();
  const bool ok = torn.load() == 0 && st.retired == static_cast<std::uint64_t>(updates + 1) &&
                  st.freed == st.retired;
  std::printf("%-6s %ld reads, %ld torn, %ld updates, retired %llu, deleted %llu: %s\n", name,
              reads.load(), torn.load(), updates, static_cast<unsigned long long>(st.retired),
              static_cast<unsigned long long>(st.freed), ok ? "ok" : "FAILED");
  return ok;
}

int main() {
  const bool hp = run<reclaim::hp<>>("hp");
  const bool hp_af = run<reclaim::hp<reclaim::amortized_free<1>>>("hp_af");
  return hp && hp_af ? 0 : 1;
}
