// Must not compile: nbr cannot serve guard_ptr (ctest smart_ptr.nbr_is_a_compile_error checks the
// message).
#include <reclaim/reclaim.hpp>

struct node : reclaim::nbr<>::node_base {};
reclaim::guard_ptr<node, reclaim::nbr<>> p;
