// SPDX-License-Identifier: MIT
// What the batch reference counting schemes (hyaline.hpp, crystalline.hpp) share around their
// batches: a base of their domains, between them and core::domain_base (CRTP). Their records hold
// the partial batches being filled (`batches`, detail/birth_sorted.hpp) and a core::garbage_claim
// (`claim`) held around each retire and free, through which a barrier borrows the record's
// garbage between the owner's retires; the domain provides join_batch(r, node), which adds an
// unlinked node to r's partial batch for its birth. A batch, once retired (hyaline) or sealed
// (crystalline), belongs to the reservations it went into and is freed by whoever drops its count
// to zero, so none of this waits for a thread.
#pragma once
#include <utility>

#include "../../core/domain.hpp"
#include "../../core/grace.hpp"
#include "../../core/record.hpp"
#include "../../core/retired.hpp"

namespace reclaim::detail {

template <class Domain, class Record>
class batch_domain : public core::domain_base<Domain, Record> {
  using base = core::domain_base<Domain, Record>;
  using claim = core::garbage_claim;

 protected:
  batch_domain() = default;

  // synchronize() (core::domain_base's hook): every outermost guard open at the call has closed.
  bool wait_for_grace_period(Record&, core::deadline d) const {
    return this->wait_for_open_guards(d);
  }

  // A record's garbage for a barrier (core::domain_base's hook): its partial batches (not proven
  // safe) and its free policy's freeable list (safe).
  static void take_garbage(Record& r, typename base::gathered& into) noexcept {
    into.unsafe.splice(r.batches.take_all());
    into.safe.splice(r.freeing.take());
  }

  // Lazy leave (detail/lazy_leave.hpp): what the owners of the other records kept between
  // operations, released on their behalf by the domain's revoke(me, o), counted on me. A seal's,
  // a retire's and a barrier's step.
  void revoke_kept(Record& me) noexcept {
    for (Record* o = this->threads_.head(); o; o = decltype(this->threads_)::next_of(o))
      if (o != &me && !o->forgotten) (void)static_cast<Domain&>(*this).revoke(me, *o);
  }

  // A barrier's first step: every record's garbage, borrowed between its owner's retires, and the
  // orphans. False at the deadline, with what it gathered so far in g.
  bool gather_batches(Record& me, typename base::gathered& g, core::deadline d) {
    return this->gather(me, g, d, [](Record& r, typename base::gathered& into) {
      return base::borrow_if_idle(r, r.claim.word, claim::free, claim::lent, into);
    });
  }

  // A barrier's last step: what the freers of its batches put on their free policies' freeable
  // lists, taken from every record (borrowed between its owner's retires) and freed now. False at
  // the deadline (what was taken is freed all the same).
  bool free_freeable(Record& me, core::deadline d) {
    core::retired_list safe = me.freeing.take();
    for (Record* r = this->threads_.head(); r; r = decltype(this->threads_)::next_of(r)) {
      if (r == &me || r->forgotten) continue;
      core::waiter again(d);
      while (!r->try_borrow(r->claim.word, claim::free, claim::lent))
        if (!again.wait()) {
          this->free_now(me, std::move(safe));
          return false;
        }
      safe.splice(r->freeing.take());
      r->give_back(r->claim.word, claim::lent, claim::free);
    }
    this->free_now(me, std::move(safe));
    return true;
  }

  // Garbage that an exiting thread could not retire joins r's partial batches, each node by its
  // birth (retiring it later only counts more readers). r's claim held.
  void adopt(Record& r) noexcept {
    core::retired_list orphans = this->adopt_orphans();
    while (core::retired_hook* h = orphans.pop()) (void)Domain::join_batch(r, h);
  }
};

}  // namespace reclaim::detail
