// Fence strategies for pointer schemes: a light side run by readers on every protection and a heavy
// side run by reclaimers before they read the protections. The symmetric strategy puts a full fence
// on both sides; asymmetric strategies (membarrier, mprotect, split-CAS: paper 004) make the light
// side a compiler barrier and the heavy side a process-wide barrier.
#pragma once
#include <atomic>

namespace reclaim::core {

struct symmetric_fence {
  static constexpr const char* name = "fence";
  // Full fence: a reader's published protection must be visible before its re-read of the source
  // (a store followed by a load: the one reordering x86 allows). Pairs with heavy().
  static void light() noexcept { std::atomic_thread_fence(std::memory_order_seq_cst); }
  // Full fence: the unlink that preceded the retire is visible before we read the protections.
  static void heavy() noexcept { std::atomic_thread_fence(std::memory_order_seq_cst); }
};

}  // namespace reclaim::core
