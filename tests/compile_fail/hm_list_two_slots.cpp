// SPDX-License-Identifier: MIT
// Must not compile: hm_list protects 3 nodes at once and this hp has 2 slots (ctest
// ds.too_few_hazard_slots_is_a_compile_error checks that the message says how many to give it).
#include <reclaim/reclaim.hpp>

int main() {
  reclaim::ds::hm_list<int, reclaim::hp<reclaim::slots<2>>> set;
  return set.insert(1) ? 0 : 1;
}
