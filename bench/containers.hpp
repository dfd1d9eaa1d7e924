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

#include <reclaim/ds/dgt_bst.hpp>
#include <reclaim/ds/guarded_hm_list.hpp>
#include <reclaim/ds/guarded_ms_queue.hpp>
#include <reclaim/ds/harris_list.hpp>
#include <reclaim/ds/hm_hashmap.hpp>
#include <reclaim/ds/hm_hashmap_restart.hpp>
#include <reclaim/ds/hm_list.hpp>
#include <reclaim/ds/hm_list_restart.hpp>
#include <reclaim/ds/lazy_list.hpp>
#include <reclaim/ds/ms_queue.hpp>
#include <reclaim/ds/treiber_stack.hpp>

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
                 guarded_ms_queue>;

}  // namespace reclaim_bench::containers
