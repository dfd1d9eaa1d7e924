// SPDX-License-Identifier: MIT
// ebr: epoch-based reclamation (Fraser, PhD thesis 2004), and the machinery of ner (ner.hpp).
//
// What it is. A global epoch. A thread entering an operation (a critical region) announces the
// global epoch and is active until the operation ends. On region entries it tries to advance the
// epoch: it scans every record, and if every active thread announced the current epoch e, it CASes
// e -> e+1. Each thread has three limbo lists indexed by epoch mod 3; a node goes into the list of
// the epoch its retirer announced, and a list tagged e is freed once the thread sees the epoch at
// e+3 (detail/epoch_engine.hpp argues the protocol, and why three and not two). Fraser's threads
// try to advance on every region entry (ebr<advance_every<1>>); ours try every 64 entries by
// default, because the pass over all records and the CAS on the shared epoch line on every entry
// cost up to 2.4x the throughput (docs/results.md, "Defaults chosen by measurement"). ner (Hart et
// al. 2007) is the same template with paper 003's interval, 100.
//
// When to use it. Short operations, read-mostly or not; advance_every<1> when garbage must be
// freed as soon as possible and the pass over all records (O(threads) remote reads) on every entry
// is affordable. Prefer debra when there are many threads: it checks one record per K operations
// instead of all of them.
// Garbage is NOT bounded: a thread that stalls inside an operation stops the epoch, and every
// thread's lists grow until it resumes. A thread that exits (even inside an operation) blocks
// nothing: its record is idle, and its garbage goes to the orphanage.
//
// Needs from a container: only the start and end of each operation (the guard).
// Progress: lock-free operations; reclamation can be blocked by a stalled thread.
// Differences from the papers: Fraser's threads announce with a plain store after reading the
// epoch; ours re-read the epoch after announcing (one load) until the two agree, which makes the
// three-list argument hold in the C++ memory model (the epoch engine's announce()). Limbo lists
// carry their epoch as a tag, so a thread that missed epochs frees all lists that are old enough
// at once, and an exited thread's lists keep their age in the orphanage: any live thread frees
// them once it sees their tag + 3. The free policy is a parameter.
#pragma once
#include <cstdint>
#include <string_view>

#include "../concepts.hpp"
#include "../core/policy.hpp"
#include "../core/region_guard.hpp"
#include "../free/batch.hpp"
#include "../policies.hpp"
#include "detail/epoch_engine.hpp"

namespace reclaim {

// Flavour: the name and the default advance interval. ebr and ner are the same template.
template <class Flavour, class... Policies>
struct basic_ebr : detail::epoch_scheme<basic_ebr<Flavour, Policies...>> {
  using free_policy = core::find_policy_t<free_policy_kind, batch_free, Policies...>;
  static constexpr unsigned advance_interval =
      core::policy_value<typename Flavour::default_interval, Policies...>;
  static_assert(
      (core::known_kinds<free_policy_kind, advance_kind>::template contains<Policies> && ...),
      "ebr/ner take a free policy and advance_every<K>");

  // Its name in the lab and in messages: the flavour's, ebr or ner.
  static constexpr std::string_view name = Flavour::name;

  class domain;
  class guard;
  // What a reclaim::guard_ptr holds: a share in the thread's operation (core/region_guard.hpp).
  using protection = core::region_hold<domain>;
};

namespace detail {
struct ebr_flavour {
  static constexpr std::string_view name = "ebr";
  using default_interval = advance_every<64>;  // Fraser: advance_every<1> (see the top)
};
}  // namespace detail

// ebr<advance_every<K>, FreePolicy>: try to advance every 64 entries by default.
template <class... Policies>
using ebr = basic_ebr<detail::ebr_flavour, Policies...>;

// One ebr (or ner) instance's shared state: the epoch, the thread records with their limbo bags,
// and the garbage (core/domain.hpp). default_domain() is the one containers use unless given
// another.
template <class Flavour, class... Policies>
class basic_ebr<Flavour, Policies...>::domain
    : public detail::epoch_engine<basic_ebr, detail::epoch_record<free_policy>> {
  using engine = detail::epoch_engine<basic_ebr, detail::epoch_record<free_policy>>;
  using typename engine::record;

 public:
  // The pacing: a full pass (the engine's try_advance()) at every advance_interval-th entry.
  static constexpr unsigned pace_interval = advance_interval;
  ~domain() { this->shutdown(); }

 private:
  friend engine;
  friend class core::region_hold<domain>;  // names our record

  void pace(record& r, std::uint64_t e) { (void)this->try_advance(r, e); }

  // Tagged with the epoch of this operation at each retire: a thread that tries to advance at every
  // entry may see a new epoch at every entry, where opening a bag each time (debra) costs more.
  void put_in_bag(record& r, core::retired_hook* node) {
    r.bags.push(node, r.seen_epoch, r, this->gauge_);
  }
};

// An operation (a region) in d, from construction to destruction; protect() is a plain load.
template <class Flavour, class... Policies>
class basic_ebr<Flavour, Policies...>::guard : public core::region_scheme_guard<domain> {
 public:
  explicit guard(domain& d = basic_ebr::default_domain())
      : core::region_scheme_guard<domain>(d) {}
};

}  // namespace reclaim
