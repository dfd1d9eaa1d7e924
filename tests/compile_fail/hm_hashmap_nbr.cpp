// Must not compile: hm_hashmap's searches resume after helping, which nbr cannot protect (ctest
// ds.unmet_need_is_a_compile_error checks that the message names the need, the reason and
// hm_hashmap_restart).
#include <reclaim/reclaim.hpp>

#include <string>

int main() {
  reclaim::ds::hm_hashmap<std::string, std::string, reclaim::nbr<>> map;
  return map.insert("key", "value") ? 0 : 1;
}
