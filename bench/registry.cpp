// SPDX-License-Identifier: MIT
#include "registry.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace reclaim_bench {

void registry::add_scheme(const scheme_info& s) {
  // Two lines of RECLAIM_BENCH_SCHEMES with one name would make --scheme ambiguous.
  if (find_scheme(s.name))
    throw std::logic_error("scheme registered twice: " + std::string(s.name));
  schemes_.push_back(s);
}

void registry::add_pairing(const pairing& p) {
  if (std::find(containers_.begin(), containers_.end(), p.ds) == containers_.end())
    containers_.push_back(p.ds);
  pairings_.push_back(p);
}

std::vector<std::string_view> registry::scheme_names() const {
  std::vector<std::string_view> names;
  for (const scheme_info& s : schemes_) names.push_back(s.name);
  return names;
}

const scheme_info* registry::find_scheme(std::string_view name) const {
  auto it = std::find_if(schemes_.begin(), schemes_.end(),
                         [&](const scheme_info& s) { return s.name == name; });
  return it == schemes_.end() ? nullptr : &*it;
}

const pairing* registry::find(std::string_view ds, std::string_view scheme) const {
  auto it = std::find_if(pairings_.begin(), pairings_.end(), [&](const pairing& p) {
    return p.ds == ds && p.scheme == scheme;
  });
  return it == pairings_.end() ? nullptr : &*it;
}

void registry::add_absent(std::string_view name, std::string_view how) {
  absent_.emplace_back(name, how);
}

std::string_view registry::why_absent(std::string_view name) const {
  // An entry that ends in ':' is a peer library left out: every LIBRARY:SCHEME name of it.
  for (const auto& [absent, how] : absent_)
    if (absent == name || (absent.ends_with(':') && name.starts_with(absent))) return how;
  return {};
}

workload registry::workload_of(std::string_view ds) const {
  auto it = std::find_if(pairings_.begin(), pairings_.end(),
                         [&](const pairing& p) { return p.ds == ds; });
  if (it == pairings_.end()) throw std::logic_error("unknown container: " + std::string(ds));
  return it->kind;
}

}  // namespace reclaim_bench
