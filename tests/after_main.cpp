// SPDX-License-Identifier: MIT
// A static object whose destructor runs container operations after main() returned, on the
// schemes' default domains: by then the main thread's thread_local objects are gone, and static
// objects constructed after a default domain's first use are destroyed. Run by ctest; it passes
// when every destructor ran and the process exits cleanly (under ASan: with no report).
#include <cstdio>
#include <cstdlib>
#include <type_traits>

#include <reclaim/reclaim.hpp>

namespace {

int destructors_run = 0;
constexpr int scheme_count = 11;

// lazy_list, or where the scheme cannot protect it (lfrc: its sentinels are members), hm_list.
template <class S>
using some_list = std::conditional_t<reclaim::protects<S, reclaim::ds::lazy_list<std::int64_t, S>>,
                                     reclaim::ds::lazy_list<std::int64_t, S>,
                                     reclaim::ds::hm_list<std::int64_t, S>>;

// Uses a container on S's default domain in its destructor. The list is created on first use, in
// main(), after this object was constructed: at exit it is destroyed before this object, so the
// destructor makes a fresh one.
template <class S>
struct user_after_main {
  ~user_after_main() {
    some_list<S> list;
    for (std::int64_t k = 0; k < 100; ++k) {
      list.insert(k);
      list.erase(k);
    }
    if (list.size() == 0 && list.unsafe_well_formed()) ++destructors_run;
    if (destructors_run == scheme_count) std::printf("after main: %d schemes ok\n", scheme_count);
  }
};

user_after_main<reclaim::none> none_user;
user_after_main<reclaim::debra<>> debra_user;
user_after_main<reclaim::ebr<>> ebr_user;
user_after_main<reclaim::qsbr<>> qsbr_user;
user_after_main<reclaim::rcu<>> rcu_user;
user_after_main<reclaim::hp<>> hp_user;
user_after_main<reclaim::token_af<>> token_user;
user_after_main<reclaim::nbr<>> nbr_user;
user_after_main<reclaim::nbr_plus<>> nbr_plus_user;
user_after_main<reclaim::stamp_it<>> stamp_it_user;
user_after_main<reclaim::lfrc<>> lfrc_user;

template <class S>
void use_in_main() {
  some_list<S> list;
  list.insert(1);
  list.erase(1);
}

}  // namespace

int main() {
  use_in_main<reclaim::none>();
  use_in_main<reclaim::debra<>>();
  use_in_main<reclaim::ebr<>>();
  use_in_main<reclaim::qsbr<>>();
  use_in_main<reclaim::rcu<>>();
  use_in_main<reclaim::hp<>>();
  use_in_main<reclaim::token_af<>>();
  use_in_main<reclaim::nbr<>>();
  use_in_main<reclaim::nbr_plus<>>();
  use_in_main<reclaim::stamp_it<>>();
  use_in_main<reclaim::lfrc<>>();
  return EXIT_SUCCESS;
}
