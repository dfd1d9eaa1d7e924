// SPDX-License-Identifier: MIT
// The default hash and comparison of the Harris-Michael containers (hm_list, hm_hashmap, their
// restart and guarded forms): std's, made transparent for strings so that a std::string-keyed
// container answers find(std::string_view) or find("literal") without constructing a std::string
// (heterogeneous lookup, as std::map with std::less<> and std::unordered_map with a transparent
// hash and equality).
//
// For every other key type they are std::hash<Key> and std::less<Key> themselves (hash<Key> derives
// from it and adds nothing), so an integer container hashes and compares as it did, at the same
// cost. For std::basic_string the hash takes a basic_string_view, which a string, a string_view and
// a character pointer all convert to without allocating; it returns std::hash<basic_string_view>'s
// value, which the standard requires to equal std::hash<basic_string>'s ([basic.string.hash]), so
// the buckets are those std::hash<std::string> would pick. The comparison is std::less<>, which
// compares two strings with the same operator< as std::less<std::string>.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace reclaim::ds {

// std::hash<Key>, transparent for std::basic_string.
template <class Key>
struct hash : std::hash<Key> {};

// A string's hash, taken from a string_view of the same characters (std's two hashes agree), so
// that a lookup by string_view or literal constructs no string (is_transparent).
template <class Char, class Allocator>
struct hash<std::basic_string<Char, std::char_traits<Char>, Allocator>> {
  using is_transparent = void;
  std::size_t operator()(std::basic_string_view<Char> s) const noexcept {
    return std::hash<std::basic_string_view<Char>>{}(s);
  }
};

namespace detail {
template <class Key>
struct default_compare {
  using type = std::less<Key>;
};
template <class Char, class Traits, class Allocator>
struct default_compare<std::basic_string<Char, Traits, Allocator>> {
  using type = std::less<>;
};
}  // namespace detail

// std::less<Key>, or std::less<> (transparent) for std::basic_string.
template <class Key>
using default_compare = typename detail::default_compare<Key>::type;

}  // namespace reclaim::ds
