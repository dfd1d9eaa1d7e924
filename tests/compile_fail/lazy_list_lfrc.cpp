// SPDX-License-Identifier: MIT
// lazy_list under lfrc: its sentinels are members of the list object, with no reference count in
// front of them; the container's static_assert names the need, the reason and what to use.
#include <reclaim/reclaim.hpp>

int main() {
  reclaim::ds::lazy_list<long, reclaim::lfrc<>> list;
  return list.insert(1) ? 0 : 1;
}
