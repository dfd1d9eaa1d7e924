// SPDX-License-Identifier: MIT
// debra: distributed epoch-based reclamation (Brown, PODC 2015).
//
// What it is. A global epoch; each thread announces the epoch it saw at the start of an operation,
// and that it is quiescent between operations. Every k operations a thread checks one other
// thread's announcement; once it has seen every thread quiescent or caught up with the current
// epoch, it tries to advance the epoch. A thread retires into one of three limbo bags, tagged with
// the epoch it announced, and frees a bag once it sees the epoch three past the bag's tag
// (detail/epoch_engine.hpp argues the protocol, and why three and not two).
//
// When to use it. Operations are cheap (one fenced RMW per operation, no per-read cost), so it is a
// good default for any structure whose operations are short. Garbage is NOT bounded: one thread that
// stalls inside an operation stops the epoch, and every thread's bags grow until it resumes.
//
// Needs from a container: only the start and end of each operation (the guard).
// Progress: lock-free operations; reclamation can be blocked by a stalled thread.
// Differences from the paper: DEBRA+ neutralization is not included (see nbr for a neutralizing
// scheme). The bags carry their epoch as a tag instead of rotating one bag per epoch change seen, so
// a thread that missed epochs frees every bag old enough at once, and an exited thread's bags keep
// their age in the orphanage: any live thread frees them once it sees their tag + 3. For the tag to
// mean that, a thread re-reads the epoch after announcing (one load of a read-mostly line) until
// the two agree, as ebr does (the epoch engine's announce()). Between operations a thread announces
// only that it is quiescent (the engine's idle), not with the epoch it saw as the paper's does.
#pragma once
#include <atomic>
#include <cstdint>
#include <string_view>

#include "../concepts.hpp"
#include "../core/policy.hpp"
#include "../core/region_guard.hpp"
#include "../free/batch.hpp"
#include "../policies.hpp"
#include "detail/epoch_engine.hpp"

namespace reclaim {

template <class... Policies>
struct debra : detail::epoch_scheme<debra<Policies...>> {
  // Its policies, as given in Policies... or by default: the free policy (batch_free), and
  // check_every<K> (20: one other thread's record is checked at every K-th operation start).
  using free_policy = core::find_policy_t<free_policy_kind, batch_free, Policies...>;
  static constexpr unsigned check_interval = core::policy_value<check_every<20>, Policies...>;
  static_assert((core::known_kinds<free_policy_kind, check_kind>::template contains<Policies> &&
                 ...),
                "debra takes a free policy and check_every<K>");

  // Its name in the lab and in messages.
  static constexpr std::string_view name = "debra";

  class domain;
  class guard;
  // What a reclaim::guard_ptr holds: a share in the thread's operation (core/region_guard.hpp).
  using protection = core::region_hold<domain>;
};

namespace detail {
template <class FreePolicy>
struct debra_record : epoch_record<FreePolicy> {
  debra_record* check_cursor = nullptr;  // next record to check; nullptr: start a pass at the head
};
}  // namespace detail

// One debra instance's shared state: the epoch, the thread records with their limbo bags, and the
// garbage (core/domain.hpp). default_domain() is the one containers use unless given another.
template <class... Policies>
class debra<Policies...>::domain
    : public detail::epoch_engine<debra, detail::debra_record<free_policy>> {
  using engine = detail::epoch_engine<debra, detail::debra_record<free_policy>>;
  using typename engine::record;

 public:
  // The pacing: one other record checked at every check_interval-th operation start.
  static constexpr unsigned pace_interval = check_interval;
  ~domain() { this->shutdown(); }

 private:
  friend engine;
  friend class core::region_hold<domain>;  // names our record

  void put_in_bag(record& r, core::retired_hook* node) {
    r.bags.push_open(node);  // tagged with the epoch of this operation (on_new_epoch())
  }

  // The engine's, and a pass starts again (its checks were for the old epoch); retires from here
  // on go to the bag of e, opened once here so that a retire is one push. Opened before the
  // engine frees the safe bags: a deleter that retires into this domain (rc_ptr.hpp's deferred
  // decrements) must tag its node e, not the old epoch.
  void on_new_epoch(record& r, std::uint64_t e) {
    r.check_cursor = nullptr;
    r.bags.open(e, r, this->gauge_);
    engine::on_new_epoch(r, e);
  }

  // Checks one other record; after the last of a pass that saw every record idle or in epoch e
  // (records registered after the pass began announce e or later), tries e -> e+1.
  void pace(record& r, std::uint64_t e) {
    core::scan_timer timer(r.ctr);
    record* other = r.check_cursor ? r.check_cursor : this->threads_.head();
    // seq_cst and acquire: as in epoch_clock::all_allow().
    if (!detail::epoch_state::allows(other->announce.load(std::memory_order_seq_cst), e))
      return;  // it still runs in an older epoch
    r.check_cursor = decltype(this->threads_)::next_of(other);
    if (r.check_cursor == nullptr) this->clock_.move_on(r, e);
  }
};

// An operation (a region) in d, from construction to destruction; protect() is a plain load.
template <class... Policies>
class debra<Policies...>::guard : public core::region_scheme_guard<domain> {
 public:
  explicit guard(domain& d = debra::default_domain()) : core::region_scheme_guard<domain>(d) {}
};

}  // namespace reclaim
