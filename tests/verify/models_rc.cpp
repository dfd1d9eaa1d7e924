// SPDX-License-Identifier: MIT
// rc_ptr, atomic_rc_ptr and snapshot_ptr under the checker (include/reclaim/rc_ptr.hpp): the
// deferred decrement of a dropped reference through the scheme, the drops word of a block dropped
// from two locations while its retire is in flight and the deleter's re-retire, the shortcut that
// frees a replaced block when its count is what its drops cover, load()'s relaxed increment under
// protection and the acq_rel decrement. Over debra (an epoch), hp (hazards on the block's
// address) and he (eras).
//
// The object's payload is an rl::var written when it is made and overwritten by its destructor,
// in memory from Relacy's heap (the block is one allocation): a read that may overlap the
// destruction is a race or an access to freed memory, and so is a count touched after the free.
// Each destruction is counted: at the end every location is emptied, the domain settled (the
// deleter may retire a block again, so one barrier may not be enough) and every object made has
// been destroyed exactly once (one never destroyed is also a leak of its block).
#include <reclaim/rc_ptr.hpp>
#include <reclaim/schemes/debra.hpp>
#include <reclaim/schemes/he.hpp>
#include <reclaim/schemes/hp.hpp>

#include "generic_models.hpp"

namespace reclaim_verify {
namespace {

// An rc_ptr's object: a watched payload, and the model's count of destructions.
struct counted {
  counted(int value, reclaim::core::atomic<int>& destroyed) : destroyed_(&destroyed) {
    payload($) = value;
  }
  ~counted() {
    payload($) = -1;
    destroyed_->fetch_add(1, std::memory_order_relaxed);
  }
  counted(const counted&) = delete;
  counted& operator=(const counted&) = delete;

  // The payload, one that some thread made (1 to 4 in these models).
  int read() {
    const int seen = payload($);
    RL_ASSERT(seen >= 1 && seen <= 4);
    return seen;
  }

  rl::var<int> payload;
  reclaim::core::atomic<int>* destroyed_;
};

// What the models share: the domain, two locations, the objects made and destroyed. The counters
// are declared first so that they outlive the domain (a deleter it runs destroys an object).
template <class Model, class Scheme, unsigned Threads>
struct rc_model : model<Model, Threads> {
  using ptr = reclaim::rc_ptr<counted>;

  reclaim::core::atomic<int> made{0}, destroyed{0};
  typename Scheme::domain domain;
  reclaim::atomic_rc_ptr<counted, Scheme> a{domain}, b{domain};

  ptr make(int value) {
    made.fetch_add(1, std::memory_order_relaxed);
    return reclaim::make_rc_in<counted, Scheme>(domain, value, destroyed);
  }
  void before() { a.store(make(1)); }
  void thread(unsigned i) {
    static_cast<Model&>(*this).run(i);
    thread_exits();
  }
  void flush_times(int n) {
    for (int k = 0; k < n; ++k) domain.flush();
  }
  // Both locations emptied (their drops deferred as any other), the domain settled: every drop
  // applied, and each of the model's objects made and destroyed once (twice would be a double
  // free, which the checker reports first).
  void after() {
    a.store(nullptr);
    b.store(nullptr);
    for (int k = 0; k < 4 && domain.stats().pending != 0; ++k) domain.barrier();
    RL_ASSERT(domain.stats().pending == 0);
    RL_ASSERT(made.load(std::memory_order_relaxed) == Model::objects);
    RL_ASSERT(destroyed.load(std::memory_order_relaxed) == Model::objects);
    thread_exits();
  }
};

// Thread 0 loads a counted copy of location a, reads the object and drops it; thread 1 stores a
// new object (the old one's decrement deferred) and flushes three times, then three more. Thread 0
// is stopped inside load() between its protection and its increment (an injected preemption,
// whose wait tells thread 1 that it holds the first object) until the first flushes are done:
// nothing may be freed under the protection. Its read and drop then race the second flushes,
// which run the deleter: whichever of its decrement and the loader's comes last destroys the
// object, and must acquire the other's uses (the shortcut's count load, or the decrement's
// acq_rel). Thread 0 waits for the second flushes before it exits, so that its exit orders
// nothing before them.
template <class Scheme>
struct load_model : rc_model<load_model<Scheme>, Scheme, 2> {
  static constexpr int objects = 2;
  progress_flag held;   // thread 0's: 1 once it is stopped holding its protection
  progress_flag phase;  // thread 1's: 1 after the first flushes, 2 after the second

  load_model() {
    reclaim::core::verify::pause = {{0, "::increment(", [this] {
                                       held.set(1);
                                       return phase.reached(1);
                                     }}};
  }
  void run(unsigned i) {
    if (i == 0) {
      {
        typename load_model::ptr p = this->a.load();
        RL_ASSERT(p->read() == 1);
      }
      phase.wait_until(2);
    } else {
      held.wait_until(1);
      this->a.store(this->make(2));
      this->flush_times(3);
      phase.set(1);
      this->flush_times(3);
      phase.set(2);
    }
  }
};

// Thread 0 reads location a through a snapshot_ptr (no count), converts it to an rc_ptr, lets the
// snapshot go and reads the object again through its count; thread 1 stores and flushes as above.
template <class Scheme>
struct snapshot_model : rc_model<snapshot_model<Scheme>, Scheme, 2> {
  static constexpr int objects = 2;
  void run(unsigned i) {
    if (i == 0) {
      auto s = this->a.get_snapshot();
      RL_ASSERT(s);
      const int seen = s->read();
      typename snapshot_model::ptr p = s;
      s.reset();
      RL_ASSERT(p->read() == seen);
    } else {
      this->a.store(this->make(2));
      this->flush_times(3);
    }
  }
};

// One object in locations a and b. Thread 1 empties a, which retires the block; under an epoch
// scheme it flushes twice, so that the operation thread 0 begins next may be two epochs later
// than that retire, which can then end under it (under hp and he it does not scan: the retire
// must stay in flight, and their protection of the block holds it whenever it began). Thread 0
// then loads b and is stopped between its protection
// and its increment until thread 1 is done; thread 2 waits for that, empties b, finding the
// retire in flight (its drop is left to the deleter) and flushes; thread 1, once b is dropped,
// flushes three times: the first retire's deleter may run under thread 0's protection, and only
// the re-retire it makes for thread 2's drop covers it.
template <class Scheme>
struct two_locations_model : rc_model<two_locations_model<Scheme>, Scheme, 3> {
  static constexpr int objects = 1;
  progress_flag held;   // thread 0's: 1 once it is stopped holding its protection
  progress_flag phase;  // 1: thread 1 dropped a; 2: thread 2 dropped b; 3: thread 1 flushed

  // The stores' copies increment: the preemption is set once they are done.
  void before() {
    const typename two_locations_model::ptr p = this->make(1);
    this->a.store(p);
    this->b.store(p);
    reclaim::core::verify::pause = {{0, "::increment(", [this] {
                                       held.set(1);
                                       return phase.reached(3);
                                     }}};
  }
  void run(unsigned i) {
    if (i == 0) {
      phase.wait_until(1);
      const typename two_locations_model::ptr p = this->b.load();
      RL_ASSERT(p->read() == 1);
    } else if (i == 1) {
      this->a.store(nullptr);
      if constexpr (Scheme::protection::holds_region) this->flush_times(2);
      phase.set(1);
      phase.wait_until(2);
      this->flush_times(3);
      phase.set(3);
    } else {
      held.wait_until(1);
      this->b.store(nullptr);
      phase.set(2);
      this->flush_times(3);
    }
  }
};

// Thread 0 loads location a and compare_exchange_strong()s it to a new object; thread 1 stores
// another, then replaces what its snapshot_ptr shows with compare_and_swap(), and flushes. A
// failed compare_exchange_strong leaves expected a counted copy of another object (its own
// expected cannot come back: expected holds it, so its address is not reused), whose payload it
// reads. Objects: 1 (before), 2 and 4 (thread 1), 3 (thread 0; destroyed by the failing CAS's
// caller when the location never took it).
template <class Scheme>
struct cas_model : rc_model<cas_model<Scheme>, Scheme, 2> {
  static constexpr int objects = 4;
  void run(unsigned i) {
    if (i == 0) {
      typename cas_model::ptr expected = this->a.load();
      const counted* const was = expected.get();
      expected->read();
      if (!this->a.compare_exchange_strong(expected, this->make(3))) {
        RL_ASSERT(expected && expected.get() != was);
        expected->read();
      }
    } else {
      this->a.store(this->make(2));
      {
        auto s = this->a.get_snapshot();
        (void)this->a.compare_and_swap(s, this->make(4));
      }
      this->flush_times(3);
    }
  }
};

template <class Scheme>
void add_scheme_models(registry& r, const std::string& scheme) {
  r.add<load_model<Scheme>>("rc/load/" + scheme, scheme);
  r.add<snapshot_model<Scheme>>("rc/snapshot/" + scheme, scheme);
  r.add<two_locations_model<Scheme>>("rc/two_locations/" + scheme, scheme);
  r.add<cas_model<Scheme>>("rc/cas/" + scheme, scheme);
}

}  // namespace

void add_rc_models(registry& r) {
  add_scheme_models<reclaim::debra<>>(r, "debra");
  add_scheme_models<reclaim::hp<>>(r, "hp");
  add_scheme_models<reclaim::he<>>(r, "he");
  const std::vector<std::string> all{"debra", "hp", "he"};
  r.mutants.push_back({"rc_decrement_release",
                       "an rc_ptr decrement is a release instead of acq_rel: the last one does not "
                       "acquire the other holders' uses of the object",
                       all});
  r.mutants.push_back({"rc_shortcut_relaxed",
                       "the deleter's shortcut (count == covered: free) loads the count relaxed "
                       "instead of acquire",
                       all});
  r.mutants.push_back({"rc_drop_relaxed",
                       "a drop that finds a retire in flight adds to since with a relaxed CAS "
                       "instead of a release",
                       all,
                       "it would take a loader whose protection begins after the re-retire and "
                       "still reads the location's old block; the models' loader protects before "
                       "the second drop (held there so that the deleter runs under it)"});
  r.mutants.push_back({"rc_since_dropped",
                       "the deleter clears the drops that arrived while its retire was in flight "
                       "without applying them",
                       all});
  r.mutants.push_back({"rc_since_applied_at_once",
                       "the deleter applies the drops that arrived while its retire was in flight "
                       "at once instead of retiring the block again",
                       all,
                       "under hp and he the window is inside one scan: the loader must publish and "
                       "validate after the scan read the reservations, the second drop land before "
                       "the deleter reads the word, and the loader not yet increment (two threads "
                       "held at once; a model injects one preemption)",
                       {"hp", "he"}});
  r.mutants.push_back({"rc_load_increment_unprotected",
                       "atomic_rc_ptr::load() ends its protection before it increments the count",
                       all});
}

}  // namespace reclaim_verify
