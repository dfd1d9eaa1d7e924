// SPDX-License-Identifier: MIT
// libcds (libcds-dev) as a peer: MichaelList (hm_list), LazyList (lazy_list) and MichaelHashSet
// over MichaelList (hm_hashmap, 2^14 buckets as ours) under its hazard pointers, named libcds:hp
// (cds::gc::HP, Michael's scheme) and libcds:dhp (cds::gc::DHP, dynamic hazard pointers, the
// pass-the-buck form that grows its pool of hazards).
//
// libcds asks every thread that touches a container to attach to it first and to detach before it
// exits, and one garbage collector object to outlive every container and every attached thread.
// The collector is built per trial (its thread limit sized for the trial's threads); a worker or
// prefill thread attaches on its first operation (a thread_local check per operation, part of
// what using libcds costs) and detaches at its exit, before the trial ends; the main thread is
// attached for the trial (it builds, validates and destroys the container).
#include <cds/container/lazy_list_dhp.h>
#include <cds/container/lazy_list_hp.h>
#include <cds/container/michael_list_dhp.h>
#include <cds/container/michael_list_hp.h>
#include <cds/container/michael_set.h>
#include <cds/gc/dhp.h>
#include <cds/gc/hp.h>
#include <cds/init.h>

#include <cstdint>
#include <functional>
#include <mutex>

#include "peers.hpp"

namespace reclaim_bench::peers {
namespace {

// Attached on the first operation of a thread, detached at its exit (attached_thread).
struct attachment {
  bool owned = false;
  attachment() {
    if (!cds::threading::Manager::isThreadAttached()) {
      cds::threading::Manager::attachThread();
      owned = true;
    }
  }
  ~attachment() {
    if (owned) cds::threading::Manager::detachThread();
  }
};
void attach_this_thread() { attached_thread<attachment>(); }

template <class GC>
struct libcds_session {
  explicit libcds_session(const trial_config& cfg) : gc(make(cfg)) {}
  GC gc;

  // The main thread, which builds, validates and destroys the container: attached for the trial.
  struct main_thread {
    explicit main_thread(libcds_session&) { cds::threading::Manager::attachThread(); }
    ~main_thread() { cds::threading::Manager::detachThread(); }
  };

 private:
  static GC make(const trial_config& cfg) {
    static std::once_flag initialized;
    std::call_once(initialized, [] { cds::Initialize(); });  // once per process, never undone
    if constexpr (std::is_same_v<GC, cds::gc::HP>) {
      // Hazards per thread (libcds's default), threads: workers, prefill threads, main.
      return GC(0, std::max<std::size_t>(100, 2 * std::size_t{cfg.threads} + 8));
    } else {
      return GC();
    }
  }
};

// A libcds ordered list or hash set of int64 keys in our containers' interface.
template <class Set, bool Sorted>
class libcds_set {
 public:
  using key_type = std::int64_t;
  libcds_set() : set_(make()) {}
  bool insert(key_type k) {
    attach_this_thread();
    return set_.insert(k);
  }
  bool erase(key_type k) {
    attach_this_thread();
    return set_.erase(k);
  }
  bool contains(key_type k) {
    attach_this_thread();
    return set_.contains(k);
  }
  std::size_t unsafe_size() { return static_cast<std::size_t>(scan().size); }
  std::int64_t unsafe_key_sum() { return scan().key_sum; }
  bool unsafe_well_formed() { return scan().well_formed; }

 private:
  static Set make() {
    if constexpr (Sorted)
      return Set();
    else
      return Set(16384, 1);  // 2^14 buckets: max items / load factor
  }
  key_scan scan() {
    const auto key = [](std::int64_t k) { return k; };
    return Sorted ? scan_sorted(set_, key) : scan_distinct(set_, key);
  }
  Set set_;
};

template <class GC>
struct hash_traits : cds::container::michael_set::traits {
  using hash = std::hash<std::int64_t>;
};
template <class GC>
using michael_list = cds::container::MichaelList<GC, std::int64_t>;
template <class GC>
using lazy_list = cds::container::LazyList<GC, std::int64_t>;
template <class GC>
using michael_hash_set = cds::container::MichaelHashSet<GC, michael_list<GC>, hash_traits<GC>>;

constexpr std::string_view why_not =
    "libcds is run with MichaelList (hm_list), LazyList (lazy_list) and MichaelHashSet "
    "(hm_hashmap) only";

template <class GC>
void add(registry& r, std::string_view name, bool bounds_garbage) {
  using session = libcds_session<GC>;
  const scheme_info s{name, reclaim::family::pointer, bounds_garbage, reclaim::needs_nothing,
                      "libcds"};
  register_peer(r, s,
                {{"hm_list", &run_peer_trial<session, libcds_set<michael_list<GC>, true>>, 32},
                 {"lazy_list", &run_peer_trial<session, libcds_set<lazy_list<GC>, true>>, 48},
                 {"hm_hashmap", &run_peer_trial<session, libcds_set<michael_hash_set<GC>, false>>,
                  32}},
                why_not);
}

}  // namespace

void register_libcds(registry& r) {
  add<cds::gc::HP>(r, "libcds:hp", true);
  add<cds::gc::DHP>(r, "libcds:dhp", true);
}

}  // namespace reclaim_bench::peers
