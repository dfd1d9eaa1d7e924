// Producers push numbered values on a lock-free stack while consumers pop them, under debra
// (epochs) and hp (hazard pointers): the same code for both. Exits 1 unless every value pushed is
// popped exactly once and every popped node is freed in the end.
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
  reclaim::ds::treiber_stack<long, Scheme> stack(domain);

  // popped[v]: how many times value v was popped; a value must come out exactly once.
  auto popped = std::make_unique<std::atomic<int>[]>(total);
  std::atomic<long> popped_count{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p)
    threads.emplace_back([&, p] {
      for (long i = 0; i < per_producer; ++i) stack.push(p * per_producer + i);
    });
  for (int c = 0; c < consumers; ++c)
    threads.emplace_back([&] {
      while (popped_count.load() < total)
        if (std::optional<long> v = stack.pop()) {
          ++popped[*v];
          ++popped_count;
        }
    });
  for (std::thread& t : threads) t.join();

  long wrong = 0;
  for (long v = 0; v < total; ++v) wrong += popped[v] != 1;
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
