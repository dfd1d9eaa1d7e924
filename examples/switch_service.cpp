// SPDX-License-Identifier: MIT
// A small service on three containers (sessions: a hash map std::string -> std::string; prices: an
// ordered map; orders: a FIFO queue), written once. Its scheme is the one alias line below and
// nothing else names it: examples/CMakeLists.txt builds this file five times, replacing only that
// line, under debra (epochs), hp (hazard pointers), crystalline_w (wait-free batch reference
// counting), stamp_it and nbr_plus (neutralization). The containers pick what each scheme needs by
// themselves: the hash map restarts its searches from the bucket head under nbr_plus, and the
// skiplist runs on hp, crystalline_w and nbr_plus with a slot per level of its towers.
//
// Four threads each open and close sessions, set and withdraw prices, and place and take orders;
// the program exits non-zero if a thread reads a wrong value, if an order is lost or taken twice,
// or if the final contents are not exactly what the threads left.
#include <reclaim/reclaim.hpp>

#include <atomic>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using scheme = reclaim::debra<>;

namespace {

constexpr long threads = 4, per_thread = 1500;

std::string name_of(long user) { return "customer number " + std::to_string(user); }

struct service {
  reclaim::ds::hm_hashmap<std::string, std::string, scheme> sessions;
  reclaim::ds::lazy_skiplist_map<long, long, scheme> prices;
  reclaim::ds::ms_queue<long, scheme> orders;

  // What thread t does: open a session per user and close every third, price every item and
  // withdraw every fourth price, place an order per item and take one per other item. Returns
  // the wrong answers it saw; counts the orders it took in taken_sum and taken_count.
  long work(long t, std::atomic<long>& taken_sum, std::atomic<long>& taken_count) {
    long wrong = 0;
    for (long i = 0; i < per_thread; ++i) {
      const long id = t * per_thread + i;
      const std::string user = "user:" + std::to_string(id);
      wrong += !sessions.insert(user, name_of(id));
      wrong += sessions.find(user) != name_of(id);
      if (id % 3 == 0) wrong += !sessions.erase(user);
      wrong += !prices.insert(id, 3 * id);
      bool priced = false;
      prices.visit(id, [&](long price) { priced = price == 3 * id; });
      wrong += !priced;
      if (id % 4 == 0) wrong += !prices.erase(id);
      orders.push(id);
      if (i % 2 == 1)
        if (std::optional<long> order = orders.pop()) {
          taken_sum += *order;
          ++taken_count;
        }
    }
    return wrong;
  }
};

// Whether everything the container's domain retired has been freed, after a barrier.
template <class Container>
bool all_freed() {
  auto& domain = Container::scheme_type::default_domain();
  domain.barrier();
  const reclaim::stats s = domain.stats();
  return s.freed == s.retired;
}

}  // namespace

int main() {
  long wrong = 0;
  std::atomic<long> wrong_seen{0}, taken_sum{0}, taken_count{0};
  {
    service svc;
    std::vector<std::thread> workers;
    for (long t = 0; t < threads; ++t)
      workers.emplace_back([&, t] { wrong_seen += svc.work(t, taken_sum, taken_count); });
    for (std::thread& w : workers) w.join();
    wrong += wrong_seen;

    // Every order placed is taken exactly once: by a worker or by this drain.
    while (std::optional<long> order = svc.orders.pop()) {
      taken_sum += *order;
      ++taken_count;
    }
    const long ids = threads * per_thread;
    wrong += taken_count != ids || taken_sum != ids * (ids - 1) / 2;
    // The sessions and prices left are exactly those not closed or withdrawn, with their values
    // (unsafe_for_each walks a container unprotected: the workers have all finished).
    long sessions = 0, prices = 0;
    svc.sessions.unsafe_for_each([&](const std::string& user, const std::string& name) {
      const long id = std::stol(user.substr(5));
      wrong += id % 3 == 0 || name != name_of(id);
      ++sessions;
    });
    svc.prices.unsafe_for_each([&](long id, long price) {
      wrong += id % 4 == 0 || price != 3 * id;
      ++prices;
    });
    wrong += sessions != ids - (ids + 2) / 3 || prices != ids - (ids + 3) / 4;
  }
  const bool freed = all_freed<decltype(service::sessions)>() &&
                     all_freed<decltype(service::prices)>() &&
                     all_freed<decltype(service::orders)>();
  std::printf("switch_service under %.*s: %ld wrong answers, %s\n",
              static_cast<int>(scheme::name.size()), scheme::name.data(), wrong,
              freed ? "everything retired was freed" : "GARBAGE LEFT");
  return wrong == 0 && freed ? 0 : 1;
}
