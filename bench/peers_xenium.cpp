// SPDX-License-Identifier: MIT
// xenium (libxenium-dev) as a peer: its Harris-Michael list and hash map under each of its
// reclaimers, as shipped (default policies), named xenium:SCHEME after the scheme of ours each
// one is: ebr (epoch_based), ner (new_epoch_based), debra, qsbr (quiescent_state_based), hp
// (hazard_pointer), he (hazard_eras), stamp_it, lfrc (lock_free_ref_count). Each operation runs
// in a region_guard, as xenium's own benchmark does (with the default policies it costs nothing
// but where a reclaimer extends its region to it).
#include <cassert>  // xenium's headers use assert() without including it
#include <cstdint>
#include <type_traits>

#include <xenium/harris_michael_hash_map.hpp>
#include <xenium/harris_michael_list_based_set.hpp>
#include <xenium/reclamation/generic_epoch_based.hpp>
#include <xenium/reclamation/hazard_eras.hpp>
#include <xenium/reclamation/hazard_pointer.hpp>
#include <xenium/reclamation/lock_free_ref_count.hpp>
#include <xenium/reclamation/quiescent_state_based.hpp>
#include <xenium/reclamation/stamp_it.hpp>

#include "peers.hpp"

namespace reclaim_bench::peers {
namespace {

// xenium needs no per-trial state: its reclaimers' state is global and per thread.
struct xenium_session {
  explicit xenium_session(const trial_config&) {}
  struct main_thread {
    explicit main_thread(xenium_session&) {}
  };
};

// xenium's list or hash map in our containers' interface. Its hash map is a map: its nodes carry a
// one-byte value beside the key (ours, the lab's set form, none); 2^14 buckets, as ours.
template <class Reclaimer, bool HashMap>
class xenium_set {
 public:
  using key_type = std::int64_t;
  bool insert(key_type k) {
    [[maybe_unused]] region r;  // empty for reclaimers without regions (hp)
    if constexpr (HashMap)
      return set_.emplace(k, char{0});
    else
      return set_.emplace(k);
  }
  bool erase(key_type k) {
    [[maybe_unused]] region r;
    return set_.erase(k);
  }
  bool contains(key_type k) {
    [[maybe_unused]] region r;
    return set_.contains(k);
  }
  std::size_t unsafe_size() { return static_cast<std::size_t>(scan().size); }
  std::int64_t unsafe_key_sum() { return scan().key_sum; }
  bool unsafe_well_formed() { return scan().well_formed; }

 private:
  using region = typename Reclaimer::region_guard;
  using reclaimer = xenium::policy::reclaimer<Reclaimer>;
  using set_type = std::conditional_t<
      HashMap,
      xenium::harris_michael_hash_map<key_type, char, reclaimer, xenium::policy::buckets<16384>>,
      xenium::harris_michael_list_based_set<key_type, reclaimer>>;

  key_scan scan() {
    if constexpr (HashMap)
      return scan_distinct(set_, [](const auto& entry) { return entry.first; });
    else
      return scan_sorted(set_, [](std::int64_t k) { return k; });
  }
  set_type set_;
};

constexpr std::string_view why_not =
    "xenium offers the Harris-Michael list (hm_list) and hash map (hm_hashmap) only";

template <class Reclaimer>
void add(registry& r, std::string_view name, reclaim::family family, bool bounds_garbage) {
  register_peer(r, {name, family, bounds_garbage, reclaim::needs_nothing, "xenium"},
                {{"hm_list", &run_peer_trial<xenium_session, xenium_set<Reclaimer, false>>, 32},
                 {"hm_hashmap", &run_peer_trial<xenium_session, xenium_set<Reclaimer, true>>, 40}},
                why_not);
}

}  // namespace

void register_xenium(registry& r) {
  namespace xr = xenium::reclamation;
  using reclaim::family;
  add<xr::epoch_based<>>(r, "xenium:ebr", family::epoch, false);
  add<xr::new_epoch_based<>>(r, "xenium:ner", family::epoch, false);
  add<xr::debra<>>(r, "xenium:debra", family::epoch, false);
  add<xr::quiescent_state_based>(r, "xenium:qsbr", family::epoch, false);
  add<xr::hazard_pointer<>>(r, "xenium:hp", family::pointer, true);
  add<xr::hazard_eras<>>(r, "xenium:he", family::era, true);
  add<xr::stamp_it>(r, "xenium:stamp_it", family::epoch, false);
  add<xr::lock_free_ref_count<>>(r, "xenium:lfrc", family::reference_counting, false);
}

}  // namespace reclaim_bench::peers
