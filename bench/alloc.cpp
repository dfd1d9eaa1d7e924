// SPDX-License-Identifier: MIT
#include "alloc.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <string>
#include <vector>

namespace reclaim_bench {
namespace {

// A function the process exports under `name`, or null. RTLD_DEFAULT searches the executable and
// every library loaded globally, in the order the dynamic linker binds malloc.
template <class F>
F* lookup(const char* name) {
  return reinterpret_cast<F*>(dlsym(RTLD_DEFAULT, name));
}

// The shared object that holds `symbol`, as the dynamic linker recorded its path.
std::string library_of(const void* symbol) {
  Dl_info info{};
  if (symbol && dladdr(symbol, &info) != 0 && info.dli_fname) return info.dli_fname;
  return {};
}

// The load address of the shared object (or executable) that holds `symbol`; null if none.
const void* object_of(const void* symbol) {
  Dl_info info{};
  if (symbol && dladdr(symbol, &info) != 0) return info.dli_fbase;
  return nullptr;
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

bool is_file(const std::string& path) { return ::access(path.c_str(), R_OK) == 0; }

// The directories the distribution's libraries lie in: where libc was loaded from (the multiarch
// directory, /lib/x86_64-linux-gnu on Debian amd64) and the same under /usr.
std::vector<std::string> library_dirs() {
  if (const char* dir = std::getenv("RECLAIM_BENCH_ALLOC_DIR")) return {dir};
  std::string libc = library_of(lookup<void>("gnu_get_libc_version"));
  std::vector<std::string> dirs;
  if (auto slash = libc.rfind('/'); slash != std::string::npos && slash > 0) {
    std::string dir = libc.substr(0, slash);
    dirs.push_back(dir);
    if (dir.starts_with("/lib")) dirs.push_back("/usr" + dir);
  }
  return dirs;
}

struct allocator_package {
  std::string_view name;
  std::vector<std::string_view> sonames;  // preferred first
  std::string_view package;               // Debian's runtime package
};

const std::vector<allocator_package>& packages() {
  static const std::vector<allocator_package> all = {
      {"jemalloc", {"libjemalloc.so.2"}, "libjemalloc2"},
      // The minimal library has no heap profiler: nothing runs beside malloc.
      {"tcmalloc", {"libtcmalloc_minimal.so.4", "libtcmalloc.so.4"}, "libtcmalloc-minimal4"},
      {"mimalloc", {"libmimalloc.so.2"}, "libmimalloc2.0"},
  };
  return all;
}

}  // namespace

allocator_info detect_allocator() {
  // Several allocators can be loaded at once (two preloads, or one linked in and one preloaded):
  // the one in effect is the one that defines the malloc calls bind to, so each allocator's own
  // function counts only when it lies in that same shared object.
  void* malloc_symbol = lookup<void>("malloc");
  const void* malloc_object = object_of(malloc_symbol);
  auto answers = [&](void* symbol) { return symbol && object_of(symbol) == malloc_object; };

  if (void* mallctl = lookup<void>("mallctl"); answers(mallctl))
    return {"jemalloc", jemalloc_version(), library_of(mallctl)};
  for (const char* name : {"tc_version", "MallocExtension_GetNumericProperty"})
    if (void* tc = lookup<void>(name); answers(tc))
      return {"tcmalloc", tcmalloc_version(), library_of(tc)};
  using mi_version_fn = int();
  if (auto* mi_version = lookup<mi_version_fn>("mi_version");
      answers(reinterpret_cast<void*>(mi_version)))
    return {"mimalloc", mimalloc_version(mi_version()),
            library_of(reinterpret_cast<void*>(mi_version))};
  using libc_version_fn = const char*();
  auto* libc_version = lookup<libc_version_fn>("gnu_get_libc_version");
  // A sanitizer's runtime replaces glibc's malloc in its build; it stands for the default
  // allocator there, and alloc_lib names it.
  if (libc_version && (answers(reinterpret_cast<void*>(libc_version)) || sanitizer_build()))
    return {"glibc", libc_version(), library_of(malloc_symbol)};
  return {"unknown", {}, library_of(malloc_symbol)};
}

allocator_library find_allocator_library(std::string_view name) {
  if (name == "glibc") return {library_of(lookup<void>("gnu_get_libc_version")), {}};
  for (const allocator_package& p : packages()) {
    if (p.name != name) continue;
    if (sanitizer_build())
      return {{}, "cannot be preloaded into a sanitizer build (the sanitizer owns malloc)"};
    for (std::string_view soname : p.sonames)
      for (const std::string& dir : library_dirs())
        if (std::string path = dir + '/' + std::string(soname); is_file(path)) return {path, {}};
    return {{}, "is not installed (apt-get install " + std::string(p.package) + ")"};
  }
  return {{}, "is not an allocator the lab knows"};
}

bool sanitizer_build() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

}  // namespace reclaim_bench
