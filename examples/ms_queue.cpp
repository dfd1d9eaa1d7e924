// SPDX-License-Identifier: MIT
// Producers enqueue numbered values on a lock-free FIFO queue while consumers dequeue them, under
// hp (hazard pointers) and nbr_plus (neutralization): the same code for both. Exits 1 unless every
// value is dequeued exactly once, each consumer sees each producer's values in the order they were
// pushed, and every node the queue retired is freed in the end.
#include <reclaim/reclaim.hpp>

#include <atomic>
#include <cstdio>

#include "producers_consumers.hpp"

namespace {

template <class Scheme>
bool run(const char* scheme_name) {
  constexpr int producers = 2, consumers = 2;
  constexpr long per_producer = 20000, total = producers * per_producer;
  typename Scheme::domain domain;
  reclaim::ds::ms_queue<long, Scheme> queue(domain);

  // last[c][p]: the last number consumer c dequeued from producer p; FIFO makes it increase.
  long last[consumers][producers] = {{-1, -1}, {-1, -1}};
  std::atomic<long> out_of_order{0};
  const long wrong = push_and_pop(queue, producers, per_producer, consumers, [&](int c, long v) {
    const long producer = v / per_producer, number = v % per_producer;
    out_of_order += number <= last[c][producer];
    last[c][producer] = number;
  });
  domain.barrier();  // frees everything retired so far: the dummy node each dequeue replaced
  const reclaim::stats s = domain.stats();
  const bool ok = wrong == 0 && out_of_order == 0 && queue.empty() && s.retired == total &&
                  s.freed == total;
  std::printf("ms_queue under %-8s %ld values, %ld dequeued once each, %ld out of order, %llu "
              "nodes freed, %s\n",
              scheme_name, total, total - wrong, out_of_order.load(),
              static_cast<unsigned long long>(s.freed), ok ? "ok" : "WRONG");
  return ok;
}

}  // namespace

int main() {
  bool ok = run<reclaim::hp<>>("hp");
  ok &= run<reclaim::nbr_plus<>>("nbr_plus");
  return ok ? 0 : 1;
}
