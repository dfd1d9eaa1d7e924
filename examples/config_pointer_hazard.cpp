// SPDX-License-Identifier: MIT
// A configuration pointer with C++26-shaped hazard pointers (reclaim/std/hazard_pointer.hpp):
// reader threads read the current configuration often, a writer replaces it now and then, and the
// replaced one is deleted once no reader holds it. Run under hp<> and hp_af (hp with an amortized
// free policy). Exits non-zero if a reader sees a torn configuration (fields that disagree) or
// if the scheme did not delete every replaced one; the sanitizer presets also see any read of a
// freed one.
#include <reclaim/free/amortized.hpp>
#include <reclaim/std/hazard_pointer.hpp>

#include <atomic>
#include <memory>

#include "config_pointer_check.hpp"

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
  auto barrier = [] { Scheme::default_domain().barrier(); };
  return check_config_pointer<settings, Scheme>(name, barrier);
}

int main() {
  const bool hp = run<reclaim::hp<>>("hp");
  const bool hp_af = run<reclaim::hp<reclaim::amortized_free<1>>>("hp_af");
  return hp && hp_af ? 0 : 1;
}
