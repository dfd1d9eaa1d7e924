// SPDX-License-Identifier: MIT
// A configuration pointer in the std::shared_ptr style, with reclaim/rc_ptr.hpp: readers read the
// current configuration through a snapshot (no count touched), a writer stores a new one, and the
// replaced one is destroyed once no reader holds it. The same lines as with
// std::atomic<std::shared_ptr<config>>, but lock-free. Run under the default scheme (hp_af)
// and under debra.
// Exits non-zero if a reader sees a torn configuration or if a replaced one was not freed; the
// sanitizer presets also see any read of a freed one.
#include <reclaim/rc_ptr.hpp>
#include <reclaim/schemes/debra.hpp>

#include "config_pointer_check.hpp"

template <class Scheme>
struct settings {
  // user code: begin
  struct config {
    long version, timeout_ms, retries;
  };
  reclaim::atomic_rc_ptr<config, Scheme> current{reclaim::make_rc<config, Scheme>(0, 100, 0)};

  config read() { return *current.get_snapshot(); }
  void update(long v) { current.store(reclaim::make_rc<config, Scheme>(v, 100 + v, v % 5)); }
  // user code: end

  ~settings() { current.store(nullptr); }  // retired as every replaced one, for the check
};

template <class Scheme>
bool run(const char* name) {
  auto barrier = [] { Scheme::default_domain().barrier(); };
  return check_config_pointer<settings, Scheme>(name, barrier);
}

int main() {
  const bool hp = run<reclaim::default_rc_scheme>("hp_af");
  const bool debra = run<reclaim::debra<>>("debra");
  return hp && debra ? 0 : 1;
}
