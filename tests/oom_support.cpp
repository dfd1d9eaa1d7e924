// SPDX-License-Identifier: MIT
// The replaced global allocation functions of reclaim_oom_tests (oom_support.hpp). Only the
// throwing and nothrow forms of operator new are replaced; operator delete stays the library's,
// which frees what malloc gave.
#include "oom_support.hpp"

#include <cstdlib>
#include <new>

namespace {
thread_local bool failing = false;
thread_local std::uint64_t refused = 0;

void* allocate(std::size_t size) noexcept {
  if (failing) {
    ++refused;
    return nullptr;
  }
  return std::malloc(size == 0 ? 1 : size);
}
void* allocate_aligned(std::size_t size, std::align_val_t align) noexcept {
  if (failing) {
    ++refused;
    return nullptr;
  }
  const auto a = static_cast<std::size_t>(align);
  return std::aligned_alloc(a, (size + a - 1) / a * a);
}
}  // namespace

namespace reclaim_test {
failing_allocations::failing_allocations() noexcept : was_(failing) { failing = true; }
failing_allocations::~failing_allocations() { failing = was_; }
std::uint64_t refused_allocations() noexcept { return refused; }
}  // namespace reclaim_test

void* operator new(std::size_t size) {
  if (void* p = allocate(size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return allocate(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return allocate(size); }
void* operator new(std::size_t size, std::align_val_t align) {
  if (void* p = allocate_aligned(size, align)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size, std::align_val_t align) { return operator new(size, align); }
void* operator new(std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return allocate_aligned(size, align);
}
void* operator new[](std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return allocate_aligned(size, align);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
