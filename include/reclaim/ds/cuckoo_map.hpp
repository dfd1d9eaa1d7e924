// SPDX-License-Identifier: MIT
// cuckoo_map: a concurrent cuckoo hash table in the style of libcuckoo (Li, Andersen, Kaminsky,
// Freedman, "Algorithmic improvements for fast concurrent cuckoo hashing", EuroSys 2014), in the
// version that paper 004 (Dice, Herlihy, Kogan, section 7.2) measured: the table instance is
// protected per operation, so that a resize can retire the old table.
//
// What it is. Elements live in the table itself, in buckets of 4 slots, each slot with a one-byte
// tag (partial key) taken from the top bits of the key's mixed hash. A key may sit in two buckets:
// i1, from the low bits of the mixed hash, and i2 = alt(i1, tag), where alt(i, tag) = (i ^ (tag +
// 1) x c) mod buckets is its own inverse, so that an element's other bucket follows from the
// bucket and the tag alone. Every operation locks the key's two buckets (striped spinlocks, taken
// in stripe order) and looks in both. An insert that finds both full makes room: a breadth-first
// search from the two buckets, reading one bucket at a time under its lock, finds the shortest
// path of at most 5 buckets to a free slot, and the elements along it are moved from its end, each
// under the locks of the two buckets it moves between, after checking that the path still holds;
// the insert then tries again. When no path exists the table grows: the grower takes every lock
// of the table, copies the elements into a table twice as large, publishes it and retires the old
// one.
//
// Reclamation. The only object ever retired is a table. An operation reads the table pointer with
// g.protect(table_, 0), locks its buckets and checks that the table is still the current one: a
// resize publishes the new table before it releases the old table's locks, so an operation that
// got its locks after a resize sees the new pointer and starts over, and one that got them before
// works on the current table until it unlocks. The protection keeps the old table (its locks
// above all) alive for those that wait on its locks during a resize. Under hazard pointers that is
// one slot, validated by re-reading the table pointer (a table is retired only after it was
// replaced); under NBR the read phase is that one load, and the write phase reserves the table
// before taking any lock. Elements themselves need no reclamation: they are read and written only
// under their bucket's lock, and an erase destroys its element in place.
//
// Keys and values. `cuckoo_map<Key, Value, Scheme, Hash, KeyEqual>` is a map, `cuckoo_set<Key,
// Scheme, Hash, KeyEqual>` a set (detail/container_api.hpp). Elements are copied when a cuckoo
// path moves them and when the table grows (a const element cannot be moved from), so keys and
// values must be copy constructible; the old table's copies are destroyed when the scheme frees
// it. visit() calls f under the key's two bucket locks: f must not use the same map (it would wait
// for itself); other containers are fine.
//
// Sizes. The table starts with `capacity` slots rounded up to a power of two (at least 4), 4096
// by default, and doubles whenever an insert finds no path. Locks: one per bucket up to 1024
// stripes. The lab sizes the table from its key range, so that its prefill (half the range) loads
// it to 50%, as in paper 004's Figure 14.
//
// Progress: blocking (bucket locks). Differences from libcuckoo: the table pointer is protected
// by whatever scheme the map is given instead of libcuckoo's own hazard pointers; tags are 8 bits
// of a 64-bit mix of Hash's value (libcuckoo hashes keys with its own hash); lookups lock like
// updates, as libcuckoo's lock-striped version does (no optimistic version counters); a grower
// copies rather than moves; size() is the striped counter every container here keeps
// (detail/approximate_size.hpp), not libcuckoo's per-lock counts.
#pragma once
#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "../concepts.hpp"
#include "../read_phase.hpp"
#include "detail/container_api.hpp"
#include "detail/container_base.hpp"
#include "detail/lifetime_check.hpp"
#include "detail/spinlock.hpp"
#include "../core/sync.hpp"

namespace reclaim::ds {

// The cuckoo hash table, a set (Value = void) or a map: used as cuckoo_set and cuckoo_map
// (below). Elements live in the table, under bucket locks; only a table replaced by a resize is
// retired.
template <class Key, class Value, scheme Scheme, class Hash = std::hash<Key>,
          class KeyEqual = std::equal_to<Key>>
class basic_cuckoo_map
    : public detail::container_api<basic_cuckoo_map<Key, Value, Scheme, Hash, KeyEqual>, Key,
                                   Value>,
      public detail::container_base<Scheme> {
  using api = detail::container_api<basic_cuckoo_map, Key, Value>;
  using base = detail::container_base<Scheme>;
  friend api;
  using base::domain_, base::life_;
  using element = detail::element<Key, Value>;
  static_assert(std::is_copy_constructible_v<Key> &&
                    (std::is_void_v<Value> || std::is_copy_constructible_v<Value>),
                "cuckoo_map copies its elements when it moves them (a const element cannot be "
                "moved from): Key and Value must be copy constructible");

 public:
  // Its name in the lab and in messages, the domain of Scheme it retires tables into and the guard
  // each operation holds, its hash and equality, the slots of a bucket, and the number of slots a
  // table starts with by default.
  static constexpr std::string_view name = api::is_map ? "cuckoo_map" : "cuckoo_set";
  using typename base::domain_type, typename base::guard_type;
  using hasher = Hash;
  using key_equal = KeyEqual;
  static constexpr unsigned slots_per_bucket = 4;
  static constexpr std::size_t default_capacity = 4096;
  static constexpr unsigned slots_used = 1;         // the table
  static constexpr unsigned reservations_used = 1;  // the table

  static constexpr support offers(needs) { return {true}; }  // the table pointer, re-read

  // `capacity` slots, rounded up to a power of two (at least one bucket of 4).
  explicit basic_cuckoo_map(domain_type& domain = Scheme::default_domain(),
                            std::size_t capacity = default_capacity, const Hash& hash = Hash(),
                            const KeyEqual& equal = KeyEqual())
      : base(domain),
        hash_(hash),
        equal_(equal),
        table_(new table(std::bit_ceil(std::max<std::size_t>(capacity, slots_per_bucket)) /
                         slots_per_bucket)) {}
  ~basic_cuckoo_map() {
    life_.before_destruction(domain_);
    delete table_.load(std::memory_order_relaxed);
  }

  // Whether key is present, looked up under the locks of its two buckets.
  bool contains(const Key& key) {
    return with_buckets_locked(key, [&](locked_pair& b) -> std::optional<bool> {
      return b.find(key, equal_).in != nullptr;
    });
  }

  // Map: calls f(const Value&) with the key's value, if present, under the key's two bucket locks
  // (f must not use this map); the reference must not escape f. Returns whether it was present.
  template <class F>
    requires api::is_map
  bool visit(const Key& key, F&& f) {
    return with_buckets_locked(key, [&](locked_pair& b) -> std::optional<bool> {
      const slot_ref s = b.find(key, equal_);
      if (s.in) f(std::as_const(s.in->at(s.slot).value));
      return s.in != nullptr;
    });
  }

  // Removes key (and its value), destroying the element in place under the locks of its two
  // buckets; returns whether it was present.
  bool erase(const Key& key) {
    const bool found = with_buckets_locked(key, [&](locked_pair& b) -> std::optional<bool> {
      const slot_ref s = b.find(key, equal_);
      if (s.in) s.in->destroy(s.slot);
      return s.in != nullptr;
    });
    return found && this->erased();
  }

  // Quiescent: the current table's slots (a power of two). Unprotected: a concurrent resize may
  // free the table it reads.
  std::size_t unsafe_capacity() const noexcept {
    return table_.load(std::memory_order_acquire)->bucket_count() * slots_per_bucket;
  }

  // Quiescent (unsafe_size(), unsafe_for_each() and unsafe_key_sum() come from container_api):
  // every element sits in one of its key's two buckets under its key's tag, and no key is there
  // twice.
  bool unsafe_well_formed() const {
    const table& t = *table_.load(std::memory_order_acquire);
    for (std::size_t b = 0; b < t.bucket_count(); ++b) {
      const bucket& here = t.buckets[b];
      for (unsigned s = 0; s < slots_per_bucket; ++s) {
        if (!here.occupied(s)) continue;
        const Key& key = here.at(s).key;
        const std::uint64_t h = mixed_hash(key);
        const std::size_t i1 = t.primary(h), i2 = t.alternate(i1, tag_of(h));
        if (here.tags[s] != tag_of(h) || (b != i1 && b != i2)) return false;
        if (count(t.buckets[i1], key) + (i2 != i1 ? count(t.buckets[i2], key) : 0) != 1)
          return false;
      }
    }
    return true;
  }

 private:
  // A bucket: 4 slots, an occupancy bit and a tag per slot. Guarded by its stripe's lock.
  struct bucket {
    bucket() = default;
    bucket(const bucket&) = delete;
    bucket& operator=(const bucket&) = delete;
    ~bucket() {
      for (unsigned s = 0; s < slots_per_bucket; ++s)
        if (occupied(s)) at(s).~element();
    }

    bool occupied(unsigned s) const noexcept { return (occupancy >> s) & 1u; }
    // The first free slot, or slots_per_bucket if none.
    unsigned free_slot() const noexcept {
      return static_cast<unsigned>(std::countr_one(occupancy));
    }
    element& at(unsigned s) noexcept { return *std::launder(reinterpret_cast<element*>(raw[s])); }
    const element& at(unsigned s) const noexcept {
      return *std::launder(reinterpret_cast<const element*>(raw[s]));
    }
    template <class... KV>
    void construct(unsigned s, std::uint8_t tag, KV&&... kv) {
      ::new (static_cast<void*>(raw[s])) element(std::forward<KV>(kv)...);
      tags[s] = tag;
      occupancy = static_cast<std::uint8_t>(occupancy | (1u << s));
    }
    // A copy of another bucket's element (a cuckoo move, a resize).
    void copy_from(unsigned s, const bucket& from, unsigned from_slot) {
      const element& e = from.at(from_slot);
      if constexpr (api::is_map)
        construct(s, from.tags[from_slot], e.key, e.value);
      else
        construct(s, from.tags[from_slot], e.key);
    }
    void destroy(unsigned s) noexcept {
      at(s).~element();
      occupancy = static_cast<std::uint8_t>(occupancy & ~(1u << s));
    }

    std::uint8_t occupancy = 0;
    std::uint8_t tags[slots_per_bucket] = {};
    alignas(element) std::byte raw[slots_per_bucket][sizeof(element)];
  };

  struct alignas(64) stripe {
    detail::spinlock lock;
  };
  static constexpr std::size_t max_stripes = 1024;

  // One instance of the table: what a resize replaces and retires.
  struct table : Scheme::node_base {
    explicit table(std::size_t count)
        : mask(count - 1),
          stripe_mask(std::min(count, max_stripes) - 1),
          buckets(std::make_unique<bucket[]>(count)),
          stripes(std::make_unique<stripe[]>(stripe_mask + 1)) {}

    std::size_t bucket_count() const noexcept { return mask + 1; }
    std::size_t primary(std::uint64_t h) const noexcept {
      return static_cast<std::size_t>(h) & mask;
    }
    // The other bucket of an element in bucket i with this tag (an involution).
    std::size_t alternate(std::size_t i, std::uint8_t tag) const noexcept {
      return (i ^ static_cast<std::size_t>((tag + 1ull) * 0xc6a4a7935bd1e995ull)) & mask;
    }
    detail::spinlock& lock_of(std::size_t b) noexcept { return stripes[b & stripe_mask].lock; }

    const std::size_t mask;
    const std::size_t stripe_mask;
    const std::unique_ptr<bucket[]> buckets;
    const std::unique_ptr<stripe[]> stripes;
  };

  // Where an element is: the bucket it is in (null for nowhere) and the slot.
  struct slot_ref {
    bucket* in = nullptr;
    unsigned slot = 0;
  };

  // The two buckets of a key, locked (each stripe once, in stripe order) while this lives.
  class locked_pair {
   public:
    locked_pair(table& t, std::uint64_t h) noexcept
        : tag_(tag_of(h)),
          i1_(t.primary(h)),
          i2_(t.alternate(i1_, tag_)),
          b1_(t.buckets[i1_]),
          b2_(t.buckets[i2_]),
          first_(&t.lock_of(std::min(i1_ & t.stripe_mask, i2_ & t.stripe_mask))),
          second_(&t.lock_of(std::max(i1_ & t.stripe_mask, i2_ & t.stripe_mask))) {
      if (first_ == second_) second_ = nullptr;
      first_->lock();
      if (second_) second_->lock();
    }
    ~locked_pair() {
      if (second_) second_->unlock();
      first_->unlock();
    }
    locked_pair(const locked_pair&) = delete;
    locked_pair& operator=(const locked_pair&) = delete;

    slot_ref find(const Key& key, const KeyEqual& equal) const noexcept {
      if (const unsigned s = find_in(b1_, key, equal); s < slots_per_bucket) return {&b1_, s};
      if (i2_ != i1_)
        if (const unsigned s = find_in(b2_, key, equal); s < slots_per_bucket) return {&b2_, s};
      return {};
    }
    // A free slot of the two buckets, the first bucket's first.
    slot_ref free_slot() const noexcept {
      if (const unsigned s = b1_.free_slot(); s < slots_per_bucket) return {&b1_, s};
      if (const unsigned s = b2_.free_slot(); s < slots_per_bucket) return {&b2_, s};
      return {};
    }
    std::uint8_t tag() const noexcept { return tag_; }

   private:
    unsigned find_in(const bucket& b, const Key& key, const KeyEqual& equal) const noexcept {
      for (unsigned s = 0; s < slots_per_bucket; ++s)
        if (b.occupied(s) && b.tags[s] == tag_ && equal(b.at(s).key, key)) return s;
      return slots_per_bucket;
    }

    const std::uint8_t tag_;
    const std::size_t i1_, i2_;
    bucket& b1_;
    bucket& b2_;
    detail::spinlock* first_;
    detail::spinlock* second_;
  };

  // murmur3's 64-bit finalizer over Hash's value: std::hash of an integer is the integer, whose
  // low bits (the bucket) and top bits (the tag) must both vary.
  std::uint64_t mixed_hash(const Key& key) const {
    std::uint64_t h = static_cast<std::uint64_t>(hash_(key));
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
  }
  static std::uint8_t tag_of(std::uint64_t h) noexcept {
    return static_cast<std::uint8_t>(h >> 56);
  }

  // After locking: whether t is still the current table (else its elements have moved).
  bool current(const table* t) const noexcept {
    // acquire: pairs with the release store in grow(); a table published before our locks were
    // taken is seen here.
    return table_.load(std::memory_order_acquire) == t;
  }

  unsigned count(const bucket& b, const Key& key) const {
    unsigned n = 0;
    for (unsigned s = 0; s < slots_per_bucket; ++s) n += b.occupied(s) && equal_(b.at(s).key, key);
    return n;
  }

  // An operation on the key's two buckets: f(b) with them locked in the current table, which
  // answers, or says (nullopt) that both are full; then a cuckoo path makes room, or the table
  // grows, and f is called again. The guard and the restart point are here, in the frame that
  // holds the read phase (the table's load) and the write phase (the locks).
  template <class F>
  bool with_buckets_locked(const Key& key, F&& f) {
    detail::lifetime_check::operation op(life_);
    guard_type g(domain_);
    const std::uint64_t h = mixed_hash(key);
    for (;;) {
      RECLAIM_READ_PHASE(g);
      table* t = g.protect(table_, 0);
      g.write_phase(t);
      {
        locked_pair b(*t, h);
        if (!current(t)) continue;
        if (const std::optional<bool> answer = f(b)) return *answer;
      }
      if (!make_room<true>(*t, h)) grow(g, t);
    }
  }

  template <class K, class... V>
  bool emplace(K&& key, V&&... value) {
    return with_buckets_locked(key, [&](locked_pair& b) -> std::optional<bool> {
      if (b.find(key, equal_).in) return false;
      const slot_ref s = b.free_slot();
      if (!s.in) return std::nullopt;
      // The key and value are copied (or moved) here, once: we return next.
      s.in->construct(s.slot, b.tag(), std::forward<K>(key), std::forward<V>(value)...);
      return true;
    });
  }

  // --- cuckoo paths ---------------------------------------------------------------------------

  static constexpr unsigned max_path = 5;     // buckets on a path, its start included
  static constexpr unsigned max_visits = 512;  // buckets a search looks at

  // A bucket the breadth-first search reached: from slot `slot` of its parent's bucket (the
  // element there moves here), `depth` moves from one of the key's buckets.
  struct visit_entry {
    std::size_t index;  // of the bucket
    std::uint16_t parent;
    std::uint8_t slot;
    std::uint8_t depth;
  };

  // Searches from the key's buckets for the closest free slot (at most max_path - 1 moves away),
  // then moves the elements of the path from its end, so that a slot of a key's bucket frees up.
  // Returns false when there is no such path (the table is too full: grow it); true when it moved
  // the path, or found it changed (the insert tries again). Shared: the table is published, so
  // each bucket is read under its lock, and each move locks its two buckets and first checks that
  // the path still holds; otherwise the table is one that grow() fills and no one else sees.
  template <bool Shared>
  bool make_room(table& t, std::uint64_t h) {
    visit_entry seen[max_visits];
    const std::size_t i1 = t.primary(h);
    const std::size_t i2 = t.alternate(i1, tag_of(h));
    unsigned visited = 0;
    seen[visited++] = {i1, 0, 0, 0};
    if (i2 != i1) seen[visited++] = {i2, 0, 0, 0};
    for (unsigned next = 0; next < visited; ++next) {
      const visit_entry here = seen[next];
      std::uint8_t occupancy, tags[slots_per_bucket];
      {
        const bucket& b = t.buckets[here.index];
        if constexpr (Shared) t.lock_of(here.index).lock();
        occupancy = b.occupancy;
        std::copy(b.tags, b.tags + slots_per_bucket, tags);
        if constexpr (Shared) t.lock_of(here.index).unlock();
      }
      if (const unsigned free = static_cast<unsigned>(std::countr_one(occupancy));
          free < slots_per_bucket) {
        if (here.depth == 0) return true;  // a key's bucket has room already: try again
        return move_path<Shared>(t, seen, next, free);
      }
      if (here.depth + 1u >= max_path) continue;
      for (unsigned s = 0; s < slots_per_bucket && visited < max_visits; ++s)
        seen[visited++] = {t.alternate(here.index, tags[s]), static_cast<std::uint16_t>(next),
                           static_cast<std::uint8_t>(s), static_cast<std::uint8_t>(here.depth + 1)};
    }
    return false;
  }

  // Moves the elements of the path that ends at seen[last], whose slot `free` was free, one step
  // each, from the end: each into the slot the previous move freed. Shared: each move locks its
  // two buckets and first checks that the table is current, the element is there and its other
  // bucket is the next one, and the slot is still free; otherwise it stops (the path changed).
  template <bool Shared>
  bool move_path(table& t, const visit_entry* seen, unsigned last, unsigned free) {
    for (unsigned to = last; seen[to].depth > 0; to = seen[to].parent) {
      const visit_entry& dst = seen[to];
      const visit_entry& src = seen[dst.parent];
      bucket& from = t.buckets[src.index];
      bucket& into = t.buckets[dst.index];
      if constexpr (Shared) {
        const std::size_t a = src.index & t.stripe_mask, b = dst.index & t.stripe_mask;
        detail::spinlock& first = t.lock_of(std::min(a, b));
        detail::spinlock& second = t.lock_of(std::max(a, b));
        first.lock();
        if (&second != &first) second.lock();
        struct unlock_both {
          detail::spinlock& first;
          detail::spinlock& second;
          ~unlock_both() {
            if (&second != &first) second.unlock();
            first.unlock();
          }
        } unlock{first, second};
        if (!current(&t) || !from.occupied(dst.slot) || into.occupied(free) ||
            t.alternate(src.index, from.tags[dst.slot]) != dst.index)
          return true;
        into.copy_from(free, from, dst.slot);
        from.destroy(dst.slot);
      } else {
        into.copy_from(free, from, dst.slot);
        from.destroy(dst.slot);
      }
      free = dst.slot;  // the slot the element left: the next move fills it
    }
    return true;
  }

  // --- growing ------------------------------------------------------------------------------

  // Every stripe of a table, locked in order while this lives.
  class locked_table {
   public:
    explicit locked_table(table& t) noexcept : t_(t) {
      for (std::size_t s = 0; s <= t_.stripe_mask; ++s) t_.stripes[s].lock.lock();
    }
    ~locked_table() {
      for (std::size_t s = 0; s <= t_.stripe_mask; ++s) t_.stripes[s].lock.unlock();
    }
    locked_table(const locked_table&) = delete;
    locked_table& operator=(const locked_table&) = delete;

   private:
    table& t_;
  };

  // Replaces t by a table twice as large (or larger, if copying into it finds no room), unless
  // another thread replaced it first, and retires t.
  void grow(guard_type& g, table* t) {
    {
      locked_table all(*t);
      if (!current(t)) return;
      std::size_t buckets = 2 * t->bucket_count();
      table* bigger;
      for (;;) {
        bigger = g.template create<table>(buckets);
        if (copy_all(*t, *bigger)) break;
        delete bigger;  // never published: no one else saw it
        buckets *= 2;
      }
      // release: the new table's elements are visible to whoever loads the pointer; pairs with
      // the acquire in protect() and in current().
      table_.store(bigger, std::memory_order_release);
    }  // the old table's locks: waiters see the new table and start over
    g.retire(t);  // its copies of the elements are destroyed when the scheme frees it
  }

  // Copies every element of `from` into the empty, unpublished table `into`, moving elements of
  // `into` along cuckoo paths where needed (no locks: no one else sees it). Returns false if one
  // found no room. A copy that throws leaves `from` as it was; `into` is then destroyed.
  bool copy_all(const table& from, table& into) {
    try {
      for (std::size_t b = 0; b < from.bucket_count(); ++b)
        for (unsigned s = 0; s < slots_per_bucket; ++s)
          if (from.buckets[b].occupied(s) && !place_copy(into, from.buckets[b], s)) return false;
    } catch (...) {
      delete &into;
      throw;
    }
    return true;
  }

  // One element into an unpublished table: a free slot of its buckets, or one made by moving
  // others along a cuckoo path. Returns false if there is none.
  bool place_copy(table& t, const bucket& source, unsigned slot) {
    const std::uint64_t h = mixed_hash(source.at(slot).key);
    const std::size_t i = t.primary(h);
    const std::size_t j = t.alternate(i, tag_of(h));
    if (t.buckets[i].free_slot() == slots_per_bucket &&
        t.buckets[j].free_slot() == slots_per_bucket && !make_room<false>(t, h))
      return false;
    bucket& b = t.buckets[t.buckets[i].free_slot() < slots_per_bucket ? i : j];
    b.copy_from(b.free_slot(), source, slot);
    return true;
  }

  template <class F>
  void for_each_element(F f) const {
    const table& t = *table_.load(std::memory_order_acquire);
    for (std::size_t b = 0; b < t.bucket_count(); ++b)
      for (unsigned s = 0; s < slots_per_bucket; ++s)
        if (t.buckets[b].occupied(s)) f(t.buckets[b].at(s));
  }

  [[no_unique_address]] Hash hash_;
  [[no_unique_address]] KeyEqual equal_;
  core::atomic<table*> table_;
};

// A map from keys to values fixed at insertion.
template <class Key, class Value, scheme Scheme, class Hash = std::hash<Key>,
          class KeyEqual = std::equal_to<Key>>
using cuckoo_map = basic_cuckoo_map<Key, Value, Scheme, Hash, KeyEqual>;
// A set of keys.
template <class Key, scheme Scheme, class Hash = std::hash<Key>,
          class KeyEqual = std::equal_to<Key>>
using cuckoo_set = basic_cuckoo_map<Key, void, Scheme, Hash, KeyEqual>;

}  // namespace reclaim::ds
