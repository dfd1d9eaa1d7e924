// SPDX-License-Identifier: MIT
// Must not compile: a node retired into a domain must derive from the scheme's node_base, which
// carries the retire link (ctest scheme.retire_without_node_base_is_a_compile_error checks that
// the message names the base to derive from).
#include <reclaim/schemes/hp.hpp>

struct config {
  int version = 1;
};

int main() {
  reclaim::hp<>::default_domain().retire(new config);
}
