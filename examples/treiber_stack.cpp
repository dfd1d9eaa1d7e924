// SPDX-License-Identifier: MIT
// Producers push numbered values on a lock-free stack while consumers pop them, under debra
// (epochs) and hp (hazard pointers): the same code for both. Exits 1 unless every value pushed is
// popped exactly once and every popped node is freed in the end.
#include <reclaim/reclaim.hpp>

#include <cstdio>

#include "producers_consumers.hpp"

namespace {

template <class Scheme>
bool run(const char* scheme_name) {
  constexpr int producers = 2, consumers = 2;
  constexpr long per_producer = 20000, total = producers * per_producer;
  typename Scheme::domain domain;
  reclaim::ds::treiber_stack<long, Scheme> stack(domain);

  const long wrong = push_and_pop(stack, producers, per_producer, consumers, [](int, long) {});
  domain.barrier();  // frees everything retired so far: every popped node
  const reclaim::stats s = domain.stats();
  const bool ok = wrong == 0 && stack.empty() && s.retired == total && s.freed == total;
  std::printf("treiber_stack under %-5s %ld values pushed, %ld popped once each, %llu nodes "
              "freed, %s\n",
              scheme_name, total, total - wrong, static_cast<unsigned long long>(s.freed),
              ok ? "ok" : "WRONG");
  return ok;
}

}  // namespace

int main() {
  bool ok = run<reclaim::debra<>>("debra");
  ok &= run<reclaim::hp<>>("hp");
  return ok ? 0 : 1;
}
