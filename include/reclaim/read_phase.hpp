// SPDX-License-Identifier: MIT
// Read phases: where a neutralization-based scheme (nbr, nbr_plus) may restart a container's
// operation. A container marks the start of each read phase with RECLAIM_READ_PHASE(guard), and
// states with reclaim::restart_safe what its read phases keep alive; for every other scheme the
// macro is the guard's no-op begin_read_phase(). The rules a read phase follows are in
// docs/writing-a-container.md.
#pragma once
#include <setjmp.h>

#include <type_traits>

#include "concepts.hpp"
#include "core/sync.hpp"

namespace reclaim {

// Whether objects of these types may be alive across a restart point: siglongjmp skips destructors,
// which is undefined behaviour unless they are trivial. A container states it for what its read
// phases keep, e.g. static_assert(reclaim::restart_safe<std::pair<node*, node*>>).
template <class... T>
inline constexpr bool restart_safe = (std::is_trivially_destructible_v<T> && ...);

namespace detail {

// This thread's restart point: where a neutralized read phase jumps back to. One per thread, since
// a thread is in at most one read phase at a time. Only nbr's signal handler jumps to it.
#if !defined(RECLAIM_VERIFY)
inline constinit thread_local sigjmp_buf restart_point{};
#define RECLAIM_RESTART_POINT ::reclaim::detail::restart_point
#else
// The verification build: one per simulated thread (fibers of one OS thread, each on its own
// stack, where sigsetjmp and siglongjmp work as on a thread's).
struct restart_env {
  sigjmp_buf env;
};
inline core::per_thread<restart_env> restart_points{};
#define RECLAIM_RESTART_POINT (::reclaim::detail::restart_points.mine().env)
#endif

// Before a restart point is saved the thread must not be restartable: a signal that arrived while
// sigsetjmp writes the buffer would jump to half of it.
template <class Guard>
void prepare_restart_point(Guard& g) noexcept {
  if constexpr (neutralizable_guard<Guard>) g.leave_read_phase();
}

}  // namespace detail
}  // namespace reclaim

// Marks the start of a read phase in a container's operation (a statement). For neutralization-based
// schemes it is the restart point, a sigsetjmp that must be expanded in the container's own frame
// (hence a macro): a neutralized thread jumps back here and runs the read phase again. For every
// other scheme it compiles to the guard's no-op begin_read_phase(). The rules a read phase follows
// are in docs/writing-a-container.md: it starts at the root, allocates, frees, retires and locks
// nothing, and whatever is created after this point and alive when a signal may arrive must be
// trivially destructible (reclaim::restart_safe). sigsetjmp(env, 0) does not save the signal mask
// (no system call per read phase); the handler restores the thread's read-phase mask before it
// jumps (schemes/detail/nbr_signal.hpp).
#define RECLAIM_READ_PHASE(guard)                                                               \
  do {                                                                                          \
    if constexpr (::reclaim::neutralizable_guard<std::remove_cvref_t<decltype(guard)>>) {       \
      ::reclaim::detail::prepare_restart_point(guard);                                          \
      (void)sigsetjmp(RECLAIM_RESTART_POINT, 0);                                     \
    }                                                                                           \
    (guard).begin_read_phase();                                                                 \
  } while (false)
