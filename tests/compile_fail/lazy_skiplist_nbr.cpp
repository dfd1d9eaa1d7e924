// Must not compile: lazy_skiplist reserves up to 13 nodes in a write phase and nbr<> has 8
// reservations (ctest ds.skiplist_under_default_nbr_is_a_compile_error checks that the message
// names nbr<slots<13>>).
#include <reclaim/reclaim.hpp>

int main() {
  reclaim::ds::lazy_skiplist<int, reclaim::nbr<>> set;
  return set.insert(1) ? 0 : 1;
}
