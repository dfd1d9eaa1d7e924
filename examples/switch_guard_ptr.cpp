// SPDX-License-Identifier: MIT
// A configuration read through guard_ptr (paper 003's smart pointers, reclaim/concurrent_ptr.hpp),
// written once: its scheme is the one alias line below and nothing else names it.
// examples/CMakeLists.txt builds this file under debra (epochs), hp (hazard pointers) and he
// (hazard eras), replacing only that line, and checks that under nbr_plus it does not compile, with
// one error that names the container calls to use instead (a guard_ptr outlives read phases,
// which neutralization restarts).
//
// Readers hold the current configuration in a guard_ptr while they check it; a writer replaces it
// and retires the old one through the guard_ptr that held it. Exits non-zero if a reader sees a
// configuration whose fields disagree, or if a replaced one is not freed in the end.
#include <reclaim/reclaim.hpp>

#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

using scheme = reclaim::debra<>;

namespace {

struct config : scheme::node_base {
  explicit config(long v) : version(v), timeout_ms(100 + v), retries(v % 5) {}
  long version, timeout_ms, retries;
};

reclaim::concurrent_ptr<config> current;

// The reader's check: every field derived from the same version.
bool consistent() {
  reclaim::guard_ptr<config, scheme> held;
  held.acquire(current, std::memory_order_acquire);  // pairs with the writer's release CAS
  return held->timeout_ms == 100 + held->version && held->retries == held->version % 5;
}

// Publishes version v and retires the configuration it replaced.
void update(long v) {
  config* fresh = scheme::default_domain().create<config>(v);
  reclaim::guard_ptr<config, scheme> old;
  for (;;) {
    old.acquire(current, std::memory_order_acquire);
    reclaim::concurrent_ptr<config>::pointer expected = old;
    // release: publishes the fresh configuration's fields to the readers' acquire.
    if (current.compare_exchange_strong(expected, fresh, std::memory_order_release,
                                        std::memory_order_relaxed))
      break;
  }
  old.reclaim();  // freed once no reader holds it
}

}  // namespace

int main() {
  constexpr long updates = 2000, readers = 3, reads = 20000;
  current.store(scheme::default_domain().create<config>(0));
  std::atomic<long> torn{0};
  std::vector<std::thread> threads;
  for (long r = 0; r < readers; ++r)
    threads.emplace_back([&] {
      for (long i = 0; i < reads; ++i) torn += !consistent();
    });
  threads.emplace_back([] {
    for (long v = 1; v <= updates; ++v) update(v);
  });
  for (std::thread& t : threads) t.join();

  scheme::default_domain().retire(current.load().get());
  scheme::default_domain().barrier();
  const reclaim::stats s = scheme::default_domain().stats();
  const bool freed = s.retired == updates + 1 && s.freed == s.retired;
  std::printf("switch_guard_ptr under %.*s: %ld torn reads, %llu of %llu configurations freed\n",
              static_cast<int>(scheme::name.size()), scheme::name.data(), torn.load(),
              static_cast<unsigned long long>(s.freed),
              static_cast<unsigned long long>(s.retired));
  return torn == 0 && freed ? 0 : 1;
}
