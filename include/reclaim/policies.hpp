// The home of the public policies: the named template parameters a user passes to a scheme
// (`hp<slots<8>>`), one definition each, shared by every scheme that takes it, so that no scheme
// includes another scheme's header for a policy. Each policy names its kind with a nested
// `policy_kind` tag, which core::find_policy_t looks for (core/policy.hpp).
#pragma once

namespace reclaim {

// slots<K>: how many protections an operation holds at once, the K of each guard (its hazard
// pointers under hp and its variants, its counted references under lfrc, its era reservations
// under he, wfe, crystalline_l and crystalline_w; the reservations of hyaline's robust variants).
// A container's slots_used must not exceed it; sized_for (schemes/sized_for.hpp) picks it for a
// container.
struct slots_kind {};
// The kind's older name, which the schemes still spell until the policy vocabulary is one (issue 26).
using hp_slots_kind = slots_kind;
template <unsigned K>
struct slots {
  static_assert(K > 0);
  using policy_kind = slots_kind;
  static constexpr unsigned value = K;
};

}  // namespace reclaim
