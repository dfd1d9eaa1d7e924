// SPDX-License-Identifier: MIT
// fork() and the library's process-wide locks. Only the forking thread lives on in the child; a
// lock that another thread held at the fork would stay held there for ever. Each such lock is made
// by mutex_across_fork<Tag>(), which registers pthread_atfork() handlers that take it before the
// fork (so that the state it guards is whole in the child) and release it after, in the parent and
// in the child. The live domains' lock and the forgetting of the parent's other threads are in
// core/registry.hpp, the POP mailboxes' in core/ping.hpp.
#pragma once
#include <pthread.h>

#include <atomic>
#include <mutex>

namespace reclaim::core {

// The fork()s this process came through as a child since the first domain was made (counted by the
// registry's fork handler, core/registry.hpp). Operations in flight at a fork, on threads that do
// not exist in the child, never end there: debug checks that count them compare this first.
inline constinit std::atomic<unsigned> forks_passed{0};

// The process-wide mutex for Tag, never destroyed (threads may use it after main() returns).
template <class Tag>
std::mutex& mutex_across_fork() {
  static std::mutex* const m = [] {
    auto* made = new std::mutex;
    (void)pthread_atfork([] { mutex_across_fork<Tag>().lock(); },
                         [] { mutex_across_fork<Tag>().unlock(); },
                         [] { mutex_across_fork<Tag>().unlock(); });
    return made;
  }();
  return *m;
}

}  // namespace reclaim::core
