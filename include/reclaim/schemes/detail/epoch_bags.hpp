// SPDX-License-Identifier: MIT
// Limbo bags indexed by epoch, shared by the schemes that tag retired nodes with an epoch and free
// a node once the global epoch is three past its tag (debra, ebr, ner, qsbr, epoch_pop).
// epoch_engine.hpp argues why a tag is safe to free at tag + 3 (qsbr.hpp for qsbr's tags); this
// file only keeps the bookkeeping. The
// rule does not depend on who frees: a thread that exits hands each bag over with its tag, and
// whoever reads the epoch at tag + 3 or later frees it.
#pragma once
#include <cstdint>
#include <utility>

#include "../../core/retired.hpp"
#include "../../core/stats.hpp"
#include "../../core/sync.hpp"

namespace reclaim::detail {

// Three bags, bag (t mod 3) holding the nodes tagged t. A bag is reused for tag t only after the
// nodes it held (tag t - 3 or older, the same residue) were handed to the free policy. Owner only.
class epoch_bags {
 public:
  epoch_bags() = default;
  epoch_bags(const epoch_bags&) = delete;  // open_ points into the object
  epoch_bags& operator=(const epoch_bags&) = delete;

  static constexpr unsigned count = 3;
  // A node tagged t is safe once the epoch is >= t + lag. An exiting thread's bags are tagged with
  // epochs no newer than the current one: lag advances make all of them safe (exit_flushes).
  static constexpr unsigned lag = 3;

  // Whether nodes tagged `tag` may be freed by a thread that read `epoch` (with acquire, from the
  // global epoch).
  static bool safe(std::uint64_t tag, std::uint64_t epoch) noexcept {
    return tag + (RECLAIM_MUTATED(epoch_free_one_epoch_early) ? lag - 1 : lag) <= epoch;
  }

  // Adds a node tagged t, where t is at most the current global epoch. If bag (t mod 3) still holds
  // an older tag, that tag is at most t - 3 <= epoch - 3, hence safe: free it first.
  template <class Record>
  void push(core::retired_hook* node, std::uint64_t t, Record& r, core::pending_gauge& g) {
    make_room(t, r, g).push(node);
  }

  // For a scheme whose tag changes only when the thread sees a new epoch, and that sees one every
  // many operations (debra): open(t) there makes bag (t mod 3) the one push_open() adds to, on the
  // terms of push(), so that a retire is one push with no tag to compare. (ebr, which may see a
  // new epoch on every entry, is cheaper tagging each retire.)
  template <class Record>
  void open(std::uint64_t t, Record& r, core::pending_gauge& g) {
    core::retired_list older = claim(t);
    open_ = &bags_[t % count];
    if (!older.empty()) r.release_safe(std::move(older), g);
  }
  void push_open(core::retired_hook* node) noexcept { open_->push(node); }

  // The thread saw the global epoch at `epoch`: free every bag whose tag is lag behind it.
  template <class Record>
  void collect(std::uint64_t epoch, Record& r, core::pending_gauge& g) {
    for (unsigned i = 0; i < count; ++i)
      if (!bags_[i].empty() && safe(tags_[i], epoch)) r.release_safe(std::move(bags_[i]), g);
  }

  // Retired nodes held in the bags.
  std::size_t size() const noexcept {
    std::size_t n = 0;
    for (const auto& bag : bags_) n += bag.size();
    return n;
  }

  // Thread exit: give(list, tag) for each bag, which keeps its age in the orphanage.
  template <class Give>
  void hand_over(Give give) noexcept {
    for (unsigned i = 0; i < count; ++i) give(std::move(bags_[i]), tags_[i]);
  }

  // A barrier takes every bag (thread_record::try_borrow); the tags stay, and the bags' owner goes
  // on pushing into them.
  void take_all(core::retired_list& into) noexcept {
    for (auto& bag : bags_) into.splice(std::move(bag));
  }

  // Domain destruction: no thread runs any more.
  void destroy_all() noexcept {
    for (auto& bag : bags_) bag.destroy_all();
  }

 private:
  template <class Record>
  core::retired_list& make_room(std::uint64_t t, Record& r, core::pending_gauge& g) {
    core::retired_list older = claim(t);
    if (!older.empty()) r.release_safe(std::move(older), g);
    return bags_[t % count];
  }
  // Makes bag (t mod 3) t's and returns what it held of an older tag, for the caller to free only
  // once the bags are consistent again: the deleters it runs may retire into this domain (rc_ptr's
  // deferred decrements), and such a retire must find t's bag open, not the old tag's.
  core::retired_list claim(std::uint64_t t) noexcept {
    unsigned i = static_cast<unsigned>(t % count);
    if (tags_[i] == t) return {};
    tags_[i] = t;
    return std::move(bags_[i]);
  }

  core::retired_list bags_[count];
  std::uint64_t tags_[count] = {0, 0, 0};
  core::retired_list* open_ = &bags_[0];  // tagged tags_[0] = 0 until the first open()
};

}  // namespace reclaim::detail

namespace reclaim {

}  // namespace reclaim
