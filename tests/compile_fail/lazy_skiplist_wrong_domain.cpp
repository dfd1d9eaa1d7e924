// SPDX-License-Identifier: MIT
// Must not compile: lazy_skiplist<int, hp<>> runs on hp<slots<14>> (its scheme sized for it), so a
// domain of hp<> is another scheme's; ctest ds.skiplist_with_an_unsized_domain_is_a_compile_error
// checks that the one message says which domain to pass.
#include <reclaim/reclaim.hpp>

int main() {
  reclaim::hp<>::domain domain;
  reclaim::ds::lazy_skiplist<int, reclaim::hp<>> set(domain);
  return set.insert(1) ? 0 : 1;
}
