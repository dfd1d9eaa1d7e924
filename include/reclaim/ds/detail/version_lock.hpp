// SPDX-License-Identifier: MIT
// A try-only lock with a version: the ticket lock of ASCYLIB as BST-TK (David, Guerraoui and
// Trigonakis 2015) uses it, for optimistic algorithms that read a version, read the data it guards
// without locking, and later lock only if nothing changed in between.
//
// The word counts: an even value means free, an odd value held. Locking at a version v is one CAS
// from v to v + 1 (ASCYLIB: take a ticket when the ticket equals the version); unlocking adds one
// more, so every completed critical section moves the version by two and a thread that read v
// before reading the guarded data knows, once its CAS at v succeeds, that no writer has touched the
// data since. revert() gives the lock back without a new version, for a holder that changed nothing.
// A lock that is never released (a removed tree node) makes every later try fail.
// The counter wraps after 2^31 critical sections; a thread would have to sleep through exactly that
// many of them between its read and its CAS to be fooled (ABA).
#pragma once
#include <atomic>
#include <cstdint>
#include "../../core/sync.hpp"

namespace reclaim::ds::detail {

class version_lock {
 public:
  using version = std::uint32_t;

  static constexpr bool is_free(version v) noexcept { return (v & 1) == 0; }

  // acquire: pairs with the release in unlock(); the data read after it is at least as new as the
  // critical section that produced this version.
  version read() const noexcept { return word_.load(std::memory_order_acquire); }

  // Locks if the version is still `seen` (and `seen` was free).
  bool try_lock_at(version seen) noexcept {
    if (!is_free(seen)) return false;
    // acquire: pairs with the release in unlock(), so the critical section sees the last holder's
    // writes.
    return word_.compare_exchange_strong(seen, seen + 1, std::memory_order_acquire,
                                         std::memory_order_relaxed);
  }
  // Locks at whatever version is current, if the lock is free.
  bool try_lock() noexcept { return try_lock_at(read()); }

  // release: pairs with the acquire in read() and try_lock_at(): the holder's writes happen before
  // any read of the new version.
  void unlock() noexcept { word_.fetch_add(1, std::memory_order_release); }
  // The holder wrote nothing: back to the version it locked at. release: pairs with the acquire in
  // try_lock_at() like unlock().
  void revert() noexcept { word_.fetch_sub(1, std::memory_order_release); }

 private:
  core::atomic<version> word_{0};
};

}  // namespace reclaim::ds::detail
