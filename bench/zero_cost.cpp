// SPDX-License-Identifier: MIT
// reclaim-zero-cost: checks that the reclamation layer costs nothing where a scheme needs no call.
//
// It runs each list under `none` and under `calls_compiled_out`, a scheme whose guard, protect and
// retire are empty inline functions: the same container source with every reclamation call
// compiled away (retired nodes simply leak). Trials of the two alternate in one process, through
// the lab's own trial runner, and the median ratio is printed. The target is none >= 0.99x.
//   reclaim-zero-cost [trials=7] [seconds=1]
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include <reclaim/core/guard_base.hpp>
#include <reclaim/ds/hm_list.hpp>
#include <reclaim/ds/lazy_list.hpp>
#include <reclaim/schemes/none.hpp>

#include "trial.hpp"

namespace {

struct calls_compiled_out {
  static constexpr std::string_view name = "calls_compiled_out";
  static constexpr reclaim::family family = reclaim::family::none;
  static constexpr bool bounds_garbage = false;
  static constexpr unsigned needs = reclaim::needs_nothing;
  using node_base = reclaim::none::node_base;  // the same node layout as under none

  struct domain {
    reclaim::stats stats() const { return {}; }
  };
  struct guard : reclaim::core::guard_base<guard> {
    static constexpr bool validates = false;
    explicit guard(domain&) noexcept {}
    template <class P>
    P protect(const std::atomic<P>& src, unsigned) const noexcept {
      return src.load(std::memory_order_acquire);  // the load the container would do anyway
    }
    template <class T>
    void retire(T*) const noexcept {}  // leaks, as a structure without reclamation does
  };
  static domain& default_domain() {
    static domain d;
    return d;
  }
};
static_assert(reclaim::scheme<calls_compiled_out>);

// The lab's int64 sets, as templates of the scheme alone.
template <class Scheme>
using int64_lazy_list = reclaim::ds::lazy_list<std::int64_t, Scheme>;
template <class Scheme>
using int64_hm_list = reclaim::ds::hm_list<std::int64_t, Scheme>;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

template <template <class> class List>
bool compare(std::string_view ds, unsigned threads, unsigned trials, double seconds) {
  std::vector<double> with_none, compiled_out, ratios;
  for (unsigned trial = 1; trial <= trials; ++trial) {
    reclaim_bench::trial_config cfg{.ds = ds, .scheme = "", .threads = threads,
                                    .seconds = seconds, .trial = trial, .keys = 20'000,
                                    .insert_pct = 50, .delete_pct = 50};
    // Both leak, so the heap grows from trial to trial: alternate which runs first, or the second
    // would always run on the more fragmented heap.
    reclaim_bench::trial_result a, b;
    if (trial % 2) {
      a = reclaim_bench::run_trial<reclaim::none, List<reclaim::none>>(cfg);
      b = reclaim_bench::run_trial<calls_compiled_out, List<calls_compiled_out>>(cfg);
    } else {
      b = reclaim_bench::run_trial<calls_compiled_out, List<calls_compiled_out>>(cfg);
      a = reclaim_bench::run_trial<reclaim::none, List<reclaim::none>>(cfg);
    }
    if (!a.checksum_ok() || !b.checksum_ok()) {
      fmt::print(stderr, "reclaim-zero-cost: validation failed on {}\n", ds);
      return false;
    }
    with_none.push_back(a.ops / a.seconds);
    compiled_out.push_back(b.ops / b.seconds);
    ratios.push_back(with_none.back() / compiled_out.back());
  }
  auto [lo, hi] = std::minmax_element(ratios.begin(), ratios.end());
  fmt::print("{:<10} {:>7} {:>14.0f} {:>18.0f} {:>12.3f} {:>6.3f} {:>6.3f}\n", ds, threads,
             median(with_none), median(compiled_out), median(ratios), *lo, *hi);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const unsigned trials = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 7;
  const double seconds = argc > 2 ? std::atof(argv[2]) : 1.0;
  if (trials == 0 || !(seconds > 0)) {
    fmt::print(stderr, "usage: reclaim-zero-cost [trials >= 1] [seconds > 0]\n");
    return 2;
  }
  fmt::print("{:<10} {:>7} {:>14} {:>18} {:>12} {:>6} {:>6}\n", "ds", "threads", "none ops/s",
             "compiled-out ops/s", "median ratio", "min", "max");
  bool ok = true;
  for (unsigned threads : {1u, 2u}) {
    ok = compare<int64_lazy_list>("lazy_list", threads, trials, seconds) && ok;
    ok = compare<int64_hm_list>("hm_list", threads, trials, seconds) && ok;
  }
  return ok ? 0 : 1;
}
