// What every scheme's domain and declaration share, so that a scheme writes only what is its own.
//
// A scheme S declares itself by deriving from scheme_base<S> (the default node base and the
// default domain) and names its domain, derived from domain_base<Domain, Record>, which owns the
// thread registry, the orphanage and the pending gauge, and provides stats(), destruction and
// thread exit. The scheme supplies:
//   Record                     derives from thread_record<FreePolicy>; default-constructible;
//                              declares orphan_batches (lists it hands over at exit) if more than
//                              one; destroy_garbage() destroys every retired node it holds.
//   Domain::on_thread_exit(r)  the record leaves any operation it was in (the thread may exit
//                              inside a guard) and hands its garbage over with orphan(), each list
//                              with its age; it may free first (hp scans once more). The base then
//                              drains the free policy, flushes the gauge and clears the nesting.
//   ~Domain()                  calls shutdown() first, while its own state is still alive.
// How orphaned garbage is freed is the scheme's: free_safe_orphans() / take_safe_orphans() for
// schemes whose stamp says when a batch is safe (epochs, token rounds), adopt_orphans() for schemes
// whose reclaimers check every node they hold (hazard pointers, neutralization, per-node stamps).
#pragma once
#include <atomic>
#include <cassert>
#include <cstdint>

#include "record.hpp"
#include "registry.hpp"
#include "retired.hpp"
#include "stats.hpp"

namespace reclaim::core {

template <class Domain, class Record>
class domain_base {
 public:
  domain_base(const domain_base&) = delete;
  domain_base& operator=(const domain_base&) = delete;

  // A snapshot of the counters; does not register the calling thread.
  reclaim::stats stats() const { return collect_stats(threads_, gauge_); }

 protected:
  domain_base() = default;
  // A domain whose constructor threw never had a thread; any other must have shut down while its
  // own state was still alive.
  ~domain_base() {
    assert((shut_down_ || threads_.size() == 0) &&
           "a scheme's domain destructor must call shutdown() first");
  }

  // The first statement of every domain destructor: exiting threads skip the domain from here on
  // (one detaching now is waited for), then every record's garbage and every orphan is destroyed.
  // No thread may still hold a guard on the domain: it would read freed memory.
  void shutdown() noexcept {
    threads_.close();
    threads_.for_each([](Record& r) {
      assert(r.depth.load(std::memory_order_relaxed) == 0 &&
             "reclaim: domain destroyed while a guard or guard_ptr on it is held");
      r.freeing.drain(r);
      r.destroy_garbage();
    });
    orphans_.take_all().destroy_all();
    shut_down_ = true;
  }

  // Thread exit: hands `list` over with its age (see orphan_batch), in a header the record
  // reserved when its thread registered: O(1), no allocation.
  void orphan(Record& r, retired_list&& list, std::uint64_t stamp = 0) noexcept {
    orphans_.give(std::move(list), stamp, r.headers);
  }

  // The orphaned batches whose stamp satisfies is_safe, as one list; the others stay.
  template <class Pred>
  retired_list take_safe_orphans(Pred is_safe) noexcept {
    if (orphans_.empty()) [[likely]] return {};
    return orphans_.take_if(is_safe);
  }
  // The same, handed to r's free policy.
  template <class Pred>
  void free_safe_orphans(Record& r, Pred is_safe) noexcept {
    retired_list safe = take_safe_orphans(is_safe);
    if (!safe.empty()) r.release_safe(std::move(safe), gauge_);
  }

  // Every orphaned node, for a scheme that checks each node it holds before freeing it.
  retired_list adopt_orphans() noexcept {
    if (orphans_.empty()) [[likely]] return {};
    return orphans_.take_all();
  }

  thread_registry<Record, domain_base> threads_{*this};
  orphanage orphans_;
  pending_gauge gauge_;

 private:
  friend class thread_registry<Record, domain_base>;

  void detach(Record& r) noexcept {
    static_cast<Domain&>(*this).on_thread_exit(r);
    r.freeing.drain(r);
    r.pending.flush(gauge_);
    r.depth.store(0, std::memory_order_relaxed);
  }

  bool shut_down_ = false;
};

// The declaration every scheme starts from: its nodes derive from retired_hook (a scheme that
// stamps nodes declares its own node_base), and its default domain.
template <class Scheme>
struct scheme_base {
  using node_base = retired_hook;

  // Built on first use and never destroyed, so that thread_local and static destructors may use it
  // whenever they run; what it holds at process exit is not freed (leak checkers see it as
  // reachable). Make a domain of your own to have everything freed when it is destroyed.
  static auto& default_domain() {
    static auto* domain = new typename Scheme::domain;
    return *domain;
  }
};

}  // namespace reclaim::core
