// SPDX-License-Identifier: MIT
// Process-wide memory barriers: the heavy sides of the asymmetric fences (core/fence.hpp,
// asymmetric_fence<Barrier>) of hp_asym, hp_mprotect and hp_splitcas (paper 004). Each Barrier
// has run(), which returns once every thread of the process has executed a full memory barrier
// since the call began (a thread that is not running will pass a context switch, itself a barrier,
// before it runs again), and prepare(), which throws std::runtime_error naming what is missing
// where the barrier cannot work on this machine. The light side they pair with is a release store
// and a compiler barrier.
//
//   membarrier_barrier  membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) (Linux 4.14; registered once
//                       per process): the kernel interrupts every processor that runs a thread of
//                       the process, and the interrupt is the barrier. Where the call is missing
//                       (old kernels, seccomp filters of some containers) it falls back to the
//                       mprotect barrier and says so once on stderr; RECLAIM_MEMBARRIER=0 in the
//                       environment forces the fallback (to test it).
//   mprotect_barrier    paper 004 section 4: write-protecting a page that is mapped writable and
//                       dirty makes the kernel shoot down the page's TLB entries on every
//                       processor that runs the process, by inter-processor interrupt on x86, and
//                       the interrupt drains that processor's store buffer. Needs x86 (elsewhere
//                       TLB invalidation is broadcast by instructions that order only accesses to
//                       the page itself) and a kernel that interrupts: a processor that can flush
//                       remote TLBs without interrupting them (AMD's INVLPGB, used by Linux 6.15
//                       and later) makes it refuse. The page is a page of our own, not the hazard
//                       table the paper protects: no reader ever writes it, so no reader traps
//                       and no SIGSEGV handler is needed; the interrupt it causes is the same.
//   split_lock_barrier  paper 004 section 5 (x86 only): a locked RMW on a word that straddles two
//                       cache lines cannot lock one line, so the processor locks the bus, which on
//                       the processors the paper measured waits for every other processor's store
//                       buffer to drain. No manual promises that drain, and newer processors and
//                       hypervisors may implement bus locks otherwise: it is here to measure paper
//                       004's idea, not to ship (use hp_asym). Kernels that trap split locks
//                       (split_lock_detect, bus_lock_detect: each one then costs a trap, a warning
//                       and, with split_lock_mitigate, a 10 ms sleep) make it refuse.
#pragma once
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "fork.hpp"

#if __has_include(<linux/membarrier.h>) && defined(SYS_membarrier)
#include <linux/membarrier.h>
#define RECLAIM_HAVE_MEMBARRIER 1
#else
#define RECLAIM_HAVE_MEMBARRIER 0
#endif

namespace reclaim::core {

#if defined(__x86_64__) || defined(__i386__)
inline constexpr bool x86 = true;
#else
inline constexpr bool x86 = false;
#endif

namespace detail {

// The whole of a small /proc file, or "" if it cannot be read.
inline std::string read_proc_file(const char* path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Whether `word` is one of the blank-separated words of the first "flags" line of a
// /proc/cpuinfo text.
inline bool cpu_flag(std::string_view cpuinfo, std::string_view word) {
  const std::size_t at = cpuinfo.find("\nflags");
  const std::size_t begin = cpuinfo.starts_with("flags") ? 0 : at;
  if (begin == std::string_view::npos) return false;
  std::string_view line = cpuinfo.substr(begin + (begin == 0 ? 0 : 1));
  line = line.substr(0, line.find('\n'));
  line = line.substr(std::min(line.size(), line.find(':') + 1));
  for (std::size_t i = 0; i < line.size();) {
    while (i < line.size() && line[i] == ' ') ++i;
    std::size_t j = line.find(' ', i);
    if (j == std::string_view::npos) j = line.size();
    if (line.substr(i, j - i) == word) return true;
    i = j;
  }
  return false;
}

}  // namespace detail

// Why the split-lock barrier would trap on this kernel ("" if it would not), from the texts of
// /proc/cpuinfo and /proc/cmdline: the processor detects split or bus locks and the kernel was not
// told to ignore them (split_lock_detect=off).
inline std::string split_locks_trapped(std::string_view cpuinfo, std::string_view cmdline) {
  if (cmdline.find("split_lock_detect=off") != std::string_view::npos) return {};
  for (const char* flag : {"split_lock_detect", "bus_lock_detect"})
    if (detail::cpu_flag(cpuinfo, flag))
      return std::string("this kernel traps split locks (the processor flag ") + flag +
             " is set in /proc/cpuinfo and split_lock_detect=off is not on the kernel command "
             "line): each barrier would cost a trap, a warning and possibly a 10 ms sleep";
  return {};
}

// Why the mprotect barrier cannot be trusted on this processor ("" if it can), from the text of
// /proc/cpuinfo: remote TLB flushes without interrupts (INVLPGB) drain no store buffer.
inline std::string tlb_flush_without_interrupts(std::string_view cpuinfo) {
  if (detail::cpu_flag(cpuinfo, "invlpgb"))
    return "the processor flushes remote TLBs without interrupting them (invlpgb in "
           "/proc/cpuinfo), so a protection change drains no other processor's store buffer";
  return {};
}

class mprotect_barrier {
 public:
  static constexpr std::string_view scheme_name = "hp_mprotect";

  // "" where the barrier works; otherwise why not. Decided once per process.
  static const std::string& why_not() {
    static const std::string reason = [] {
      if (!x86)
        return std::string("the mprotect barrier relies on x86's TLB shootdown by interrupt");
      std::string r = tlb_flush_without_interrupts(detail::read_proc_file("/proc/cpuinfo"));
      if (r.empty() && state() == nullptr) r = "mmap of the barrier's page failed";
      return r;
    }();
    return reason;
  }
  static void prepare() {
    if (!why_not().empty()) throw std::runtime_error("reclaim::hp_mprotect: " + why_not());
  }

  // Serialized: two protection changes of one page at once could leave it read-only while we
  // write it. (A fork() waits for the barrier under way: core/platform/fork.hpp.)
  static void run() noexcept {
    page* p = state();
    std::lock_guard lock(mutex_across_fork<page>());
    // The write makes the page present, writable and dirty in this processor's TLB, so that
    // taking write access away needs a shootdown (an unmapped or clean page could be changed
    // without one). volatile: the compiler must keep the store.
    *static_cast<volatile unsigned char*>(p->bytes) = p->counter++;
    if (::mprotect(p->bytes, p->size, PROT_READ) != 0 ||
        ::mprotect(p->bytes, p->size, PROT_READ | PROT_WRITE) != 0) {
      std::fprintf(stderr, "reclaim: the mprotect barrier failed (%s)\n", std::strerror(errno));
      std::abort();
    }
  }

 private:
  struct page {
    void* bytes = nullptr;
    std::size_t size = 0;
    unsigned char counter = 0;
  };
  // One page for the process, never unmapped (threads may scan until the process exits); locked
  // in memory where the limits allow, so that it is never swapped out between the write and the
  // protection change (which would then need no shootdown). Made by prepare(), with its lock, so
  // that run() allocates nothing.
  static page* state() {
    static page* const p = [] {
      (void)mutex_across_fork<page>();
      const auto size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
      void* bytes = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                           0);
      if (bytes == MAP_FAILED) return static_cast<page*>(nullptr);
      (void)::mlock(bytes, size);  // best effort: the write before each barrier faults it in
      auto* made = new page;
      made->bytes = bytes;
      made->size = size;
      return made;
    }();
    return p;
  }
};

class membarrier_barrier {
 public:
  static constexpr std::string_view scheme_name = "hp_asym";

  // Chooses once per process: membarrier, registered, or the mprotect barrier, said once on
  // stderr; throws where neither works.
  static void prepare() {
    static const bool chosen = [] {
      std::string why = register_membarrier();
      if (why.empty()) {
        mode_.store(use_membarrier, std::memory_order_release);
        return true;
      }
      if (!mprotect_barrier::why_not().empty())
        throw std::runtime_error("reclaim::hp_asym: membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) "
                                 "is not available (" + why + ") and neither is the mprotect "
                                 "barrier (" + mprotect_barrier::why_not() + ")");
      std::fprintf(stderr,
                   "reclaim: hp_asym: membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) is not "
                   "available (%s); using the mprotect barrier\n",
                   why.c_str());
      mode_.store(use_mprotect, std::memory_order_release);
      return true;
    }();
    (void)chosen;
  }

  // Whether the barrier is membarrier (after prepare()), for tests and reports.
  static bool uses_membarrier() noexcept {
    return mode_.load(std::memory_order_acquire) == use_membarrier;
  }

  static void run() noexcept {
#if RECLAIM_HAVE_MEMBARRIER
    // relaxed: set before any domain existed (prepare(), in its constructor), which the scanning
    // thread's use of the domain follows.
    if (mode_.load(std::memory_order_relaxed) == use_membarrier) {
      if (::syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) return;
      std::fprintf(stderr, "reclaim: hp_asym: membarrier failed after its registration (%s)\n",
                   std::strerror(errno));
      std::abort();
    }
#endif
    mprotect_barrier::run();
  }

 private:
  enum mode : int { undecided, use_membarrier, use_mprotect };
  static inline constinit std::atomic<int> mode_{undecided};

  // "" once registered; otherwise why not.
  static std::string register_membarrier() {
    if (const char* env = std::getenv("RECLAIM_MEMBARRIER"); env && std::string_view(env) == "0")
      return "RECLAIM_MEMBARRIER=0 in the environment";
#if RECLAIM_HAVE_MEMBARRIER
    const long supported = ::syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (supported < 0) return std::string("membarrier: ") + std::strerror(errno);
    if ((supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0)
      return "the kernel does not offer MEMBARRIER_CMD_PRIVATE_EXPEDITED";
    if (::syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0)
      return std::string("registration: ") + std::strerror(errno);
    return {};
#else
    return "built without <linux/membarrier.h> or SYS_membarrier";
#endif
  }
};

#if defined(__x86_64__) || defined(__i386__)
class split_lock_barrier {
 public:
  static constexpr std::string_view scheme_name = "hp_splitcas";

  static const std::string& why_not() {
    static const std::string reason = split_locks_trapped(
        detail::read_proc_file("/proc/cpuinfo"), detail::read_proc_file("/proc/cmdline"));
    return reason;
  }
  static void prepare() {
    if (!why_not().empty())
      throw std::runtime_error("reclaim::hp_splitcas: " + why_not() + "; use hp_asym instead");
  }

  // A locked add on the 4 bytes at offset 62 of a 128-byte-aligned buffer: bytes 62 and 63 lie in
  // one cache line, 64 and 65 in the next. In assembly, so that the compiler neither sees a
  // misaligned C++ object nor turns the locked instruction into anything else.
  static void run() noexcept {
    alignas(128) static unsigned char straddle[128];
    std::uint32_t one = 1;
    asm volatile("lock xaddl %0, (%1)" : "+r"(one) : "r"(straddle + 62) : "memory");
  }
};
#endif

}  // namespace reclaim::core
