// SPDX-License-Identifier: MIT
// The containers the lab runs, each a name, the library template it instantiates per scheme, its
// kind (the workload its trials run: registry.hpp), and the bytes a key takes in it: its nodes with
// the schemes' 16-byte retire hook (node_base), without the allocator's own overhead, so a floor
// (glibc takes 48 bytes for a 32 or 40-byte node). The lab's memory estimate (options.cpp)
// multiplies it by the prefilled keys (a stack's or a queue's prefilled values).
// The sets are the containers' int64 set forms (the lab validates by key sums): nodes hold no
// value.
// Adding a container to the lab is one struct here and its entry in `containers`.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include <reclaim/ds/abtree.hpp>
#include <reclaim/ds/cuckoo_map.hpp>
#include <reclaim/ds/dgt_bst.hpp>
#include <reclaim/ds/guarded_hm_list.hpp>
#include <reclaim/ds/guarded_ms_queue.hpp>
#include <reclaim/ds/harris_list.hpp>
#include <reclaim/ds/hm_hashmap.hpp>
#include <reclaim/ds/hm_hashmap_restart.hpp>
#include <reclaim/ds/hm_list.hpp>
#include <reclaim/ds/hm_list_restart.hpp>
#include <reclaim/ds/lazy_list.hpp>
#include <reclaim/ds/lazy_skiplist.hpp>
#include <reclaim/ds/ms_queue.hpp>
#include <reclaim/ds/nm_bst.hpp>
#include <reclaim/ds/occ_avl.hpp>
#include <reclaim/ds/treiber_stack.hpp>
#include <reclaim/schemes/none.hpp>
#include <reclaim/schemes/sized_for.hpp>

#include "cache_workload.hpp"
#include "config_workload.hpp"
#include "rc_containers.hpp"
#include "registry.hpp"

namespace reclaim_bench::containers {

struct lazy_list {
  static constexpr std::string_view name = "lazy_list";
  static constexpr workload kind = workload::set;
  static constexpr std::size_t bytes_per_key = 40;  // key, next, marked, lock
  template <class Scheme>
  using type = reclaim::ds::lazy_list<std::int64_t, Scheme>;
};

struct hm_list {
  static constexpr std::string_view name = "hm_list";
  static constexpr workload kind = workload::set;
  static constexpr std::size_t bytes_per_key = 32;  // key, next
  template <class Scheme>
  using type = reclaim::ds::hm_list<std::int64_t, Scheme>;
};

// Under nbr and nbr_plus hm_list and hm_hashmap are the types of hm_list_restart and
// hm_hashmap_restart (they pick the restart themselves); under every other scheme the lab runs
// both forms under both names.
struct hm_hashmap {
  static constexpr std::string_view name = "hm_hashmap";
  static constexpr workload kind = workload::set;
  static constexpr std::size_t bytes_per_key = 32;  // key, next; the bucket array is fixed
  template <class Scheme>
  using type = reclaim::ds::hm_hashset<std::int64_t, Scheme>;  // the set form
};

struct harris_list {
  static constexpr std::string_view name = "harris_list";
  static constexpr workload kind = workload::set;
  static constexpr std::size_t bytes_per_key = 32;  // key, next
  template <class Scheme>
  using type = reclaim::ds::harris_list<std::int64_t, Scheme>;
};

struct hm_list_restart {
  static constexpr std::string_view name = "hm_list_restart";
  static constexpr workload kind = workload::set;
  static constexpr std::size_t bytes_per_key = 32;  // key, next
  template <class Scheme>
  using type = reclaim::ds::hm_list_restart<std::int64_t, Scheme>;
};

struct hm_hashmap_restart {
  static constexpr std::string_view name = "hm_hashmap_restart";
  static constexpr workload kind = workload::set;
  static constexpr std::size_t bytes_per_key = 32;  // key, next; the bucket array is fixed
  template <class Scheme>
  using type = reclaim::ds::hm_hashset_restart<std::int64_t, Scheme>;  // the set form
};

struct dgt_bst {
  static constexpr std::string_view name = "dgt_bst";
  static constexpr workload kind = workload::set;
  // A leaf and a router of 56 bytes each: key, is_leaf, two children, two version locks.
  static constexpr std::size_t bytes_per_key = 112;
  template <class Scheme>
  using type = reclaim::ds::dgt_bst<std::int64_t, Scheme>;
};

struct treiber_stack {
  static constexpr std::string_view name = "treiber_stack";
  static constexpr workload kind = workload::stack;
  static constexpr std::size_t bytes_per_key = 32;  // value, next
  template <class Scheme>
  using type = reclaim::ds::treiber_stack<std::int64_t, Scheme>;
};

struct ms_queue {
  static constexpr std::string_view name = "ms_queue";
  static constexpr workload kind = workload::queue;
  static constexpr std::size_t bytes_per_key = 32;  // value, next
  template <class Scheme>
  using type = reclaim::ds::ms_queue<std::int64_t, Scheme>;
};

// The same algorithms written with paper 003's guard_ptr: the lab runs them beside the explicit
// calls above to measure what the interface costs (docs/results.md). nbr cannot serve guard_ptr.
struct guarded_hm_list {
  static constexpr std::string_view name = "guarded_hm_list";
  static constexpr workload kind = workload::set;
  static constexpr std::size_t bytes_per_key = 32;  // key, next
  template <class Scheme>
  using type = reclaim::ds::guarded_hm_list<std::int64_t, Scheme>;
};

struct guarded_ms_queue {
  static constexpr std::string_view name = "guarded_ms_queue";
  static constexpr workload kind = workload::queue;
  static constexpr std::size_t bytes_per_key = 32;  // value, next
  template <class Scheme>
  using type = reclaim::ds::guarded_ms_queue<std::int64_t, Scheme>;
};

// A predecessor per level of a tower: more nodes at once than hp<> and nbr<> hold, so hp, nbr and
// nbr_plus (and their _af forms) run it sized for it (reclaim::sized_for: hp with slots<14>, nbr
// with slots<13>), the same schemes under the same names.
struct lazy_skiplist {
  static constexpr std::string_view name = "lazy_skiplist";
  static constexpr workload kind = workload::set;
  // key, links pointer, flags and lock, and 4/3 links on average (P(height >= k) = 4^-(k-1))
  static constexpr std::size_t bytes_per_key = 48;
  template <class Scheme>
  using type = reclaim::ds::lazy_skiplist<
      std::int64_t,
      reclaim::sized_for<Scheme, reclaim::ds::lazy_skiplist<std::int64_t, reclaim::none>>>;
};

// The table is sized from the key range: `keys` slots, rounded up to a power of two, which the
// prefill (keys/2 keys) loads to 50% when keys is a power of two (paper 004's Figure 14: 32M
// keys, 50% load). Trials with 50% inserts or more may grow it (each growth retires a table).
struct cuckoo_map {
  static constexpr std::string_view name = "cuckoo_map";
  static constexpr workload kind = workload::set;
  // 10 bytes a slot (a key, a tag, an occupancy bit), two slots a prefilled key
  static constexpr std::size_t bytes_per_key = 20;
  template <class Scheme>
  struct type : reclaim::ds::cuckoo_set<std::int64_t, Scheme> {  // the set form
    type(typename Scheme::domain& domain, const trial_config& cfg)
        : reclaim::ds::cuckoo_set<std::int64_t, Scheme>(domain,
                                                        static_cast<std::size_t>(cfg.keys)) {}
  };
};

// The trees of papers 000 and 001.
struct abtree {
  static constexpr std::string_view name = "abtree";
  static constexpr workload kind = workload::set;
  // 288-byte nodes (16 keys, 16 child pointers, the LLX/SCX words) whose leaves hold at most 16
  // keys: the floor is one full leaf per 16 keys (a half-full tree takes about twice that).
  static constexpr std::size_t bytes_per_key = 18;
  template <class Scheme>
  using type = reclaim::ds::abtree<std::int64_t, Scheme>;
};

struct occ_avl {
  static constexpr std::string_view name = "occ_avl";
  static constexpr workload kind = workload::set;
  // One 64-byte node per key: key, version, height, presence, lock, parent and two children.
  static constexpr std::size_t bytes_per_key = 64;
  template <class Scheme>
  using type = reclaim::ds::occ_avl<std::int64_t, Scheme>;
};

struct nm_bst {
  static constexpr std::string_view name = "nm_bst";
  static constexpr workload kind = workload::set;
  // A leaf and a router of 48 bytes each: key, rank, two marked edges.
  static constexpr std::size_t bytes_per_key = 96;
  template <class Scheme>
  using type = reclaim::ds::nm_bst<std::int64_t, Scheme>;
};

// Paper 003's HashMap benchmark: the map of a simulation's partial results (1 KiB each), 2048
// buckets, bounded to keys/3 entries by a FIFO (cache_workload.hpp). Memory: the prefill's count is
// keys/2 for every container, and keys/3 results of about 1056 bytes (the node's key, link and
// hook around the result) make 704 bytes per prefilled key.
struct guarded_hm_hashmap {
  static constexpr std::string_view name = "guarded_hm_hashmap";
  static constexpr workload kind = workload::cache;
  static constexpr std::size_t bytes_per_key = 704;
  template <class Scheme>
  using type = results_cache<Scheme>;
};

// Issue 30's containers over atomic_rc_ptr: they run where it serves the scheme
// (reclaim::rc_applies, rc_ptr.hpp; asked without instantiating the type: register_scheme.hpp).
// raw_config is held to the same schemes, being their floor.
struct over_atomic_rc_ptr {
  template <class Scheme>
  static constexpr reclaim::applicability applies_to = reclaim::rc_applies<Scheme>();
};

// The shared-config workload (config_workload.hpp): one location, a config object of 88 bytes
// (eight fields, a checksum, the ledger) in its block; `keys` does not apply (one config is
// prefilled), so the memory estimate takes none. raw_config runs where the other two do, being
// their floor.
struct config_cell : over_atomic_rc_ptr {
  static constexpr workload kind = workload::config;
  static constexpr std::size_t bytes_per_key = 0;
};
struct rc_config : config_cell {
  static constexpr std::string_view name = "rc_config";
  template <class Scheme>
  using type = rc_config_cell<Scheme, /*Snapshot=*/false>;
};
struct rc_config_snapshot : config_cell {
  static constexpr std::string_view name = "rc_config_snapshot";
  template <class Scheme>
  using type = rc_config_cell<Scheme, /*Snapshot=*/true>;
};
struct raw_config : config_cell {
  static constexpr std::string_view name = "raw_config";
  template <class Scheme>
  using type = raw_config_cell<Scheme>;
};

// rc_stack and persistent_map (rc_containers.hpp). rc_stack's block holds the scheme's hook,
// the count, the drops word, the domain, the value and the link: 80 bytes under the epoch schemes
// and hp; persistent_map's node a key, a priority, a subtree size and two links: 104.
struct rc_stack : over_atomic_rc_ptr {
  static constexpr std::string_view name = "rc_stack";
  static constexpr workload kind = workload::stack;
  static constexpr std::size_t bytes_per_key = 80;
  template <class Scheme>
  using type = settled<reclaim::ds::rc_stack<std::int64_t, Scheme>, Scheme>;
};
struct persistent_map : over_atomic_rc_ptr {
  static constexpr std::string_view name = "persistent_map";
  static constexpr workload kind = workload::set;
  static constexpr std::size_t bytes_per_key = 104;
  template <class Scheme>  // the set form
  using type = settled<lab_persistent_set<reclaim::ds::detail::rc_family<Scheme>>, Scheme>;
};

template <class... Containers>
struct list {
  // Calls f(std::type_identity<C>{}) for each container C, in order.
  template <class F>
  static void for_each(F&& f) {
    (f(std::type_identity<Containers>{}), ...);
  }
  template <class C>
  static constexpr bool contains = (std::is_same_v<C, Containers> || ...);
};

using all = list<lazy_list, hm_list, hm_hashmap, harris_list, hm_list_restart,
                 hm_hashmap_restart, dgt_bst, treiber_stack, ms_queue, guarded_hm_list,
                 guarded_ms_queue, guarded_hm_hashmap, lazy_skiplist, cuckoo_map, abtree,
                 occ_avl, nm_bst, rc_config, rc_config_snapshot, raw_config, rc_stack,
                 persistent_map>;

}  // namespace reclaim_bench::containers
