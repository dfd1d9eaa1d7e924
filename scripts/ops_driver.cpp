// SPDX-License-Identifier: MIT
// Runs N operations (50% inserts, 50% erases, keys from one xorshift stream) on one container
// under one scheme, on one thread: the workload scripts/instructions-per-op.sh counts with
// callgrind. Usage: ops_driver CONTAINER SCHEME N, CONTAINER hm_hashmap (20K keys), lazy_list,
// hm_list or guarded_hm_list (1K keys), or ms_queue or guarded_ms_queue (pushes and pops, 500
// values prefilled).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include <reclaim/reclaim.hpp>

namespace {

// The int64 sets the lab runs, as templates of the scheme alone.
template <class Scheme>
using int64_hm_hashset = reclaim::ds::hm_hashset<std::int64_t, Scheme>;
template <class Scheme>
using int64_lazy_list = reclaim::ds::lazy_list<std::int64_t, Scheme>;
template <class Scheme>
using int64_hm_list = reclaim::ds::hm_list<std::int64_t, Scheme>;
template <class Scheme>
using int64_guarded_hm_list = reclaim::ds::guarded_hm_list<std::int64_t, Scheme>;
template <class Scheme>
using int64_ms_queue = reclaim::ds::ms_queue<std::int64_t, Scheme>;
template <class Scheme>
using int64_guarded_ms_queue = reclaim::ds::guarded_ms_queue<std::int64_t, Scheme>;

// A queue as the driver runs a set: insert pushes the key, erase pops (whether it found a value).
template <template <class> class Queue>
struct as_set {
  template <class Scheme>
  struct type : Queue<Scheme> {
    using base = Queue<Scheme>;
    using base::base;
    bool insert(long v) {
      this->push(v);
      return true;
    }
    bool erase(long) { return this->pop().has_value(); }
  };
};

template <template <class> class Container, class Scheme>
long run(long n, unsigned long keys) {
  if constexpr (!reclaim::protects<Scheme, Container<Scheme>>) {
    std::fprintf(stderr, "ops_driver: %s does not support %s\n", Container<Scheme>::name.data(),
                 Scheme::name.data());
    std::exit(2);
  } else {
    typename Scheme::domain domain;
    Container<Scheme> set(domain);
    unsigned long x = 88172645463325252ull;
    auto next = [&] {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      return x;
    };
    for (unsigned long i = 0; i < keys / 2; ++i) set.insert(static_cast<long>(next() % keys));
    long hits = 0;
    for (long i = 0; i < n; ++i) {
      const auto key = static_cast<long>(next() % keys);
      hits += (next() & 1) ? set.insert(key) : set.erase(key);
    }
    return hits;
  }
}

template <template <class> class Container>
long run_scheme(std::string_view scheme, long n, unsigned long keys) {
  if (scheme == "none") return run<Container, reclaim::none>(n, keys);
  if (scheme == "debra") return run<Container, reclaim::debra<>>(n, keys);
  if (scheme == "ebr") return run<Container, reclaim::ebr<>>(n, keys);
  if (scheme == "qsbr") return run<Container, reclaim::qsbr<>>(n, keys);
  if (scheme == "hp") return run<Container, reclaim::hp<>>(n, keys);
  if (scheme == "token_af") return run<Container, reclaim::token_af<>>(n, keys);
  if (scheme == "nbr_plus") return run<Container, reclaim::nbr_plus<>>(n, keys);
  // The defaults sweep's epoch intervals (experiments/defaults_sweep.toml).
  if (scheme == "ner") return run<Container, reclaim::ner<>>(n, keys);
  if (scheme == "ebr_k1") return run<Container, reclaim::ebr<reclaim::advance_every<1>>>(n, keys);
  if (scheme == "ebr_k16") return run<Container, reclaim::ebr<reclaim::advance_every<16>>>(n, keys);
  if (scheme == "ebr_k64") return run<Container, reclaim::ebr<reclaim::advance_every<64>>>(n, keys);
  if (scheme == "qsbr_k1") return run<Container, reclaim::qsbr<reclaim::advance_every<1>>>(n, keys);
  if (scheme == "qsbr_k16")
    return run<Container, reclaim::qsbr<reclaim::advance_every<16>>>(n, keys);
  if (scheme == "qsbr_k64")
    return run<Container, reclaim::qsbr<reclaim::advance_every<64>>>(n, keys);
  if (scheme == "debra_c1") return run<Container, reclaim::debra<reclaim::check_every<1>>>(n, keys);
  if (scheme == "debra_c80")
    return run<Container, reclaim::debra<reclaim::check_every<80>>>(n, keys);
  std::fprintf(stderr,
               "ops_driver: unknown scheme '%.*s' (none, debra, ebr, qsbr, hp, token_af, nbr_plus; "
               "ner, ebr_k1, ebr_k16, ebr_k64, qsbr_k1, qsbr_k16, qsbr_k64, debra_c1, debra_c80)\n",
               static_cast<int>(scheme.size()), scheme.data());
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: ops_driver CONTAINER SCHEME N (see the comment at the top)\n");
    return 2;
  }
  const std::string_view container = argv[1];
  const long n = std::atol(argv[3]);
  long hits = 0;
  if (container == "hm_hashmap")
    hits = run_scheme<int64_hm_hashset>(argv[2], n, 20000);
  else if (container == "lazy_list")
    hits = run_scheme<int64_lazy_list>(argv[2], n, 1000);
  else if (container == "hm_list")
    hits = run_scheme<int64_hm_list>(argv[2], n, 1000);
  else if (container == "guarded_hm_list")
    hits = run_scheme<int64_guarded_hm_list>(argv[2], n, 1000);
  else if (container == "ms_queue")
    hits = run_scheme<as_set<int64_ms_queue>::type>(argv[2], n, 1000);
  else if (container == "guarded_ms_queue")
    hits = run_scheme<as_set<int64_guarded_ms_queue>::type>(argv[2], n, 1000);
  else {
    std::fprintf(stderr,
                 "ops_driver: unknown container '%s' (hm_hashmap, lazy_list, hm_list, "
                 "guarded_hm_list, ms_queue, guarded_ms_queue)\n",
                 argv[1]);
    return 2;
  }
  std::printf("%ld\n", hits);
  return 0;
}
