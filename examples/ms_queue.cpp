// Producers enqueue numbered values on a lock-free FIFO queue while consumers dequeue them, under
// hp (hazard pointers) and nbr_plus (neutralization): the same code for both. Exits 1 unless every
// value is dequeued exactly once, each consumer sees each producer's values in the order they were
// pushed, and every node the queue retired is freed in the end.
#include <reclaim/reclaim.hpp>

#include <atomic>
#include <cstdio>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

namespace {

template <class Scheme>
bool run(const char* scheme_name) {
  constexpr int producers = 2, consumers = 2;
  constexpr long per_producer = 20000, total = producers * per_producer;
  typename Scheme::domain domain;
  reclaim::ds::ms_queue<long, Scheme> queue(domain);

  // popped[v]: how many times value v was dequeued; a value must come out exactly once.
  auto popped = std::make_unique<std::atomic<int>[]>(total);
  std::atomic<long> popped_count{0}, out_of_order{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p)
    threads.emplace_back([&, p] {
      for (long i = 0; i < per_producer; ++i) queue.push(p * per_producer + i);
    });
  for (int c = 0; c < consumers; ++c)
    threads.emplace_back([&] {
      long last[producers] = {-1, -1};  // the last number this consumer saw from each producer
      while (popped_count.load() < total)
        if (std::optional<long> v = queue.pop()) {
          const long producer = *v / per_producer, number = *v % per_producer;
          out_of_order += number <= last[producer];
          last[producer] = number;
          ++popped[*v];
          ++popped_count;
        }
    });
  for (std::thread& t : threads) t.join();

  long wrong = 0;
  for (long v = 0; v < total; ++v) wrong += popped[v] != 1;
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
