// SPDX-License-Identifier: MIT
// Must not compile: nbr cannot serve atomic_rc_ptr or snapshot_ptr (a protection must not survive
// a read phase). Code that uses them the usual way meets one error, whose message names the
// schemes that work (ctest rc_ptr.nbr_is_a_compile_error).
#include <reclaim/rc_ptr.hpp>
#include <reclaim/schemes/nbr.hpp>

#include <atomic>

using scheme = reclaim::nbr<>;

int main() {
  reclaim::atomic_rc_ptr<long, scheme> loc;
  loc.store(reclaim::make_rc<long, scheme>(7));
  reclaim::rc_ptr<long> r = loc.load();
  reclaim::snapshot_ptr<long, scheme> s = loc.get_snapshot();
  return r && s && *r == *s ? 0 : 1;
}
