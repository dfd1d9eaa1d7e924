// Must not compile: lazy_skiplist protects up to 14 nodes at once and hp<> has 4 slots (ctest
// ds.skiplist_under_default_hp_is_a_compile_error checks that the message names hp<slots<14>>).
#include <reclaim/reclaim.hpp>

int main() {
  reclaim::ds::lazy_skiplist<int, reclaim::hp<>> set;
  return set.insert(1) ? 0 : 1;
}
