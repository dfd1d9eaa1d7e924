// SPDX-License-Identifier: MIT
// A callback at each thread's exit, for state that outlives thread_local destructors: a pthread
// key's destructor runs after them, on every thread that set the key, even one that exits inside
// library code the program did not write (the registry's bindings, the POP mailboxes).
#pragma once
#include <pthread.h>

#include <cstdio>
#include <cstdlib>

namespace reclaim::core {

// A new key whose destructor is at_exit; stops the program, saying why, if the process has no key
// left (there is nothing sensible to continue with: threads would leak their records).
inline pthread_key_t new_thread_exit_key(void (*at_exit)(void*)) {
  pthread_key_t key;
  if (pthread_key_create(&key, at_exit) != 0) {
    std::fputs("reclaim: pthread_key_create failed: no thread-specific key left\n", stderr);
    std::abort();
  }
  return key;
}

}  // namespace reclaim::core
