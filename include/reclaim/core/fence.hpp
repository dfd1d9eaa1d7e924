// Fence strategies for pointer schemes: a light side run by readers on every protection and a heavy
// side run by reclaimers before they read the protections. The symmetric strategy makes both sides
// full barriers; asymmetric strategies (membarrier, mprotect, split-CAS: paper 004) make the light
// side a compiler barrier and the heavy side a process-wide barrier.
//
// The light side, in two forms:
//   publish(slot, p), then a re-read of the source with reread(order): a protection that the
//     scheme validates itself (hp's protect, try_protect);
//   a release store of the slot, then light(): a protection published for a caller who re-reads
//     the source with an order of their own (P2530's reset_protection(ptr)).
#pragma once
#include <atomic>
#include <type_traits>

namespace reclaim::core {

struct symmetric_fence {
  static constexpr const char* name = "fence";

  // A reader's published protection must be visible before its re-read of the source (a store
  // followed by a load: the one reordering x86 allows). A seq_cst store and a seq_cst re-read are
  // ordered so in the C++ model, and pair with heavy(): if the reclaimer's fence comes after the
  // store in the single total order S, its later load of the slot sees the store; if before, the
  // re-read (later in S) sees the unlink that preceded the fence. That is xchg then mov on x86,
  // stlr then ldar on Arm. (A release store, a seq_cst fence and the re-read would do the same,
  // but GCC's fence on x86-64, `lock or $0,(%rsp)`, makes the next reload of a value spilled to
  // the top of the stack wait for the locked instruction: hm_list under hp ran 2.4 times slower
  // in the lab for the key its search reloads from there after every fence.)
  template <class T>
  static void publish(std::atomic<T>& slot, std::type_identity_t<T> p) noexcept {
    // seq_cst (release part): our reads of the slot's previous node happen before a scan that
    // sees the new value (acquire in the scan) and frees that node.
    slot.store(p, std::memory_order_seq_cst);
  }
  static constexpr std::memory_order reread(std::memory_order) noexcept {
    return std::memory_order_seq_cst;
  }
  // Full fence after a release store of a protection, for a caller who re-reads the source with
  // any order. Pairs with heavy().
  static void light() noexcept { std::atomic_thread_fence(std::memory_order_seq_cst); }
  // Full fence: the unlink that preceded the retire is visible before we read the protections.
  static void heavy() noexcept { std::atomic_thread_fence(std::memory_order_seq_cst); }
};

}  // namespace reclaim::core
