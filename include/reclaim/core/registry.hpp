// Per-thread records, registered implicitly on a thread's first use of a domain, released when the
// thread exits, and reused by later threads. There is no compile-time thread limit: records form a
// lock-free list that only grows (records are freed with the domain), so a scanner can walk it
// without any protection of its own.
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_set>
#include <vector>

#include "padding.hpp"

namespace reclaim::core {

// The part every scheme's per-thread record starts with.
struct alignas(cache_line) record_base {
  std::atomic<bool> in_use{true};
  record_base* next_record = nullptr;  // immutable once the record is published
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
inline constinit thread_local binding last_binding{0, nullptr, nullptr};

// Registries alive now, by id. A thread that exits after a domain was destroyed must not touch it;
// ids are never reused, so a stale binding can never match a new domain that got the same address.
struct live_registries {
  std::mutex mutex;
  std::unordered_set<std::uint64_t> ids;
  std::atomic<std::uint64_t> next_id{1};
};
inline live_registries& live() {
  static auto* registries = new live_registries;  // never destroyed: threads may exit after main
  return *registries;
}

// All bindings of this thread; its destructor runs at thread exit and detaches each live one.
struct thread_bindings {
  std::vector<binding> all;
  ~thread_bindings();
};
inline thread_bindings& bindings() {
  thread_local thread_bindings b;
  return b;
}

}  // namespace detail

class registry_base {
 public:
  registry_base(const registry_base&) = delete;
  registry_base& operator=(const registry_base&) = delete;
  std::uint64_t id() const noexcept { return id_; }

  // From here on, exiting threads skip this registry. The owning domain calls it first thing in its
  // destructor, before any of its members go away; calling it again is harmless.
  void close() noexcept {
    auto& live = detail::live();
    std::lock_guard lock(live.mutex);
    live.ids.erase(id_);
  }

 protected:
  registry_base() {
    auto& live = detail::live();
    std::lock_guard lock(live.mutex);
    id_ = live.next_id.fetch_add(1, std::memory_order_relaxed);
    live.ids.insert(id_);
  }
  ~registry_base() = default;

  // Runs on the exiting thread, under the live-registries lock.
  virtual void detach(record_base* record) noexcept = 0;

 private:
  friend struct detail::thread_bindings;
  std::uint64_t id_ = 0;
};

inline detail::thread_bindings::~thread_bindings() {
  auto& live = detail::live();
  std::lock_guard lock(live.mutex);
  for (const binding& b : all)
    if (live.ids.contains(b.registry_id)) b.registry->detach(b.record);
  last_binding = binding{0, nullptr, nullptr};
}

// The records of one domain. Owner (the scheme's domain) constructs records as Record(owner) and is
// told when a thread leaves with owner.detach(record): it must hand the record's garbage over and
// leave the record as a new thread should find it.
template <class Record, class Owner>
class thread_registry final : public registry_base {
  static_assert(std::is_base_of_v<record_base, Record>);

 public:
  explicit thread_registry(Owner& owner) : owner_(owner) {}
  ~thread_registry() {
    close();
    for (Record* r = head(); r;) {
      Record* next = next_of(r);
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

  // acquire: pairs with the release CAS in acquire_record(), so a walker sees every field a record
  // was constructed with; later pushes are RMWs and so continue the release sequence.
  Record* head() const noexcept { return head_.load(std::memory_order_acquire); }
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
  Record& local_slow() {
    auto& all = detail::bindings().all;
    for (const detail::binding& b : all) {
      if (b.registry_id == id()) {
        detail::last_binding = b;
        return static_cast<Record&>(*b.record);
      }
    }
    prune_dead_bindings(all);
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
    std::erase_if(all, [&](const detail::binding& b) { return !live.ids.contains(b.registry_id); });
  }

  Record* acquire_record() {
    for (Record* r = head(); r; r = next_of(r)) {
      // acquire: pairs with the release store in detach(), so we start from the state the last
      // owner left the record in.
      if (!r->in_use.load(std::memory_order_relaxed) &&
          !r->in_use.exchange(true, std::memory_order_acquire))
        return r;
    }
    auto* r = new Record(owner_);
    Record* first = head_.load(std::memory_order_relaxed);
    do {
      r->next_record = first;
      // release: publishes the constructed record; pairs with the acquire load in head().
    } while (!head_.compare_exchange_weak(first, r, std::memory_order_release,
                                          std::memory_order_relaxed));
    size_.fetch_add(1, std::memory_order_relaxed);
    return r;
  }

  void detach(record_base* record) noexcept override {
    owner_.detach(static_cast<Record&>(*record));
    // release: pairs with the acquire exchange in acquire_record().
    record->in_use.store(false, std::memory_order_release);
  }

  Owner& owner_;
  std::atomic<Record*> head_{nullptr};
  std::atomic<std::size_t> size_{0};
};

}  // namespace reclaim::core
