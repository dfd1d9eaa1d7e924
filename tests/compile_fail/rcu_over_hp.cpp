// SPDX-License-Identifier: MIT
// Must not compile: rcu_domain is served by the schemes whose reads need no more than a region
// (ctest facade.rcu_over_a_pointer_scheme_is_a_compile_error checks that the message names them,
// in one line).
#include <mutex>

#include <reclaim/schemes/hp.hpp>
#include <reclaim/std/rcu.hpp>

using namespace reclaim::cxx26;

struct config : rcu_obj_base<config, std::default_delete<config>, reclaim::hp<>> {
  int version = 1;
};

int main() {
  std::scoped_lock region(rcu_default_domain<reclaim::hp<>>());
  config c;
  return c.version;
}
