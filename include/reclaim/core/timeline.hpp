// SPDX-License-Identifier: MIT
// The timeline recorder: what each thread did with its garbage, and when (paper 001, section 3).
//
// What it is. Each thread that a `timeline::recorder` has attached writes events into a buffer of
// its own, preallocated and touched at attach(): a batch of frees (start, end, objects), a single
// free call slower than a threshold, an epoch advance, the start of a new epoch as this thread sees
// it (with the garbage it holds), a Token-EBR token receipt. The lab writes them to a CSV file and
// the tools draw the paper's timeline graphs from it: one row of boxes per thread, epoch changes as
// dots (paper 001, Figures 2, 3 and 6-9), and garbage per epoch (Figure 4).
//
// When to use it. To see *where* reclamation time goes: long batch frees, single frees that take
// milliseconds (the remote-batch-free problem), threads that fall behind the epoch. It is a lab
// instrument, not a production log: a user of the library never attaches a recorder and pays for
// it only the test below.
//
// What it costs and bounds. Not recording, every hook is one test of a thread_local pointer, and
// the hooks sit per batch of frees, per epoch change and per amortized freeing operation, never per
// free or per plain operation. Recording,
// an event is a bounds check and a 24-byte store into the thread's own buffer (no sharing, no lock,
// no allocation); a batch free also reads the TSC once per object, to find the slow ones. Each
// buffer holds `capacity` events: events past it are dropped and counted, never reallocated, so the
// recorder's memory is capacity x 24 bytes x threads, fixed at attach(). Timestamps are
// steady_clock nanoseconds (a vDSO call, about 30 ns of CPU on the project's machines); single frees
// are timed with the cheaper TSC (about 11 ns), converted with a rate measured once.
//
// Progress. Recording is wait-free: a store into the thread's own buffer. attach() takes the
// recorder's lock and allocates (and, the first time in a process, spends 5 ms measuring the TSC
// rate); it runs before the measured work starts.
//
// Differences from the paper. Paper 001 records timelines inside its own benchmark; here the hooks
// live in the library (free policies and epoch schemes), so every scheme and container records the
// same events without code of its own. We also record epoch_seen with the garbage held, which the
// paper plots separately (Figure 4), and count dropped events instead of growing the buffer.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "retired.hpp"

namespace reclaim::timeline {

// What an event records, and its value: a batch of frees (objects freed), one free call slower
// than the threshold (1), an epoch advance by this thread (the new epoch), this thread beginning
// a new epoch (the garbage it holds), a Token-EBR token receipt (the garbage it holds).
enum class event : std::uint8_t { batch_free, slow_free, epoch_advance, epoch_seen, token_receipt };

// The event's name as the timeline file spells it.
constexpr std::string_view name(event e) noexcept {
  switch (e) {
    case event::batch_free: return "batch_free";
    case event::slow_free: return "slow_free";
    case event::epoch_advance: return "epoch_advance";
    case event::epoch_seen: return "epoch_seen";
    case event::token_receipt: return "token_receipt";
  }
  return "unknown";
}

// Nanoseconds on a steady clock (the same clock as std::chrono::steady_clock).
inline std::uint64_t now() noexcept {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

namespace detail {

// The counter that times single frees: the TSC on x86 (rdtsc, not serialising: about a third of
// the cost of a steady_clock read, which also waits for the frees before it to finish), steady
// clock nanoseconds elsewhere. Only differences on one thread are used; the kernel uses the TSC as
// its clock only where it is invariant and synchronised across cores.
inline std::uint64_t ticks() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return now();
#endif
}

// Ticks per nanosecond, measured once against steady_clock over 5 ms. Each end of the interval is
// a steady_clock read between two tick reads, the tightest of 8 tries: a thread preempted between
// the two clocks would otherwise skew the rate by the whole preemption.
inline double ticks_per_ns() {
#if defined(__x86_64__) || defined(__i386__)
  static const double rate = [] {
    struct pair {
      std::uint64_t tick, ns;
    };
    auto sample = [] {
      pair best{};
      std::uint64_t tightest = ~std::uint64_t{0};
      for (int i = 0; i < 8; ++i) {
        const std::uint64_t before = ticks();
        const std::uint64_t ns = now();
        const std::uint64_t after = ticks();
        if (after - before < tightest) {
          tightest = after - before;
          best = {before + (after - before) / 2, ns};
        }
      }
      return best;
    };
    const pair start = sample();
    while (now() - start.ns < 5'000'000) {
    }
    const pair end = sample();
    return static_cast<double>(end.tick - start.tick) / static_cast<double>(end.ns - start.ns);
  }();
  return rate;
#else
  return 1.0;
#endif
}

}  // namespace detail

// One recorded event: 24 bytes, the value and the kind sharing a word (values fit in 56 bits).
struct entry {
  static constexpr std::uint64_t value_mask = (std::uint64_t{1} << 56) - 1;

  // When it began and ended, in steady_clock nanoseconds; equal for an instantaneous event.
  std::uint64_t start_ns;
  std::uint64_t end_ns;
  std::uint64_t packed;  // value in the low 56 bits, kind in the top 8

  // The two halves of `packed`: the event's value (see event) and its kind.
  std::uint64_t value() const noexcept { return packed & value_mask; }
  event kind() const noexcept { return static_cast<event>(packed >> 56); }
};
static_assert(sizeof(entry) == 24);

// One thread's events. Written by its owning thread only, read by the recorder's owner once the
// thread has stopped recording (the join or a lock orders the writes before the reads).
class buffer {
 public:
  buffer(std::size_t thread, std::size_t capacity, std::uint64_t slow_free_ns)
      : events_(std::make_unique<entry[]>(capacity)),  // value-initialised: every page touched
        capacity_(capacity),
        ns_per_tick_(1.0 / detail::ticks_per_ns()),
        slow_free_ticks_(static_cast<std::uint64_t>(static_cast<double>(slow_free_ns) /
                                                    ns_per_tick_)),
        thread_(thread) {}

  // Appends an event (its value cut to 56 bits); a full buffer counts it as dropped instead: it
  // never grows.
  void push(event e, std::uint64_t start_ns, std::uint64_t end_ns, std::uint64_t value) noexcept {
    if (size_ == capacity_) {
      ++dropped_;
      return;
    }
    events_[size_++] = {start_ns, end_ns,
                        (std::uint64_t{static_cast<std::uint8_t>(e)} << 56) |
                            (value & entry::value_mask)};
  }

  // Destroys the node, timed; a call longer than the threshold becomes a slow_free event.
  void timed_free(core::retired_hook* node) noexcept {
    const std::uint64_t start = detail::ticks();
    node->destroy(node);
    const std::uint64_t end = detail::ticks();
    if (end - start > slow_free_ticks_) [[unlikely]] slow_free(start, end);
  }

  // Destroys every node of `list`, each timed as in timed_free() (one tick read per free: each
  // end is the next start), and records the whole as a batch_free event. Returns how many.
  std::size_t free_batch(core::retired_list& list) noexcept {
    const std::uint64_t first = now();
    std::uint64_t start = detail::ticks();
    std::size_t n = 0;
    while (core::retired_hook* node = list.pop()) {
      node->destroy(node);
      const std::uint64_t end = detail::ticks();
      if (end - start > slow_free_ticks_) [[unlikely]] slow_free(start, end);
      start = end;
      ++n;
    }
    push(event::batch_free, first, now(), n);
    return n;
  }

  // Its thread label (attach()'s argument), the events recorded so far in order, and how many
  // were dropped because it was full.
  std::size_t thread() const noexcept { return thread_; }
  std::span<const entry> events() const noexcept { return {events_.get(), size_}; }
  std::uint64_t dropped() const noexcept { return dropped_; }

 private:
  // A free from tick `start` to tick `end` was slow: recorded on the steady clock, ending now.
  [[gnu::cold, gnu::noinline]] void slow_free(std::uint64_t start, std::uint64_t end) noexcept {
    if (end < start) return;  // not expected (see ticks()), but never a bogus event
    const std::uint64_t end_ns = now();
    const auto ns = static_cast<std::uint64_t>(static_cast<double>(end - start) * ns_per_tick_);
    push(event::slow_free, end_ns - ns, end_ns, 1);
  }

  std::unique_ptr<entry[]> events_;
  std::size_t capacity_;
  std::size_t size_ = 0;
  std::uint64_t dropped_ = 0;
  double ns_per_tick_;
  std::uint64_t slow_free_ticks_;
  std::size_t thread_;
};

namespace detail {
// The buffer this thread records into, or null. Constant-initialised, so reading it is a plain TLS
// access with no lazy-initialisation guard: the whole cost of every hook while nobody records.
inline constinit thread_local buffer* current = nullptr;
}  // namespace detail

// This thread has a buffer attached.
inline bool recording() noexcept { return detail::current != nullptr; }

// Records an event into this thread's buffer; a no-op when not recording. Instantaneous events
// have start_ns == end_ns.
inline void record(event e, std::uint64_t start_ns, std::uint64_t end_ns,
                   std::uint64_t value) noexcept {
  if (buffer* b = detail::current) b->push(e, start_ns, end_ns, value);
}

// Records an instantaneous event (start == end == now); a no-op, without reading the clock, when
// not recording.
inline void record_instant(event e, std::uint64_t value) noexcept {
  if (buffer* b = detail::current) [[unlikely]] {
    const std::uint64_t t = now();
    b->push(e, t, t, value);
  }
}

// node->destroy(node); while recording, timed, and recorded as a slow_free event when it took
// longer than the recorder's threshold.
inline void free_one(core::retired_hook* node) noexcept {
  if (buffer* b = detail::current)
    b->timed_free(node);
  else
    node->destroy(node);
}

// Destroys every node of `list` and returns how many: list.destroy_all() when not recording;
// recording, a batch_free event for the whole and a slow_free event for each slow free.
inline std::size_t free_all(core::retired_list& list) noexcept {
  if (buffer* b = detail::current) [[unlikely]]
    return b->free_batch(list);
  return list.destroy_all();
}

// A batch of frees: `batch_scope b; ...; b.done(count);` records a batch_free event from
// construction to done() with value = count. Not recording, it costs the one TLS test here.
class batch_scope {
 public:
  batch_scope() noexcept : buffer_(detail::current), start_(buffer_ ? now() : 0) {}
  batch_scope(const batch_scope&) = delete;
  batch_scope& operator=(const batch_scope&) = delete;

  // Records the batch_free event, from construction to now, with value count.
  void done(std::uint64_t count) noexcept {
    if (buffer_) buffer_->push(event::batch_free, start_, now(), count);
  }

 private:
  buffer* buffer_;
  std::uint64_t start_;
};

// Owns the buffers of one recording (the lab makes one per trial). Each worker thread calls
// attach(index) before it starts and detach() when it is done; the owner reads the events once the
// workers have stopped. The recorder must outlive every thread's attachment.
class recorder {
 public:
  struct settings {
    std::size_t capacity = 100'000;     // events per thread
    std::uint64_t slow_free_ns = 100'000;  // a free call longer than this is a slow_free event
  };

  // Records nothing until a thread attaches; settings s gives the buffers' capacity and the
  // slow-free threshold (by default 100,000 events per thread, and 100 us).
  recorder() : recorder(settings{}) {}
  explicit recorder(settings s) : settings_(s) {}
  recorder(const recorder&) = delete;
  recorder& operator=(const recorder&) = delete;

  // Gives the calling thread a buffer labelled `thread` (preallocated and touched now) and makes it
  // the one this thread records into (if this throws, the thread records nothing). A thread
  // attached again with the same label gets a new buffer; both are read back. A thread may stay
  // attached until it exits, so that what schemes do at its exit is recorded, as long as the
  // recorder outlives it.
  void attach(std::size_t thread) {
    auto b = std::make_unique<buffer>(thread, settings_.capacity, settings_.slow_free_ns);
    buffer* mine = b.get();
    {
      std::lock_guard lock(mutex_);
      buffers_.push_back(std::move(b));
    }
    detail::current = mine;
  }

  // The calling thread stops recording.
  static void detach() noexcept { detail::current = nullptr; }

  // Every thread's buffer, in thread-label order. Call once the recording threads have stopped.
  std::vector<const buffer*> buffers() const {
    std::lock_guard lock(mutex_);
    std::vector<const buffer*> all;
    for (const auto& b : buffers_) all.push_back(b.get());
    std::stable_sort(all.begin(), all.end(),
                     [](const buffer* a, const buffer* b) { return a->thread() < b->thread(); });
    return all;
  }

  // The events recorded and the events dropped, summed over every buffer; like buffers(), call
  // them once the recording threads have stopped.
  std::uint64_t events() const {
    std::uint64_t n = 0;
    for (const buffer* b : buffers()) n += b->events().size();
    return n;
  }
  std::uint64_t dropped() const {
    std::uint64_t n = 0;
    for (const buffer* b : buffers()) n += b->dropped();
    return n;
  }

  // The settings it was made with.
  const settings& config() const noexcept { return settings_; }

 private:
  settings settings_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<buffer>> buffers_;
};

}  // namespace reclaim::timeline
