// SPDX-License-Identifier: MIT
// Peers in the lab: other libraries' reclamation schemes with their own containers of the same
// algorithms, run through the same workload as our pairs (set_workload in trial.hpp: the same
// prefill, key stream, validation and JSON line), so that a ratio of ours to theirs compares the
// schemes and their implementations, not two harnesses. They are built when the distribution's
// packages are installed (bench/CMakeLists.txt says which are on); peers_xenium.cpp and
// peers_libcds.cpp register them, named LIBRARY:SCHEME (xenium:ebr, libcds:hp); peers_urcu.cpp
// and peers_ck.cpp run liburcu's and Concurrency Kit's schemes, which come without such
// containers, under ours written over their APIs (peers_hm.hpp).
//
// A peer's container is wrapped in a set with our containers' interface (insert, erase, contains,
// unsafe_size, unsafe_key_sum, unsafe_well_formed; int64 keys). What a peer cannot give the lab:
// its reclamation counters (retired, freed, pending, pauses: 0 in its JSON lines), --stall
// (refused: a stalled operation is a guard of our schemes) and timeline events of its own.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "memory.hpp"
#include "registry.hpp"
#include "trial.hpp"

namespace reclaim_bench::peers {

// Validation helpers over the keys a peer's container yields when iterated (after the workers
// joined, from the main thread).
struct key_scan {
  std::int64_t size = 0;
  std::int64_t key_sum = 0;
  bool well_formed = true;
};

// A list: keys strictly ascending.
template <class Iterable, class KeyOf>
key_scan scan_sorted(Iterable& set, KeyOf key_of) {
  key_scan s;
  bool first = true;
  std::int64_t last = 0;
  for (auto it = set.begin(); it != set.end(); ++it) {
    const std::int64_t k = key_of(*it);
    if (!first && k <= last) s.well_formed = false;
    first = false;
    last = k;
    ++s.size;
    s.key_sum += k;
  }
  return s;
}

// A hash table, whose iteration order is by bucket: no key twice.
template <class Iterable, class KeyOf>
key_scan scan_distinct(Iterable& set, KeyOf key_of) {
  key_scan s;
  std::vector<std::int64_t> keys;
  for (auto it = set.begin(); it != set.end(); ++it) keys.push_back(key_of(*it));
  std::sort(keys.begin(), keys.end());
  s.well_formed = std::adjacent_find(keys.begin(), keys.end()) == keys.end();
  s.size = static_cast<std::int64_t>(keys.size());
  for (std::int64_t k : keys) s.key_sum += k;
  return s;
}

// A peer library's registration of the calling thread, which most libraries ask of every thread
// that touches their structures: Attachment registers in its constructor and unregisters in its
// destructor. Made on the thread's first operation (a thread_local check per operation, part of
// what using the library costs) and undone at the thread's exit, before the trial joins it.
template <class Attachment>
Attachment& attached_thread() {
  thread_local Attachment attachment;
  return attachment;
}

// What a peer's workers get for region_span (trial.hpp): each operation opens its own region.
struct no_regions {
  void next() noexcept {}
};

// One trial of a peer's set DS (or of another kind, with that kind's Workload: rc_peers.hpp):
// what run_trial (trial.hpp) does for our pairs, without a domain. Session is the peer library's
// per-trial state (libcds: its garbage collector), built before the container and destroyed after
// it; DS is default-constructible.
template <class Session, class DS, class Workload = set_workload<DS>>
trial_result run_peer_trial(const trial_config& cfg) {
  reset_peak_rss();
  trial_result result;
  {
    Session session(cfg);
    // The peer may need the main thread registered: it builds, validates and destroys the
    // container (libcds: its destructor frees through the collector).
    typename Session::main_thread main(session);
    DS ds;  // destroyed before the main thread's registration and the session
    Workload workload(ds, cfg);
    if (cfg.prefill) workload.prefill();
    std::shared_ptr<reclaim::timeline::recorder> timeline = make_timeline(cfg);
    result.seconds = run_workers(
        cfg, timeline.get(), result.timeline_origin_ns, [] { return memory_sample{}; },
        result.samples, [] {},
        [&workload](unsigned i, const std::atomic<bool>& stop) {
          no_regions span;  // each operation is its own region (options.cpp refuses more)
          workload.run(i, stop, span);
        });
    result.rss_bytes = rss_bytes();
    workload.finish(result);
    keep_timeline(result, std::move(timeline));
  }
  result.peak_rss_bytes = peak_rss_bytes();
  return result;
}

// Registers peer scheme `name` (LIBRARY:SCHEME) of `library` with the containers it offers, given
// as (container name, trial function, bytes per key, kind) entries; every other container of the
// lab is refused with "LIBRARY has no CONTAINER".
struct peer_container {
  std::string_view ds;
  trial_fn run;
  std::size_t bytes_per_key;
  workload kind = workload::set;
};
inline void register_peer(registry& r, const scheme_info& s,
                          std::initializer_list<peer_container> offers, std::string_view why_not) {
  r.add_scheme(s);
  const std::vector<std::string_view> ours = r.containers();  // registered before the peers
  for (std::string_view ds : ours) {
    auto it = std::find_if(offers.begin(), offers.end(),
                           [&](const peer_container& c) { return c.ds == ds; });
    if (it != offers.end())
      r.add_pairing({ds, s.name, it->run, {}, it->bytes_per_key, it->kind});
    else
      r.add_pairing({ds, s.name, nullptr, why_not, 0, r.workload_of(ds)});
  }
}

}  // namespace reclaim_bench::peers
