// SPDX-License-Identifier: MIT
// What the stack and queue examples share: producers push numbered values on a container of `long`
// (a treiber_stack or an ms_queue) while consumers pop them, at once.
#pragma once
#include <atomic>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

// Producer p pushes p x per_producer + 0, 1, 2, ...; consumer c passes each value it pops to
// on_pop(c, value), until every value is popped. Returns how many values were not popped exactly
// once (0 when none was lost or popped twice).
template <class Container, class OnPop>
long push_and_pop(Container& container, int producers, long per_producer, int consumers,
                  OnPop on_pop) {
  const long total = producers * per_producer;
  auto popped = std::make_unique<std::atomic<int>[]>(static_cast<std::size_t>(total));
  std::atomic<long> popped_count{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p)
    threads.emplace_back([&, p] {
      for (long i = 0; i < per_producer; ++i) container.push(p * per_producer + i);
    });
  for (int c = 0; c < consumers; ++c)
    threads.emplace_back([&, c] {
      while (popped_count.load() < total)
        if (std::optional<long> v = container.pop()) {
          on_pop(c, *v);
          ++popped[*v];
          ++popped_count;
        }
    });
  for (std::thread& t : threads) t.join();
  long wrong = 0;
  for (long v = 0; v < total; ++v) wrong += popped[v] != 1;
  return wrong;
}
