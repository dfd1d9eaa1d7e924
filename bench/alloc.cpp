#include "alloc.hpp"

#include <dlfcn.h>

#include <cstddef>
#include <string>

namespace reclaim_bench {
namespace {

// A function the process exports under `name`, or null. RTLD_DEFAULT searches the executable and
// every library loaded globally, in the order the dynamic linker binds malloc.
template <class F>
F* lookup(const char* name) {
  return reinterpret_cast<F*>(dlsym(RTLD_DEFAULT, name));
}

std::string jemalloc_version() {
  using mallctl_fn = int(const char*, void*, std::size_t*, void*, std::size_t);
  auto* mallctl = lookup<mallctl_fn>("mallctl");
  const char* version = nullptr;
  std::size_t size = sizeof version;
  if (mallctl && mallctl("version", &version, &size, nullptr, 0) == 0 && version) return version;
  return {};
}

std::string tcmalloc_version() {
  using tc_version_fn = const char*(int*, int*, const char**);
  if (auto* tc_version = lookup<tc_version_fn>("tc_version")) {
    int major = 0, minor = 0;
    const char* patch = nullptr;
    if (const char* version = tc_version(&major, &minor, &patch)) return version;
  }
  return {};  // gperftools without tc_version, or Google's tcmalloc (MallocExtension only)
}

// mi_version() is major * 100 + minor * 10 + patch.
std::string mimalloc_version(int v) {
  return std::to_string(v / 100) + '.' + std::to_string(v / 10 % 10) + '.' + std::to_string(v % 10);
}

}  // namespace

allocator_info detect_allocator() {
  if (lookup<void>("mallctl")) return {"jemalloc", jemalloc_version()};
  if (lookup<void>("MallocExtension_GetNumericProperty") || lookup<void>("tc_version"))
    return {"tcmalloc", tcmalloc_version()};
  using mi_version_fn = int();
  if (auto* mi_version = lookup<mi_version_fn>("mi_version"))
    return {"mimalloc", mimalloc_version(mi_version())};
  using libc_version_fn = const char*();
  if (auto* libc_version = lookup<libc_version_fn>("gnu_get_libc_version"))
    return {"glibc", libc_version()};
  return {"unknown", {}};
}

}  // namespace reclaim_bench
