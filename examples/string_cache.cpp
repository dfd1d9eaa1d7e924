// SPDX-License-Identifier: MIT
// A read-through cache from std::string to std::string on a lock-free hash map, shared by threads
// that get, fill and evict entries at once. The cache is written once, for any scheme; main runs it
// under debra (epochs), hp (hazard pointers) and nbr_plus (neutralization, under which hm_hashmap
// restarts its read phases from the bucket head by itself). Exits 1 if a get ever
// returns a wrong value or if what the threads evicted is not all freed in the end.
#include <reclaim/reclaim.hpp>

#include <atomic>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

// The slow source the cache stands in front of. Long enough to live on the heap, so that reading
// a freed value would be caught by AddressSanitizer.
std::string load(const std::string& key) { return "the value loaded for " + key; }

template <class Map>
class string_cache {
 public:
  explicit string_cache(typename Map::domain_type& domain) : map_(domain, 1024) {}

  // The cached value, or the loaded one, cached for the next get. find() copies the value while
  // its node is protected, so the copy is valid even if another thread evicts the key right after.
  std::string get(const std::string& key) {
    if (std::optional<std::string> hit = map_.find(key)) return *hit;
    std::string value = load(key);
    map_.insert(key, value);  // false if another thread cached it first (with the same value)
    return value;
  }
  // Returns whether the key was cached; its node is retired, freed once no get can read it.
  bool evict(const std::string& key) { return map_.erase(key); }

  Map& map() { return map_; }

 private:
  Map map_;
};

template <class Map>
bool run(const char* scheme_name) {
  typename Map::domain_type domain;
  string_cache<Map> cache(domain);
  constexpr int threads = 4, gets_per_evict = 4, keys = 256;
  constexpr long ops = 20000;
  std::atomic<long> wrong{0}, evicted{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      for (long i = 0; i < ops; ++i) {
        const std::string key = "key-" + std::to_string((i * 7 + t * 13) % keys);
        if (i % (gets_per_evict + 1) == 0)
          evicted += cache.evict(key);
        else
          wrong += cache.get(key) != load(key);
      }
    });
  for (std::thread& w : workers) w.join();

  cache.map().for_each([&](const std::string& key, const std::string& value) {
    wrong += value != load(key);
  });
  domain.barrier();  // frees everything retired so far: every evicted entry
  const reclaim::stats s = domain.stats();
  const bool ok = wrong == 0 && s.retired == static_cast<std::uint64_t>(evicted.load()) &&
                  s.freed == s.retired;
  std::printf("string_cache under %-8s %ld evictions, %llu entries freed, %zu cached, %s\n",
              scheme_name, evicted.load(), static_cast<unsigned long long>(s.freed),
              cache.map().size(), ok ? "every value right" : "WRONG");
  return ok;
}

template <class Scheme>
using map = reclaim::ds::hm_hashmap<std::string, std::string, Scheme>;

}  // namespace

int main() {
  bool ok = run<map<reclaim::debra<>>>("debra");
  ok &= run<map<reclaim::hp<>>>("hp");
  ok &= run<map<reclaim::nbr_plus<>>>("nbr_plus");
  return ok ? 0 : 1;
}
