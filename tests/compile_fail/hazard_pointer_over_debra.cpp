// SPDX-License-Identifier: MIT
// Must not compile: hazard_pointer is served by the pointer family only (ctest
// facade.hazard_pointer_over_an_epoch_scheme_is_a_compile_error checks that the message names the
// schemes that serve it, in one line).
#include <reclaim/schemes/debra.hpp>
#include <reclaim/std/hazard_pointer.hpp>

using namespace reclaim::cxx26;

struct config : hazard_pointer_obj_base<config, std::default_delete<config>, reclaim::debra<>> {
  int version = 1;
};

int main() {
  auto h = make_hazard_pointer<reclaim::debra<>>();
  std::atomic<config*> src{new config};
  config* c = h.protect(src);
  return c->version;
}
