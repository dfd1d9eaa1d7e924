// SPDX-License-Identifier: MIT
// The shared-config workload (issue 30): one location holds a config object, and every worker,
// per operation, either stores a fresh config (--insert percent of its operations) or reads the
// current one and checks every field of it (the rest; a config has no deletes, so --delete 0).
// It measures what sharing a pointer between threads costs: the lab's `rc_config` (an
// atomic_rc_ptr's load() to an rc_ptr), `rc_config_snapshot` (its get_snapshot()) and
// `raw_config` (the floor: a concurrent_ptr read through a guard_ptr, a store that retires the
// old config through the same scheme) under our schemes, and std::atomic<std::shared_ptr> and
// std::atomic_load on a std::shared_ptr as the peers std:atomic_shared_ptr and std:atomic_load
// (rc_peers.hpp). One workload for all of them: a cell (the location with its way to read and to
// store) provides
//   void store(std::uint64_t version)   makes a config of that version and stores it
//   bool read(F&& use)                  calls use(const config&) on the current config while
//                                       it is held; false (use not called) if there is none
//   bool settle()                       drops the last config and, for our schemes, waits until
//                                       the domain has freed everything retired (false if it
//                                       never gets there); the cell's destructor does it too
//   config_ledger& ledger()             what every config of the cell counted at destruction
//
// Validation: a config holds eight copies of its version and a checksum of it, and its
// destructor poisons them, so a read of a torn, destroyed or freed config fails the check (under
// ASan a freed one is reported at once). At the end, after settle(), every config made must have
// been destroyed exactly once: the result's expected_size and expected_key_sum are the count and
// the sum of the versions made (the prefill's one and every store's), final_size and
// final_key_sum those the destructors counted, and well_formed says that no read failed, no
// config was destroyed twice and the domain settled.
#pragma once
#include <atomic>
#include <cstdint>
#include <vector>

#include <reclaim/concurrent_ptr.hpp>
#include <reclaim/rc_ptr.hpp>

#include "latency.hpp"
#include "registry.hpp"
#include "rng.hpp"
#include "trial.hpp"

namespace reclaim_bench {

// What the configs of one cell counted as they were destroyed (any thread, so atomics; relaxed:
// the trial reads them after the workers joined and the domain settled, which orders them).
struct config_ledger {
  std::atomic<std::uint64_t> destroyed{0};
  std::atomic<std::uint64_t> destroyed_sum{0};  // of their versions, wrapping
  std::atomic<bool> destroyed_twice{false};
};

// The shared object: eight fields equal to its version and a checksum of it.
class config {
 public:
  config(std::uint64_t version, config_ledger& ledger) noexcept
      : checksum_(mix(version)), ledger_(&ledger) {
    for (std::uint64_t& f : field_) f = version;
  }
  config(const config&) = delete;
  config& operator=(const config&) = delete;
  // Counts itself and poisons its fields: a later read (or destruction) finds them torn.
  ~config() {
    const std::uint64_t version = field_[0];
    if (!consistent()) ledger_->destroyed_twice.store(true, std::memory_order_relaxed);
    ledger_->destroyed.fetch_add(1, std::memory_order_relaxed);
    ledger_->destroyed_sum.fetch_add(version, std::memory_order_relaxed);
    for (unsigned i = 0; i < fields; ++i) field_[i] = ~version + i;
    checksum_ = 0;
  }

  // Reads every field: all equal, and the checksum theirs.
  bool consistent() const noexcept {
    std::uint64_t differ = 0;
    for (std::uint64_t f : field_) differ |= f ^ field_[0];
    return differ == 0 && checksum_ == mix(field_[0]);
  }

 private:
  static constexpr unsigned fields = 8;
  static constexpr std::uint64_t mix(std::uint64_t v) noexcept {
    return (v ^ 0x9e3779b97f4a7c15) * 0xbf58476d1ce4e5b9;
  }

  std::uint64_t field_[fields];
  std::uint64_t checksum_;
  config_ledger* ledger_;
};

// Waits until every block retired into d is freed (rc_ptr.hpp: a deleter may retire its block
// again, so one barrier may not be enough). False if it does not get there.
template <class Domain>
bool settle_domain(Domain& d) {
  for (int i = 0; i < 1000; ++i) {
    d.barrier();
    if (d.stats().pending == 0) return true;
  }
  return false;
}

// rc_config (Snapshot false: load() to an rc_ptr, then dereference) and rc_config_snapshot
// (Snapshot true: get_snapshot(), dereference), over an atomic_rc_ptr<config, Scheme>.
template <class Scheme, bool Snapshot>
class rc_config_cell {
 public:
  using scheme_type = Scheme;
  using domain_type = typename Scheme::domain;

  explicit rc_config_cell(domain_type& d) : domain_(d), loc_(d) {}
  rc_config_cell(const rc_config_cell&) = delete;
  rc_config_cell& operator=(const rc_config_cell&) = delete;
  ~rc_config_cell() { settle(); }

  void store(std::uint64_t version) {
    loc_.store(reclaim::make_rc_in<config, Scheme>(domain_, version, ledger_));
  }
  template <class F>
  bool read(F&& use) {
    if constexpr (Snapshot) {
      reclaim::snapshot_ptr<config, Scheme> s = loc_.get_snapshot();
      if (!s) return false;
      use(*s);
    } else {
      reclaim::rc_ptr<config> p = loc_.load();
      if (!p) return false;
      use(*p);
    }
    return true;
  }
  bool settle() {
    loc_.store(nullptr);
    return settle_domain(domain_);
  }
  config_ledger& ledger() { return ledger_; }

 private:
  domain_type& domain_;
  config_ledger ledger_;  // before loc_: the configs count into it until settle()
  reclaim::atomic_rc_ptr<config, Scheme> loc_;
};

// raw_config, the floor: what sharing the config costs with the scheme's own calls and no count.
// A read protects the node with a guard_ptr; a store links a new node and retires the old one
// through the scheme (concurrent_ptr has no exchange: a CAS from what it last saw).
template <class Scheme>
class raw_config_cell {
  struct node : Scheme::node_base {
    node(std::uint64_t version, config_ledger& ledger) noexcept : value(version, ledger) {}
    config value;
  };

 public:
  using scheme_type = Scheme;
  using domain_type = typename Scheme::domain;

  explicit raw_config_cell(domain_type& d) : domain_(d) {}
  raw_config_cell(const raw_config_cell&) = delete;
  raw_config_cell& operator=(const raw_config_cell&) = delete;
  ~raw_config_cell() { settle(); }

  void store(std::uint64_t version) {
    // The domain's create(): he and ibr stamp the birth era there.
    replace(domain_.template create<node>(version, ledger_));
  }
  template <class F>
  bool read(F&& use) {
    reclaim::guard_ptr<node, Scheme> g(domain_);
    g.acquire(loc_);
    if (!g) return false;
    use(g->value);
    return true;
  }
  bool settle() {
    replace(nullptr);
    return settle_domain(domain_);
  }
  config_ledger& ledger() { return ledger_; }

 private:
  void replace(node* n) {
    typename reclaim::concurrent_ptr<node>::pointer old = loc_.load(std::memory_order_relaxed);
    // seq_cst as atomic_rc_ptr::store's exchange (release publishes n's config to readers).
    while (!loc_.compare_exchange_weak(old, n, std::memory_order_seq_cst,
                                       std::memory_order_relaxed)) {
    }
    // Retired as atomic_rc_ptr::store retires: through the domain, in an operation of its own,
    // and only when there is something to retire. (A guard opened for the prefill's store would
    // register the main thread, and under qsbr a registered thread that then only waits holds
    // every grace period: nothing would be freed during the trial.)
    if (old) domain_.retire(old.get());
  }

  domain_type& domain_;
  config_ledger ledger_;
  reclaim::concurrent_ptr<node> loc_;
};

// The workload (see the top of this file) over a cell DS.
template <class DS>
class config_workload {
 public:
  config_workload(DS& ds, const trial_config& cfg) : ds_(ds), cfg_(cfg), outcomes_(cfg.threads) {}

  // The first config, version 0 of the producer after the workers.
  void prefill() { store(prefilled_, cfg_.threads, 0); }

  template <class Span>
  void run(unsigned i, const std::atomic<bool>& stop, Span& span) {
    xoshiro256 rng(stream_seed(cfg_.seed, cfg_.trial, i));
    latency_sampler latency(stream_seed(cfg_.seed, cfg_.trial, latency_stream_base + i));
    outcome& mine = outcomes_[i];
    std::uint64_t seq = 0, ops = 0;
    const std::uint64_t limit = operation_limit(cfg_);
    // relaxed: `stop` carries no data; the join orders what the worker wrote before finish().
    while (ops < limit && !stop.load(std::memory_order_relaxed)) {
      const bool update = rng.below(100) < cfg_.insert_pct;
      span.next();
      latency.time([&] {
        if (update)
          store(mine, i, seq++);
        else
          ds_.read([&](const config& c) { mine.failed_reads += !c.consistent(); });
      });
      ++ops;
    }
    mine.ops = ops;
    mine.latency = latency.histogram();
  }

  void finish(trial_result& result) {
    const bool settled = ds_.settle();
    std::uint64_t made = prefilled_.made, made_sum = prefilled_.made_sum, failed = 0;
    latency_histogram latency;
    for (const outcome& o : outcomes_) {
      made += o.made;
      made_sum += o.made_sum;
      failed += o.failed_reads;
      result.ops += o.ops;
      latency += o.latency;
    }
    const config_ledger& l = ds_.ledger();
    result.latency = latency.summary();
    result.expected_size = static_cast<std::int64_t>(made);
    result.expected_key_sum = static_cast<std::int64_t>(made_sum);
    result.final_size = static_cast<std::int64_t>(l.destroyed.load(std::memory_order_relaxed));
    result.final_key_sum =
        static_cast<std::int64_t>(l.destroyed_sum.load(std::memory_order_relaxed));
    result.well_formed =
        settled && failed == 0 && !l.destroyed_twice.load(std::memory_order_relaxed);
  }

 private:
  // What one thread did; alignas: two workers' outcomes never share a cache line.
  struct alignas(128) outcome {
    std::uint64_t made = 0, made_sum = 0, failed_reads = 0, ops = 0;
    latency_histogram latency;
  };

  // Versions name their producer (a worker, or the prefill as producer `threads`) and its
  // sequence number, so that no two configs of a trial share one.
  void store(outcome& o, std::uint64_t producer, std::uint64_t seq) {
    const std::uint64_t version = producer << 40 | seq;
    ds_.store(version);
    ++o.made;
    o.made_sum += version;
  }

  DS& ds_;
  const trial_config& cfg_;
  outcome prefilled_;
  std::vector<outcome> outcomes_;
};

}  // namespace reclaim_bench
