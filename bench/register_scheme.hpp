// SPDX-License-Identifier: MIT
// Registration of one scheme with every container; included only by the generated per-scheme
// translation units (scheme.cpp.in), which is where the trial runner gets instantiated.
#pragma once
#include <exception>
#include <string>
#include <string_view>

#include <reclaim/concepts.hpp>

#include "cache_workload.hpp"
#include "config_workload.hpp"
#include "containers.hpp"
#include "pool_workload.hpp"
#include "registry.hpp"
#include "trial.hpp"

namespace reclaim_bench {

// The workload of each kind of container.
template <workload Kind, class DS>
struct workload_runner;
template <class DS>
struct workload_runner<workload::set, DS> {
  using type = set_workload<DS>;
};
template <class DS>
struct workload_runner<workload::stack, DS> {
  using type = pool_workload<DS, /*Fifo=*/false>;
};
template <class DS>
struct workload_runner<workload::queue, DS> {
  using type = pool_workload<DS, /*Fifo=*/true>;
};
template <class DS>
struct workload_runner<workload::cache, DS> {
  using type = cache_workload<DS>;
};
template <class DS>
struct workload_runner<workload::config, DS> {
  using type = config_workload<DS>;
};

// Whether Scheme can run container C: what C's type under it says of its needs
// (reclaim::applies), or, for a container over atomic_rc_ptr, C::applies_to<Scheme>
// (containers.hpp), asked without instantiating the type (atomic_rc_ptr refuses to compile for a
// scheme it does not serve).
template <class C, class Scheme>
constexpr reclaim::applicability lab_applies() {
  if constexpr (requires { C::template applies_to<Scheme>; }) {
    return C::template applies_to<Scheme>;
  } else {
    using DS = typename C::template type<Scheme>;
    return reclaim::applies<typename DS::scheme_type, DS>();
  }
}

// What a domain of Scheme refuses on this machine, by constructing one ("" if nothing).
template <reclaim::scheme Scheme>
std::string refusal() {
  try {
    typename Scheme::domain domain;
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

// The containers a parameter sweep's variant is built for (RECLAIM_BENCH_SWEEP in
// bench/CMakeLists.txt): the lists and hash maps of the defaults sweep, in both forms.
using sweep_containers = containers::list<containers::lazy_list, containers::hm_list,
                                          containers::hm_hashmap, containers::hm_list_restart,
                                          containers::hm_hashmap_restart>;
inline constexpr std::string_view not_in_sweep =
    "a parameter sweep's variant runs on lazy_list, hm_list, hm_hashmap, hm_list_restart and "
    "hm_hashmap_restart only (RECLAIM_BENCH_SWEEP)";

// Registers Scheme under `name`, and for each container either its trial runner or, when the
// container does not meet the scheme's needs, the container's reason. An unsupported pair is never
// instantiated: `if constexpr` discards the runner. A trial runs under the container's own scheme
// type, which is Scheme, or Scheme sized for the container (lazy_skiplist: containers.hpp). A sweep
// variant (Sweep) is instantiated only for sweep_containers and stays out of the applicability
// matrix.
template <reclaim::scheme Scheme, bool Sweep = false>
void register_scheme(registry& r, std::string_view name) {
  r.add_scheme({name, Scheme::family, Scheme::bounds_garbage, Scheme::needs, {}, Sweep,
                &refusal<Scheme>});
  containers::all::for_each([&](auto container) {
    using C = typename decltype(container)::type;
    if constexpr (Sweep && !sweep_containers::contains<C>) {
      r.add_pairing({C::name, name, nullptr, not_in_sweep, C::bytes_per_key, C::kind});
    } else if constexpr (lab_applies<C, Scheme>().ok) {
      using DS = typename C::template type<Scheme>;
      using S = typename DS::scheme_type;
      r.add_pairing({C::name, name, &run_trial<S, DS, typename workload_runner<C::kind, DS>::type>,
                     {}, C::bytes_per_key, C::kind});
    } else {
      r.add_pairing({C::name, name, nullptr, lab_applies<C, Scheme>().why_not, C::bytes_per_key,
                     C::kind});
    }
  });
}

}  // namespace reclaim_bench
