// SPDX-License-Identifier: MIT
// Per-thread records, registered implicitly on a thread's first use of a domain, released when the
// thread exits, and reused by later threads. There is no compile-time thread limit: records form a
// lock-free list that only grows (records are freed with the domain), so a scanner can walk it
// without any protection of its own.
//
// Thread exit. A thread's bindings (which record it holds in which domain) are released by the
// destructor of a POSIX thread-specific key, not of a C++ thread_local object. glibc runs C++
// thread_local destructors first and thread-specific destructors after them, so a thread_local
// object of the application whose destructor runs a container operation, whenever it was
// constructed, still finds the thread registered; and a use that registers the thread again during
// that phase sets the key again, so the record it took is released in the next round of
// destructors. The main thread runs no thread-specific destructors when the process exits: its
// bindings (plain heap memory, never freed) stay valid for static destructors after main() returns.
//
// No lock is held while a domain detaches a record: detaching runs user code (deleters of the
// garbage a scheme frees on the way out), which may use, create or destroy other domains. The
// process-wide lock only guards the set of live domains; a domain being destroyed waits for the
// detaches that had already begun on it.
//
// fork(). Only the thread that forks lives on in the child; the others stop for good wherever they
// were, possibly inside operations, holding an epoch, a token, a read phase, a slot, a lock of ours.
// A pthread_atfork() handler (registered with the first domain) takes the lock of the live domains
// around the fork, and in the child forgets every other thread: each domain's records in use by
// those threads are forgotten (domain_base::forget()), so that they hold up no grace period, no
// epoch, no signal round and no barrier, and the other process-wide locks of the schemes are reset
// by their own handlers (the mprotect barrier's, the handler installation's). What those threads
// held stays as it was (their garbage, which they may have been moving, is never touched again:
// the child leaks it, as it does their stacks). The child keeps working with every domain.
#pragma once
#include <pthread.h>

#include <atomic>
#include <cassert>
#include <cstdint>
#include <memory>
#include <mutex>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "platform/fork.hpp"
#include "platform/thread_exit.hpp"
#include "padding.hpp"
#include "retired.hpp"
#include "sync.hpp"

namespace reclaim::core {

// The part every scheme's per-thread record starts with.
struct alignas(cache_line) record_base {
  core::atomic<bool> in_use{true};
  record_base* next_record = nullptr;  // immutable once the record is published
  orphan_headers headers;              // for the garbage handed over when the owner exits
  // Only in a child of fork(): the owner was another thread of the parent (see the top). Stays in
  // use, never reused; barriers and the domain's destruction leave its garbage alone.
  bool forgotten = false;
};

class registry_base;

namespace detail {

struct binding {
  std::uint64_t registry_id;
  registry_base* registry;
  record_base* record;
};

// The binding this thread used last. Trivially constructible, so reading it is a plain TLS access
// with no lazy-initialisation guard: the whole fast path of thread_registry::local().
RECLAIM_THREAD_LOCAL(binding, last_binding);  // no registry

// All bindings of this thread, on the heap: released by the thread-specific key's destructor.
struct thread_bindings {
  std::vector<binding> all;
};
RECLAIM_THREAD_LOCAL(thread_bindings*, my_bindings, nullptr);

// The registry this thread is detaching from right now (debug builds name a deleter that destroys
// the domain it runs in, which would otherwise wait for itself for ever).
RECLAIM_THREAD_LOCAL(const registry_base*, detaching_from, nullptr);

// Registries alive now, by id, with the number of detaches in progress on each. A thread that
// exits after a domain was destroyed must not touch it; ids are never reused, so a stale binding
// can never match a new domain that got the same address.
struct live_registry {
  registry_base* registry;
  unsigned detaching;  // detaches in progress
};
struct live_registries {
  core::process_mutex mutex;
  core::process_condition detach_done;
  std::unordered_map<std::uint64_t, live_registry, std::hash<std::uint64_t>,
                     std::equal_to<std::uint64_t>,
                     core::process_allocator<std::pair<const std::uint64_t, live_registry>>>
      detaching;  // by id
  std::uint64_t next_id = 1;
};
void register_fork_handlers() noexcept;
inline live_registries& live() {
  static auto* registries = [] {
    auto* made = new live_registries;  // never destroyed: threads may exit after main
    register_fork_handlers();
    return made;
  }();
  return *registries;
}

void release_thread(void* bindings) noexcept;

// Created once per process, never deleted.
inline pthread_key_t thread_exit_key() {
  static const pthread_key_t key = new_thread_exit_key(&release_thread);
  return key;
}

// This thread's bindings, created (and the exit key set) on its first registration.
inline thread_bindings& bindings() {
  if (!my_bindings) [[unlikely]] {
    auto* b = new thread_bindings;
    pthread_setspecific(thread_exit_key(), b);
    my_bindings = b;
  }
  return *my_bindings;
}

}  // namespace detail

class registry_base {
 public:
  registry_base(const registry_base&) = delete;
  registry_base& operator=(const registry_base&) = delete;
  std::uint64_t id() const noexcept { return id_; }

  // From here on, exiting threads skip this registry; returns once the detaches already under way
  // have ended. The owning domain calls it first thing in its destructor, before any of its state
  // goes away; calling it again is harmless.
  void close() noexcept {
    assert(detail::detaching_from != this &&
           "reclaim: a deleter destroyed the domain whose garbage it was freeing at thread exit");
    auto& live = detail::live();
    std::unique_lock lock(live.mutex);
    auto it = live.detaching.find(id_);
    if (it == live.detaching.end()) return;
    live.detach_done.wait(lock, [&] { return it->second.detaching == 0; });
    live.detaching.erase(it);
  }

 protected:
  registry_base() {
    auto& live = detail::live();
    std::lock_guard lock(live.mutex);
    id_ = live.next_id++;
    live.detaching.emplace(id_, detail::live_registry{this, 0});
  }
  ~registry_base() = default;

  // Runs on the exiting thread, with no lock held.
  virtual void detach(record_base* record) noexcept = 0;
  // In a child of fork(): forgets every record in use by a thread other than this one.
  virtual void forget_other_threads() noexcept = 0;

 private:
  friend void detail::release_thread(void*) noexcept;
  friend void detail::register_fork_handlers() noexcept;

  // Thread exit: detaches `b` if its registry is still alive. The registry cannot close while the
  // count of detaches in progress is raised.
  static void detach_if_live(const detail::binding& b) noexcept {
    auto& live = detail::live();
    {
      std::lock_guard lock(live.mutex);
      auto it = live.detaching.find(b.registry_id);
      if (it == live.detaching.end()) return;
      ++it->second.detaching;
    }
    detail::detaching_from = b.registry;
    b.registry->detach(b.record);
    detail::detaching_from = nullptr;
    std::lock_guard lock(live.mutex);
    // Notified under the lock: the closer cannot return, and free the registry, before we let go.
    if (--live.detaching.at(b.registry_id).detaching == 0) live.detach_done.notify_all();
  }

  std::uint64_t id_ = 0;
};

// The thread-specific key's destructor. Detaching may run deleters that use domains again, binding
// this thread anew (to another domain, or to a new record of one it was detached from): those
// bindings are detached in the next pass. The fast path is cleared first, so that a deleter never
// reaches a record being detached.
inline void detail::release_thread(void* p) noexcept {
  auto* mine = static_cast<thread_bindings*>(p);
  my_bindings = mine;  // pthread cleared the key's value, not ours
  while (!mine->all.empty()) {
    std::vector<binding> batch;
    batch.swap(mine->all);
    last_binding = binding{0, nullptr, nullptr};
    for (const binding& b : batch) registry_base::detach_if_live(b);
  }
  last_binding = binding{0, nullptr, nullptr};
  my_bindings = nullptr;
  delete mine;
}

// A thread's exit, for a thread that ends without pthread's thread-specific destructors: the
// verification build's simulated threads (core/verify/relacy.hpp).
inline void leave_thread() noexcept {
  if (detail::thread_bindings* mine = detail::my_bindings) detail::release_thread(mine);
}

// Fork handlers (see the top). Prepare: the lock of the live domains is held across fork(), so that
// the child's copy of the set is whole. Parent: released. Child: released (by the thread that took
// it, the only one there), detaches that other threads had in progress are over, and every live
// domain forgets the records of those threads.
inline void detail::register_fork_handlers() noexcept {
  (void)pthread_atfork([] { live().mutex.lock(); }, [] { live().mutex.unlock(); },
                       [] {
                         auto& all = live();
                         all.mutex.unlock();
                         forks_passed.fetch_add(1, std::memory_order_relaxed);
                         for (auto& [id, entry] : all.detaching) {
                           entry.detaching = 0;
                           entry.registry->forget_other_threads();
                         }
                       });
}

// The records of one domain. Record is default-constructible and declares how many batches of
// garbage it hands over at exit (Record::orphan_batches). Owner is told when a thread leaves with
// owner.detach(record): it must hand the record's garbage over and leave the record as a new
// thread should find it.
template <class Record, class Owner>
class thread_registry final : public registry_base {
  static_assert(std::is_base_of_v<record_base, Record>);

 public:
  explicit thread_registry(Owner& owner) : owner_(owner) {}
  ~thread_registry() {
    close();
    for (Record* r = head(); r;) {
      Record* next = next_of(r);
      if (r->forgotten)
        keep_forgotten(r);
      else
        delete r;
      r = next;
    }
  }

  // This thread's record, registering the thread on first use.
  Record& local() {
    const detail::binding& b = detail::last_binding;
    if (b.registry_id == id()) [[likely]] return static_cast<Record&>(*b.record);
    return local_slow();
  }

  // seq_cst: a walk that follows a seq_cst operation of its own (an epoch pass after its read of
  // the epoch, a scan after its fence) sees every record whose push (seq_cst, acquire_record())
  // precedes it in the single order S, so a record it misses registered after it and reads what
  // came before (the schemes argue from there). An acquire load would not do: it may return an
  // old head however long ago the push was, and the walk would miss a running thread (the model
  // checker found a pass that did). Its acquire part pairs with the push: a walker sees every
  // field a record was constructed with; later pushes are RMWs and so continue the release
  // sequence. A plain load on x86, as acquire is.
  Record* head() const noexcept {
    return head_.load(RECLAIM_MUTATED(registry_head_acquire) ? std::memory_order_acquire
                                                             : std::memory_order_seq_cst);
  }
  static Record* next_of(const Record* r) noexcept { return static_cast<Record*>(r->next_record); }

  template <class F>
  void for_each(F&& f) const {
    for (Record* r = head(); r; r = next_of(r)) f(*r);
  }

  // Records ever created: an upper bound on the threads using the domain at once.
  std::size_t size() const noexcept { return size_.load(std::memory_order_relaxed); }

  std::size_t in_use() const noexcept {
    std::size_t n = 0;
    for_each([&](const Record& r) { n += r.in_use.load(std::memory_order_relaxed); });
    return n;
  }

 private:
  [[gnu::noinline]] Record& local_slow() {
    auto& all = detail::bindings().all;
    for (const detail::binding& b : all) {
      if (b.registry_id == id()) {
        detail::last_binding = b;
        return static_cast<Record&>(*b.record);
      }
    }
    prune_dead_bindings(all);
    all.reserve(all.size() + 1);  // the push below cannot throw once we hold a record
    detail::binding b{id(), this, acquire_record()};
    all.push_back(b);
    detail::last_binding = b;
    return static_cast<Record&>(*b.record);
  }

  // A long-lived thread that uses many short-lived domains would otherwise keep a binding for each
  // and scan them all on every miss.
  static void prune_dead_bindings(std::vector<detail::binding>& all) {
    auto& live = detail::live();
    std::lock_guard lock(live.mutex);
    std::erase_if(all, [&](const detail::binding& b) {
      return !live.detaching.contains(b.registry_id);
    });
  }

  // A free record, or a new one; either way with the headers its owner needs at exit.
  Record* acquire_record() {
    for (Record* r = head(); r; r = next_of(r)) {
      // acquire: pairs with the release store in detach(), so we start from the state the last
      // owner left the record in.
      if (!r->in_use.load(std::memory_order_relaxed) &&
          !r->in_use.exchange(true, std::memory_order_acquire)) {
        try {
          r->headers.reserve(Record::orphan_batches);
        } catch (...) {
          r->in_use.store(false, std::memory_order_release);
          throw;
        }
        return r;
      }
    }
    auto r = std::make_unique<Record>();
    r->headers.reserve(Record::orphan_batches);
    Record* first = head_.load(std::memory_order_acquire);
    do {
      r->next_record = first;
      // seq_cst: in S before everything this thread does with the record (head()); its release
      // part publishes the constructed record. acquire (success and failure): the records behind
      // ours were published by earlier pushes, and a walk that starts from our own record
      // (Token-EBR's pass) reads them.
    } while (!head_.compare_exchange_weak(first, r.get(), std::memory_order_seq_cst,
                                          std::memory_order_acquire));
    size_.fetch_add(1, std::memory_order_relaxed);
    return r.release();
  }

  void detach(record_base* record) noexcept override {
    owner_.detach(static_cast<Record&>(*record));
    // release: pairs with the acquire exchange in acquire_record().
    record->in_use.store(false, std::memory_order_release);
  }

  // The child of a fork(), single-threaded: Owner forgets every record in use but not bound to
  // this thread (owner.forget(record)), if it cares (a registry of thread indices does not: a
  // forgotten index just stays taken), and tells it which record is this thread's
  // (owner.survive_fork(record)), if it has that step.
  void forget_other_threads() noexcept override {
    if constexpr (requires(Record& r) { owner_.forget(r); }) {
      const record_base* mine = nullptr;
      if (detail::my_bindings)
        for (const detail::binding& b : detail::my_bindings->all)
          if (b.registry_id == id()) mine = b.record;
      for (Record* r = head(); r; r = next_of(r)) {
        if (r != mine) {
          if (r->in_use.load(std::memory_order_relaxed)) owner_.forget(*r);
        } else if constexpr (requires { owner_.survive_fork(*r); }) {
          owner_.survive_fork(*r);
        }
      }
    }
  }

  // A forgotten record (a thread of the parent of this forked process) holds what that thread held,
  // maybe half moved: never freed, kept reachable from here so that leak checkers see memory held
  // on purpose, not lost.
  static void keep_forgotten(Record* r) noexcept {
    static constinit std::atomic<record_base*> kept{nullptr};
    record_base* first = kept.load(std::memory_order_relaxed);
    do {
      r->next_record = first;
    } while (!kept.compare_exchange_weak(first, r, std::memory_order_relaxed));
  }

  Owner& owner_;
  core::atomic<Record*> head_{nullptr};
  core::atomic<std::size_t> size_{0};
};

}  // namespace reclaim::core
