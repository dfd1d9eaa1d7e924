// SPDX-License-Identifier: MIT
// Out of memory on chosen threads: the reclaim_oom_tests executable replaces the global operator
// new (oom_support.cpp) with one that fails, throwing std::bad_alloc (or returning nullptr for the
// nothrow forms), while the calling thread holds a failing_allocations scope. Other threads, and
// this one outside the scope, allocate as usual, so a test can drive a scheme's retire, scan or
// thread exit into an allocation failure and check what the scheme promises: no exception after
// a node was taken, nothing lost, nothing freed twice.
#pragma once
#include <cstdint>

namespace reclaim_test {

// While one lives on a thread, every operator new of that thread fails.
class failing_allocations {
 public:
  failing_allocations() noexcept;
  ~failing_allocations();
  failing_allocations(const failing_allocations&) = delete;
  failing_allocations& operator=(const failing_allocations&) = delete;

 private:
  bool was_;
};

// Allocations refused on this thread so far (to check that a test really reached a failure).
std::uint64_t refused_allocations() noexcept;

}  // namespace reclaim_test
