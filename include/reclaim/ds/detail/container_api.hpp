// SPDX-License-Identifier: MIT
// What every container of ds/ shares in its set and map forms: the element a node holds, and the
// public operations that are the same whatever the algorithm.
//
// One class template per container serves both forms: Value = void is the set (a node holds only
// its key, so an int64 set's node is as small as it ever was), any other Value the map. Keys and
// values are constructed when the node is created, never change, and are destroyed with the node
// when the scheme frees it; readers therefore need no synchronization beyond the scheme's
// protection.
//
// The container (Derived) provides, privately (friend container_api):
//   emplace(key, value...)   inserts if absent; the node is created in the write phase
//   for_each_element(f)      quiescent: f(const element&) for every element (in key order, except
//                            the hash map's: bucket by bucket)
// and, publicly, contains(key), erase(key) and, for a map, visit(key, f) (lookup_api.hpp writes
// contains and visit around a container's lookup hook; bucket_api.hpp all four, and emplace, for
// the Harris-Michael containers). Every successful erase returns through erased(), and anything
// else that adds or removes an element outside insert() and erase() calls count_inserted() or
// erased(), so that size() counts it. This base derives the rest: insert() for both forms, find()
// (a copy, made inside visit), size() (approximate_size.hpp: safe at any time, exact when no
// operation runs), and the quiescent validation helpers unsafe_size(), unsafe_for_each() and, for
// integral keys, unsafe_key_sum(), named unsafe_ because they walk the structure unprotected: they
// may be called only while no other thread uses the container.
#pragma once
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>

#include "approximate_size.hpp"

namespace reclaim::ds::detail {

// What a node holds besides its links: the key, and the value of a map.
template <class Key, class Value>
struct element {
  template <class K, class V>
  element(K&& k, V&& v) : key(std::forward<K>(k)), value(std::forward<V>(v)) {}
  const Key key;
  const Value value;
};
template <class Key>
struct element<Key, void> {
  template <class K>
  explicit element(K&& k) : key(std::forward<K>(k)) {}
  const Key key;
};

// Whether a comparison or hash accepts keys of other types as they are (std::less<>, ds::hash of a
// string): what heterogeneous lookup requires, as in std's associative containers.
template <class T>
concept transparent = requires { typename T::is_transparent; };

// How a search takes the key: by value where a copy is trivial and small (an integer then stays in
// a register; through a reference to the caller's object, whose address has escaped, it would be
// loaded again after every acquire load of the traversal), by reference otherwise (a read phase
// copies nothing that may allocate). An array (a string literal looked up in a string map) is
// taken by reference too: by value it would decay to a pointer that drops its const.
template <class Key>
using search_key = std::conditional_t<std::is_trivially_copyable_v<Key> && !std::is_array_v<Key> &&
                                          sizeof(Key) <= sizeof(void*),
                                      Key, const Key&>;

// The bucket of `hash` among 2^bits buckets (the hash tables): Fibonacci hashing, the top bits of
// hash x 2^64/phi, which spreads consecutive integers (std::hash of an integer is the integer) over
// all buckets.
constexpr std::size_t fibonacci_bucket(std::uint64_t hash, unsigned bits) noexcept {
  const std::uint64_t h = hash * 0x9E3779B97F4A7C15ull;
  return bits == 0 ? 0 : static_cast<std::size_t>(h >> (64 - bits));
}

template <class Derived, class Key, class Value>
class container_api {
 public:
  // The key and value types, named as std's maps name them, and whether this is the map form.
  using key_type = Key;
  using mapped_type = Value;  // void for a set
  static constexpr bool is_map = !std::is_void_v<Value>;

  // Set: inserts the key if absent; returns whether it did.
  bool insert(const Key& key)
    requires(!is_map)
  {
    return count_inserted(self().emplace(key));
  }
  bool insert(Key&& key)
    requires(!is_map)
  {
    return count_inserted(self().emplace(std::move(key)));
  }

  // Map: inserts (key, value) if the key is absent; returns false and changes nothing if present.
  template <class V = Value>
    requires is_map
  bool insert(Key key, std::type_identity_t<V> value) {
    return count_inserted(self().emplace(std::move(key), std::move(value)));
  }

  // Map: a copy of the key's value, made while the node is protected (under nbr in the write phase
  // that reserved it, since a copy may allocate).
  template <class V = Value>
    requires is_map
  std::optional<V> find(const Key& key) {
    std::optional<V> found;
    self().visit(key, [&found](const V& value) { found.emplace(value); });
    return found;
  }
  // Map, heterogeneous (a container whose visit takes keys of type K as they are: bucket_api.hpp):
  // find(std::string_view) on a std::string-keyed map constructs no std::string.
  template <class K, class V = Value>
    requires is_map && Derived::template transparent_for<K>
  std::optional<V> find(const K& key) {
    std::optional<V> found;
    self().visit(key, [&found](const V& value) { found.emplace(value); });
    return found;
  }

  // The number of elements: any thread may call it at any time. Not linearizable: while other
  // threads insert and erase, it differs from the number of elements at any instant of the call by
  // at most the successful inserts and erases that overlap the call; exact when no operation runs.
  // One relaxed load per stripe (approximate_size.hpp).
  std::size_t size() const noexcept { return size_.read(); }

  // Quiescent traversals for validation, unprotected: call only while no other thread uses the
  // container (a concurrent erase may free a node under them).
  // f(key) for a set, f(key, value) for a map, for every element, in for_each_element's order.
  template <class F>
  void unsafe_for_each(F f) const {
    self().for_each_element([&f](const element<Key, Value>& e) {
      if constexpr (is_map)
        f(e.key, e.value);
      else
        f(e.key);
    });
  }
  // The elements counted one by one (size() is the counter; tests check that they agree).
  std::size_t unsafe_size() const {
    std::size_t n = 0;
    self().for_each_element([&n](const element<Key, Value>&) { ++n; });
    return n;
  }
  // The lab's and the tests' checksum of the contents.
  std::int64_t unsafe_key_sum() const
    requires std::integral<Key>
  {
    std::int64_t sum = 0;
    self().for_each_element(
        [&sum](const element<Key, Value>& e) { sum += static_cast<std::int64_t>(e.key); });
    return sum;
  }

 protected:
  // What a successful insert or erase does to size(), after its linearization point; each returns
  // what the operation does (`return this->erased();` where an erase succeeds).
  bool count_inserted(bool inserted) noexcept {
    if (inserted) size_.add(1);
    return inserted;
  }
  bool erased() noexcept {
    size_.add(-1);
    return true;
  }

 private:
  Derived& self() noexcept { return static_cast<Derived&>(*this); }
  const Derived& self() const noexcept { return static_cast<const Derived&>(*this); }

  approximate_size size_;
};

}  // namespace reclaim::ds::detail
