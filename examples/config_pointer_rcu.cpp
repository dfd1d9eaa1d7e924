// SPDX-License-Identifier: MIT
// A configuration pointer with C++26-shaped RCU (reclaim/std/rcu.hpp): reader threads read the
// current configuration often inside a region of RCU protection (std::scoped_lock on the domain),
// a writer replaces it now and then, and the replaced one is deleted once every region that may
// read it has ended. Run under debra<> (the default) and qsbr<> (reader regions announce nothing;
// the end of a thread's outermost region is its quiescent state). Exits non-zero if a reader sees
// a torn configuration (fields that disagree) or if the scheme did not delete every replaced one;
// the sanitizer presets also see any read of a freed one.
#include <reclaim/std/rcu.hpp>
#include <reclaim/schemes/qsbr.hpp>

#include <atomic>
#include <memory>
#include <mutex>

#include "config_pointer_check.hpp"

namespace cxx26 = reclaim::cxx26;

// With the default scheme (debra<>) the user writes rcu_obj_base<config> and
// rcu_default_domain(), as in the standard; here the scheme is a template parameter.
template <class Scheme>
struct settings {
  // user code: begin
  struct config : cxx26::rcu_obj_base<config, std::default_delete<config>, Scheme> {
    explicit config(long v) : version(v), timeout_ms(100 + v), retries(v % 5) {}
    long version, timeout_ms, retries;
  };
  std::atomic<config*> current{new config(0)};

  config read() {
    std::scoped_lock region(cxx26::rcu_default_domain<Scheme>());
    return *current.load(std::memory_order_acquire);
  }
  void update(long version) { current.exchange(new config(version))->retire(); }
  // user code: end

  ~settings() { current.load()->retire(); }
};

template <class Scheme>
bool run(const char* name) {
  auto barrier = [] { cxx26::rcu_barrier(cxx26::rcu_default_domain<Scheme>()); };
  return check_config_pointer<settings, Scheme>(name, barrier);
}

int main() {
  const bool debra = run<reclaim::debra<>>("debra");
  const bool qsbr = run<reclaim::qsbr<>>("qsbr");
  return debra && qsbr ? 0 : 1;
}
