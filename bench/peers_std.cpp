// SPDX-License-Identifier: MIT
// The standard library's shared pointers as peers (rc_peers.hpp): std:atomic_shared_ptr and
// std:atomic_load, on the rc containers they can run. Always built: they need nothing but the
// standard library.
#include "containers.hpp"
#include "peers.hpp"
#include "pool_workload.hpp"
#include "rc_peers.hpp"

namespace reclaim_bench::peers {
namespace {

// std::shared_ptr needs no per-trial state and no registration of threads.
struct std_session {
  explicit std_session(const trial_config&) {}
  struct main_thread {
    explicit main_thread(std_session&) {}
  };
};

template <template <class> class Loc>
constexpr peer_container config_entry() {
  using cell = std_config_cell<Loc>;
  return {"rc_config", &run_peer_trial<std_session, cell, config_workload<cell>>, 0,
          workload::config};
}

using std_stack = reclaim::ds::basic_rc_stack<std::int64_t, std_family>;
constexpr peer_container stack_entry{
    "rc_stack", &run_peer_trial<std_session, std_stack, pool_workload<std_stack, /*Fifo=*/false>>,
    containers::rc_stack::bytes_per_key, workload::stack};

using std_set = lab_persistent_set<std_family>;
constexpr peer_container set_entry{"persistent_map", &run_peer_trial<std_session, std_set>,
                                   containers::persistent_map::bytes_per_key};

constexpr std::string_view why_not =
    "the standard library's shared pointers run the rc containers only (rc_config; "
    "std:atomic_shared_ptr also rc_stack and persistent_map)";

}  // namespace

void register_std(registry& r) {
  // A shared_ptr frees as its count reaches zero: garbage is bounded, as under lfrc.
  register_peer(r, {"std:atomic_shared_ptr", reclaim::family::reference_counting, true,
                    reclaim::needs_nothing, "libstdc++"},
                {config_entry<std_atomic_shared_ptr>(), stack_entry, set_entry}, why_not);
  register_peer(r, {"std:atomic_load", reclaim::family::reference_counting, true,
                    reclaim::needs_nothing, "libstdc++"},
                {config_entry<std_atomic_load>()}, why_not);
}

}  // namespace reclaim_bench::peers
