// SPDX-License-Identifier: MIT
// A user of reclaim (however it got it): two threads on a lazy list under DEBRA.
#include <reclaim/reclaim.hpp>

#include <cstdio>
#include <thread>

int main() {
  using scheme = reclaim::debra<>;
  scheme::domain domain;
  std::int64_t expected = 0;
  {
    reclaim::ds::lazy_list<std::int64_t, scheme> set(domain);
    auto work = [&set](std::int64_t first) {
      for (std::int64_t k = first; k < 1000; k += 2) set.insert(k);
      for (std::int64_t k = first; k < 1000; k += 4) set.erase(k);
    };
    std::thread a(work, 0), b(work, 1);
    a.join();
    b.join();
    for (std::int64_t k = 0; k < 1000; ++k)
      if (k % 4 >= 2) expected += k;
    if (set.unsafe_key_sum() != expected || !set.unsafe_well_formed()) {
      std::puts("consumer: wrong contents");
      return 1;
    }
  }
  reclaim::stats s = domain.stats();
  std::printf("consumer: ok, retired %llu\n", static_cast<unsigned long long>(s.retired));
  return s.retired == 500 ? 0 : 1;
}
