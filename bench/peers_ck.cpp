// SPDX-License-Identifier: MIT
// Concurrency Kit (libck-dev) as a peer: its epoch reclamation (ck_epoch, Fraser's scheme, ours:
// ebr, debra) and its hazard pointers (ck_hp, Michael's, ours: hp), named ck:epoch and ck:hp.
// Concurrency Kit ships no Harris-Michael list, so both run ours, written over its API
// (peers_hm.hpp): hm_list and hm_hashmap.
//
// As Concurrency Kit's manual asks: each thread holds a record registered with the trial's
// ck_epoch_t or ck_hp_t (ck_epoch_register, ck_hp_register; a record left by a thread that exited
// is taken over with ck_epoch_recycle / ck_hp_recycle), made on its first operation and released
// at its exit (peers.hpp's attached_thread), after it freed everything it retired:
// ck_epoch_barrier() (waits for a grace period) or ck_hp_purge() (waits until no hazard holds
// its nodes). So a trial ends with nothing retired left, and the records go with the trial.
//   ck:epoch  an operation is one ck_epoch_begin/end section; a retired node goes to
//             ck_epoch_call(), and every 32 retires the thread calls ck_epoch_poll() after its
//             section (it advances the epoch when it can and frees what two epochs made safe;
//             ours advance every 64 operations, about as often at 50% updates)
//   ck:hp     each read is published with ck_hp_set_fence() and validated by re-reading its
//             source; an operation's end clears its hazards (ck_hp_clear); a retired node goes to
//             ck_hp_free(), which scans once the thread holds the threshold: 100 + 2 x the
//             trial's hazard slots, as ours (hp's scan_threshold<100, 2>)
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

// Concurrency Kit's headers are C: C linkage, and two of ck_stack.h's inline functions assign
// ck_pr_fas_ptr()'s void* to a typed pointer, which C++ refuses; they see a void* that converts.
extern "C" {
#include <ck_pr.h>
}
namespace reclaim_bench::peers::ck_cxx {
struct void_ptr {
  void* p;
  template <class T>
  operator T*() const {  // NOLINT: implicit, as C's void*
    return static_cast<T*>(p);
  }
};
inline void_ptr fas_ptr(void* target, void* value) { return {ck_pr_fas_ptr(target, value)}; }
}  // namespace reclaim_bench::peers::ck_cxx
#define ck_pr_fas_ptr(target, value) ::reclaim_bench::peers::ck_cxx::fas_ptr((target), (value))
extern "C" {
#include <ck_epoch.h>
#include <ck_hp.h>
}
#undef ck_pr_fas_ptr

#include "peers.hpp"
#include "peers_hm.hpp"

namespace reclaim_bench::peers {
namespace {

// The trial's ck_epoch_t or ck_hp_t (Global), and the records its threads registered (Record: a
// ck_epoch_record_t or ck_hp_record_t and what it needs beside it), which the library links into
// Global and which must live as long as it. One trial runs at a time: its session is `current`,
// which a thread's first operation registers with.
template <class Global, class Record>
class ck_session_base {
 public:
  ck_session_base() { current = this; }
  ~ck_session_base() { current = nullptr; }
  ck_session_base(const ck_session_base&) = delete;
  ck_session_base& operator=(const ck_session_base&) = delete;
  struct main_thread {  // the main thread builds, scans and destroys the container quiescent
    explicit main_thread(ck_session_base&) {}
  };

  static inline ck_session_base* current = nullptr;
  Global global{};

  // A new record for the calling thread, kept until the session ends.
  Record& make_record() {
    std::lock_guard lock(mutex_);
    return *records_.emplace_back(std::make_unique<Record>());
  }

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<Record>> records_;
};

// --- ck:epoch ------------------------------------------------------------------------------------

using epoch_node = hm_node<ck_epoch_entry_t>;
void free_epoch_node(ck_epoch_entry_t* e) {
  static_assert(offsetof(epoch_node, hook) == 0);
  delete reinterpret_cast<epoch_node*>(e);
}

struct epoch_record {
  ck_epoch_record_t record{};
};
struct epoch_session : ck_session_base<ck_epoch_t, epoch_record> {
  explicit epoch_session(const trial_config&) { ck_epoch_init(&global); }
};

struct epoch_attachment {
  epoch_attachment() {
    epoch_session& s = *static_cast<epoch_session*>(epoch_session::current);
    record = ck_epoch_recycle(&s.global, nullptr);
    if (!record) {
      record = &s.make_record().record;
      ck_epoch_register(&s.global, record, nullptr);
    }
  }
  ~epoch_attachment() {
    ck_epoch_barrier(record);  // frees everything this thread retired
    ck_epoch_unregister(record);
  }
  epoch_attachment(const epoch_attachment&) = delete;
  epoch_attachment& operator=(const epoch_attachment&) = delete;
  ck_epoch_record_t* record;
  unsigned retired_since_poll = 0;
};

struct ck_epoch_reclaimer {
  using hook = ck_epoch_entry_t;
  static constexpr unsigned poll_every = 32;  // retires
  class guard {
   public:
    guard() : a_(attached_thread<epoch_attachment>()) { ck_epoch_begin(a_.record, nullptr); }
    ~guard() {
      ck_epoch_end(a_.record, nullptr);
      if (a_.retired_since_poll >= poll_every) {
        a_.retired_since_poll = 0;
        ck_epoch_poll(a_.record);
      }
    }
    guard(const guard&) = delete;
    guard& operator=(const guard&) = delete;
    template <class Link>
    Link protect(const std::atomic<Link>& src, unsigned /*slot*/) const {
      return src.load(std::memory_order_acquire);  // pairs with the publishing CAS's release
    }
    void retire(epoch_node* n) {
      ck_epoch_call(a_.record, &n->hook, &free_epoch_node);
      ++a_.retired_since_poll;
    }

   private:
    epoch_attachment& a_;
  };
};

// --- ck:hp ---------------------------------------------------------------------------------------

using hp_node = hm_node<ck_hp_hazard_t>;
constexpr unsigned hp_slots = 3;  // peers_hm.hpp's find: predecessor, node, successor

struct hp_record {
  ck_hp_record_t record{};
  void* pointers[hp_slots] = {};  // the record's hazards
};
struct hp_session : ck_session_base<ck_hp_t, hp_record> {
  explicit hp_session(const trial_config& cfg) {
    ck_hp_init(&global, hp_slots, 100 + 2 * hp_slots * cfg.threads,
               [](void* n) { delete static_cast<hp_node*>(n); });
  }
};

struct hp_attachment {
  hp_attachment() {
    hp_session& s = *static_cast<hp_session*>(hp_session::current);
    record = ck_hp_recycle(&s.global);
    if (!record) {
      hp_record& fresh = s.make_record();
      record = &fresh.record;
      ck_hp_register(&s.global, record, fresh.pointers);
    }
  }
  ~hp_attachment() {
    ck_hp_clear(record);
    ck_hp_purge(record);  // frees everything this thread retired
    ck_hp_unregister(record);
  }
  hp_attachment(const hp_attachment&) = delete;
  hp_attachment& operator=(const hp_attachment&) = delete;
  ck_hp_record_t* record;
};

struct ck_hp_reclaimer {
  using hook = ck_hp_hazard_t;
  class guard {
   public:
    guard() : record_(attached_thread<hp_attachment>().record) {}
    ~guard() { ck_hp_clear(record_); }
    guard(const guard&) = delete;
    guard& operator=(const guard&) = delete;
    // Publishes the pointer read (ck_hp_set_fence: an exchange, a full fence) and reads the
    // source again: unchanged, the node was not retired when the hazard became visible to
    // ck_hp_reclaim's scan. acquire: pairs with the publishing CAS's release.
    template <class Link>
    Link protect(const std::atomic<Link>& src, unsigned slot) const {
      Link p = src.load(std::memory_order_acquire);
      for (;;) {
        ck_hp_set_fence(record_, slot, p.get());
        const Link again = src.load(std::memory_order_acquire);
        if (again == p) return p;
        p = again;
      }
    }
    void retire(hp_node* n) const { ck_hp_free(record_, &n->hook, n, n); }

   private:
    ck_hp_record_t* record_;
  };
};

constexpr std::string_view why_not =
    "Concurrency Kit is run with the Harris-Michael list (hm_list) and hash map (hm_hashmap) "
    "written over its API (bench/peers_hm.hpp)";

template <class Reclaimer, class Session>
void add(registry& r, std::string_view name, reclaim::family family, bool bounds_garbage) {
  register_peer(r, {name, family, bounds_garbage, reclaim::needs_nothing, "Concurrency Kit"},
                {{"hm_list", &run_peer_trial<Session, hm_list_of<Reclaimer>>, 48},
                 {"hm_hashmap", &run_peer_trial<Session, hm_hashmap_of<Reclaimer>>, 48}},
                why_not);
}

}  // namespace

void register_ck(registry& r) {
  add<ck_epoch_reclaimer, epoch_session>(r, "ck:epoch", reclaim::family::epoch, false);
  add<ck_hp_reclaimer, hp_session>(r, "ck:hp", reclaim::family::pointer, true);
}

}  // namespace reclaim_bench::peers
