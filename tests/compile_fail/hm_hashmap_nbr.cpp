// SPDX-License-Identifier: MIT
// Must not compile: hm_hashmap with Michael's Find asked for by name (the aliases pick the
// restarting search under nbr), whose searches resume after helping, which nbr cannot protect
// (ctest ds.unmet_need_is_a_compile_error checks that the message names the need, the reason and
// the forms that work).
#include <reclaim/reclaim.hpp>

#include <functional>
#include <string>

int main() {
  reclaim::ds::basic_hm_hashmap<std::string, std::string, reclaim::nbr<>, std::hash<std::string>,
                                std::less<std::string>,
                                reclaim::ds::detail::hm_search::resume_after_helping>
      map;
  return map.insert("key", "value") ? 0 : 1;
}
