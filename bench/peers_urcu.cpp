// SPDX-License-Identifier: MIT
// liburcu (liburcu-dev) as a peer: userspace RCU, whose read-side critical sections are epochs and
// whose call_rcu() frees a node once every registered reader has left the sections it was in.
// liburcu ships no Harris-Michael list, so its flavors run ours, written over its API
// (peers_hm.hpp): hm_list and hm_hashmap under
//   urcu:memb  urcu-memb, readers announce a section with plain stores and the grace period's
//              membarrier() does the fencing for them (ours: ebr, debra)
//   urcu:qsbr  urcu-qsbr, readers announce a quiescent state after each operation (ours: qsbr)
//   urcu:bp    urcu-bp, "bulletproof": threads register themselves on their first section
// and, as a reference point only, urcu:rculfhash: liburcu's own lock-free hash table (rculfhash,
// split-ordered lists that can resize, under urcu-memb), run where the lab runs hm_hashmap. It is
// a different container, not our algorithm over liburcu: a scheme name rather than a container of
// the lab, because no scheme of ours can run it.
//
// As liburcu's documentation asks: every thread that enters a read-side section registers first
// (rcu_register_thread, on its first operation, peers.hpp's attached_thread) and unregisters at
// its exit; urcu-qsbr's threads announce quiescent states (after each operation here) and go
// offline by unregistering. Each retired node goes to call_rcu(), whose worker thread (one per
// flavor, made by liburcu on first use) waits for grace periods and frees in batches; the trial
// ends with rcu_barrier(), which returns once every callback ran, so nothing retired is left.
// _LGPL_SOURCE inlines liburcu's read-side fast paths, as its documentation recommends for speed.
#define _LGPL_SOURCE
#include <urcu/urcu-memb.h>
#include <urcu/urcu-qsbr.h>
#include <urcu/urcu-bp.h>
// After the flavors (rculfhash.h asks for it).
#include <urcu/rculfhash.h>

// call_rcu.h declares call_rcu() and rcu_barrier() under the generic names, which each flavor's
// header maps to its own, and is included once: by the first flavor (memb, which rculfhash uses
// too). The other flavors' are declared here (liburcu's own multi-flavor test compiles each flavor
// in a translation unit of its own instead).
extern "C" {
void urcu_qsbr_call_rcu(rcu_head* head, void (*func)(rcu_head* head));
void urcu_qsbr_barrier(void);
void urcu_bp_call_rcu(rcu_head* head, void (*func)(rcu_head* head));
void urcu_bp_barrier(void);
}

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "peers.hpp"
#include "peers_hm.hpp"

namespace reclaim_bench::peers {
namespace {

// One flavor's calls; the generic names of liburcu are macros that only one flavor can own.
struct memb {
  static void register_thread() { urcu_memb_register_thread(); }
  static void unregister_thread() { urcu_memb_unregister_thread(); }
  static void read_lock() { urcu_memb_read_lock(); }
  static void read_unlock() { urcu_memb_read_unlock(); }
  static void quiescent() {}
  static void call(rcu_head* h, void (*f)(rcu_head*)) { urcu_memb_call_rcu(h, f); }
  static void barrier() { urcu_memb_barrier(); }
};
struct qsbr {
  static void register_thread() { urcu_qsbr_register_thread(); }
  static void unregister_thread() { urcu_qsbr_unregister_thread(); }
  static void read_lock() { urcu_qsbr_read_lock(); }  // nothing: a registered thread is online
  static void read_unlock() { urcu_qsbr_read_unlock(); }
  static void quiescent() { urcu_qsbr_quiescent_state(); }
  static void call(rcu_head* h, void (*f)(rcu_head*)) { urcu_qsbr_call_rcu(h, f); }
  static void barrier() { urcu_qsbr_barrier(); }
};
struct bp {
  static void register_thread() {}  // urcu-bp registers a thread on its first read_lock
  static void unregister_thread() {}
  static void read_lock() { urcu_bp_read_lock(); }
  static void read_unlock() { urcu_bp_read_unlock(); }
  static void quiescent() {}
  static void call(rcu_head* h, void (*f)(rcu_head*)) { urcu_bp_call_rcu(h, f); }
  static void barrier() { urcu_bp_barrier(); }
};

// The registration of a thread with Flavor, for its lifetime (peers.hpp's attached_thread).
template <class Flavor>
struct registration {
  registration() { Flavor::register_thread(); }
  ~registration() { Flavor::unregister_thread(); }
  registration(const registration&) = delete;
  registration& operator=(const registration&) = delete;
};

// Deletes the node whose first member is h, once call_rcu's grace period has passed.
template <class Node>
void free_node(rcu_head* h) {
  static_assert(offsetof(Node, hook) == 0);
  delete reinterpret_cast<Node*>(h);
}

// peers_hm.hpp's reclaimer: an operation is one read-side critical section; a read is a load
// (rcu_dereference's acquire: a section keeps what it reads).
template <class Flavor>
struct urcu_reclaimer {
  using hook = rcu_head;
  class guard {
   public:
    guard() {
      attached_thread<registration<Flavor>>();
      Flavor::read_lock();
    }
    ~guard() {
      Flavor::read_unlock();
      Flavor::quiescent();
    }
    guard(const guard&) = delete;
    guard& operator=(const guard&) = delete;
    template <class Link>
    Link protect(const std::atomic<Link>& src, unsigned /*slot*/) const {
      return src.load(std::memory_order_acquire);  // pairs with the publishing CAS's release
    }
    template <class Node>
    void retire(Node* n) const {
      Flavor::call(&n->hook, &free_node<Node>);
    }
  };
};

// Per trial: rcu_barrier() once the container is gone, so that every node retired was freed
// before the trial's memory is read (and none is left to a later trial).
template <class Flavor>
struct urcu_session {
  explicit urcu_session(const trial_config&) {}
  ~urcu_session() { Flavor::barrier(); }
  urcu_session(const urcu_session&) = delete;
  urcu_session& operator=(const urcu_session&) = delete;
  struct main_thread {
    explicit main_thread(urcu_session&) {}
  };
};

// rculfhash under urcu-memb, with our containers' interface: 2^14 buckets, as ours, fixed (no
// CDS_LFHT_AUTO_RESIZE: ours do not grow either); the hash of key k is k x 2^64/phi, whose low
// bits (rculfhash's bucket) are a permutation of k's, so consecutive keys fill every bucket.
class rculfhash_set {
 public:
  using key_type = std::int64_t;
  rculfhash_set()
      : table_(cds_lfht_new_flavor(buckets, buckets, buckets, 0, &urcu_memb_flavor, nullptr)) {
    if (!table_) throw std::runtime_error("rculfhash: cds_lfht_new_flavor failed");
  }
  // Quiescent, on the main thread (a reader too: its sections register it, for good): empties
  // the table, which cds_lfht_destroy() requires, then frees the nodes once no reader can hold
  // them.
  ~rculfhash_set() {
    std::vector<entry*> nodes;
    {
      section s;
      cds_lfht_iter it;
      cds_lfht_node* n;
      cds_lfht_for_each(table_, &it, n) {
        if (cds_lfht_del(table_, n) == 0) nodes.push_back(entry_of(n));
      }
    }
    urcu_memb_synchronize_rcu();
    for (entry* e : nodes) delete e;
    cds_lfht_destroy(table_, nullptr);
  }
  rculfhash_set(const rculfhash_set&) = delete;
  rculfhash_set& operator=(const rculfhash_set&) = delete;

  bool insert(key_type k) {
    section s;
    if (find(k)) return false;  // allocate only for a key that looks absent, as ours
    auto* e = new entry(k);
    if (cds_lfht_add_unique(table_, hash(k), &match, &e->key, &e->node) == &e->node) return true;
    delete e;  // another insert of k won; e was never published
    return false;
  }
  bool erase(key_type k) {
    section s;
    cds_lfht_node* n = find(k);
    // A failed cds_lfht_del: a concurrent erase removed the node first.
    if (!n || cds_lfht_del(table_, n) != 0) return false;
    urcu_memb_call_rcu(&entry_of(n)->head, &free_entry);
    return true;
  }
  bool contains(key_type k) {
    section s;
    return find(k) != nullptr;
  }
  std::size_t unsafe_size() { return static_cast<std::size_t>(scan().size); }
  std::int64_t unsafe_key_sum() { return scan().key_sum; }
  bool unsafe_well_formed() { return scan().well_formed; }

 private:
  static constexpr unsigned long buckets = 1ul << 14;
  struct entry {
    explicit entry(key_type k) : key(k) {}
    cds_lfht_node node{};
    const key_type key;
    rcu_head head{};
  };
  struct section {
    section() {
      attached_thread<registration<memb>>();
      urcu_memb_read_lock();
    }
    ~section() { urcu_memb_read_unlock(); }
  };
  static entry* entry_of(cds_lfht_node* n) { return caa_container_of(n, entry, node); }
  static unsigned long hash(key_type k) {
    return static_cast<unsigned long>(static_cast<std::uint64_t>(k) * 0x9E3779B97F4A7C15ull);
  }
  static int match(cds_lfht_node* n, const void* key) {
    return entry_of(n)->key == *static_cast<const key_type*>(key);
  }
  static void free_entry(rcu_head* h) { delete caa_container_of(h, entry, head); }
  cds_lfht_node* find(key_type k) {
    cds_lfht_iter it;
    cds_lfht_lookup(table_, hash(k), &match, &k, &it);
    return cds_lfht_iter_get_node(&it);
  }
  key_scan scan() {
    section s;
    return scan_distinct(*this, [](const entry& e) { return e.key; });
  }

  // A forward iteration over the table for scan_distinct (peers.hpp), in a section.
  class iterator {
   public:
    iterator(cds_lfht* t, bool end) : table_(t) {
      if (end)
        it_.node = nullptr;
      else
        cds_lfht_first(table_, &it_);
    }
    const entry& operator*() { return *entry_of(cds_lfht_iter_get_node(&it_)); }
    iterator& operator++() {
      cds_lfht_next(table_, &it_);
      return *this;
    }
    bool operator!=(const iterator& o) const { return it_.node != o.it_.node; }

   private:
    cds_lfht* table_;
    cds_lfht_iter it_{};
  };

 public:
  iterator begin() { return {table_, false}; }
  iterator end() { return {table_, true}; }

 private:
  cds_lfht* table_;
};

constexpr std::string_view why_not =
    "liburcu is run with the Harris-Michael list (hm_list) and hash map (hm_hashmap) written over "
    "its API (bench/peers_hm.hpp)";

template <class Flavor>
void add(registry& r, std::string_view name) {
  using reclaimer = urcu_reclaimer<Flavor>;
  using session = urcu_session<Flavor>;
  register_peer(r, {name, reclaim::family::epoch, false, reclaim::needs_nothing, "liburcu"},
                {{"hm_list", &run_peer_trial<session, hm_list_of<reclaimer>>, 48},
                 {"hm_hashmap", &run_peer_trial<session, hm_hashmap_of<reclaimer>>, 48}},
                why_not);
}

}  // namespace

void register_urcu(registry& r) {
  add<memb>(r, "urcu:memb");
  add<qsbr>(r, "urcu:qsbr");
  add<bp>(r, "urcu:bp");
  register_peer(r, {"urcu:rculfhash", reclaim::family::epoch, false, reclaim::needs_nothing,
                    "liburcu"},
                {{"hm_hashmap", &run_peer_trial<urcu_session<memb>, rculfhash_set>, 48}},
                "urcu:rculfhash is liburcu's own hash table (rculfhash), a reference point run "
                "where the lab runs hm_hashmap only");
}

}  // namespace reclaim_bench::peers
