// SPDX-License-Identifier: MIT
// What every model of tests/verify/ shares: a node whose payload the checker watches, the model
// registry, and the run of one model under Relacy (core/verify/relacy.hpp says how the library's
// atomics, fences and threads become the checker's).
//
// A model is a Relacy test suite: the library's own scheme code run by 2-3 simulated threads on a
// tiny structure, with the domain made and destroyed inside each iteration. Relacy reports a read
// of a freed node (the payload is an rl::var in memory from its heap), a data race on a payload (a
// reader's load against the destructor's store), a node never freed (a memory leak at the end of
// the iteration: everything retired must be freed once the domain is gone), and failed RL_ASSERTs
// (the payload read and the stats).
#pragma once
#include <cstdio>
#include <functional>
#include <optional>
#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

#include <reclaim/concepts.hpp>
#include <reclaim/core/registry.hpp>

namespace reclaim_verify {

// A node with a watched payload: written when made, overwritten by its destructor, so that a read
// that may overlap the free is a data race even where the memory has not been handed back yet.
template <class Scheme>
struct node : Scheme::node_base {
  explicit node(int value) { payload($) = value; }
  ~node() { payload($) = -1; }
  int read() { return payload($); }
  rl::var<int> payload;
};

// The base of every model (a Relacy test suite, made anew for each schedule): each schedule's
// threads start as new threads would. The previous schedule's may have bound themselves to its
// domain again while destroying it, with memory of that schedule's heap.
template <class Model, unsigned Threads>
struct model : rl::test_suite<Model, Threads> {
  model() { reclaim::core::verify::forget_threads(); }
  // After the model's members, its domains among them: what lives as long as a simulation goes
  // (the signals' mailboxes, core/verify/relacy.hpp).
  ~model() { reclaim::core::verify::end_simulation(); }
};

// One model run, as the command line asked.
struct options {
  std::string mutant;                   // the fault injected (RECLAIM_MUTATED), or none
  unsigned long iterations = 2000;      // random schedules, or the bound of a full search
  rl::scheduler_type_e search = rl::random_scheduler_type;
  std::string state;                    // a failing run's state: replays that schedule
  bool history = false;                 // record every schedule's history, not only the replay's
};

struct outcome {
  bool failed = false;
  unsigned long iterations = 0;  // run (passed) or until the failure
  std::string verdict;           // what Relacy found ("ACCESS TO FREED MEMORY", ...)
  std::string report;            // Relacy's: the failure and the schedule's history
  std::string state;             // replays the failing schedule (--state)
};

// Relacy writes its report from inside the simulation, where operator new is its heap: a stream
// whose buffer grew there would be freed outside. This one writes to a temporary file and never
// allocates; read() gets the text back afterwards.
class report_file : public std::streambuf {
 public:
  report_file() : file_(std::tmpfile()) {}
  ~report_file() override {
    if (file_) std::fclose(file_);
  }
  std::string read() const {
    std::string text;
    if (!file_) return text;
    std::rewind(file_);
    char chunk[4096];
    for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, file_)) > 0;) text.append(chunk, n);
    return text;
  }

 private:
  int overflow(int c) override {
    if (c != EOF && file_) std::fputc(c, file_);
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    return file_ ? static_cast<std::streamsize>(std::fwrite(s, 1, n, file_)) : n;
  }
  std::FILE* file_;
};

template <class Model>
outcome simulate(const options& o) {
  reclaim::core::mutant = o.mutant;
  reclaim::core::verify::forget_threads();
  rl::test_params p;
  p.iteration_count = o.iterations;
  p.search_type = o.search;
  p.initial_state.assign(o.state.begin(), o.state.end());
  report_file report, progress;
  std::ostream out(&report), progress_out(&progress);
  p.output_stream = &out;
  p.progress_stream = &progress_out;
  p.output_history = p.collect_history = o.history;
  const bool passed = rl::simulate<Model>(p);
  reclaim::core::mutant = {};
  return {!passed, static_cast<unsigned long>(p.stop_iteration),
          passed ? "" : rl::test_result_str(p.test_result), report.read(),
          std::string(p.final_state.begin(), p.final_state.end())};
}

struct model_entry {
  std::string name;    // family/model/scheme
  std::string scheme;  // the lab's name of the scheme it runs
  std::function<outcome(const options&)> run;
};

// The faults the library compiles in for verification builds, and the schemes whose models must
// catch each (docs/verification.md).
struct mutant_entry {
  std::string name;
  std::string what;
  std::vector<std::string> schemes;
  std::string survives = {};  // why the models miss it, where they are known to (the docs say more)
  std::vector<std::string> survives_under = {};  // those schemes (empty: all of them)

  bool known_to_survive(const std::string& scheme) const {
    if (survives.empty()) return false;
    if (survives_under.empty()) return true;
    for (const std::string& s : survives_under)
      if (s == scheme) return true;
    return false;
  }
};

struct registry {
  std::vector<model_entry> models;
  std::vector<mutant_entry> mutants;

  template <class Model>
  void add(std::string name, std::string scheme) {
    models.push_back({std::move(name), std::move(scheme), &simulate<Model>});
  }
};

// The model files' registrations (one per family).
void add_epoch_models(registry& r);
void add_region_models(registry& r);
void add_hp_models(registry& r);
void add_signal_models(registry& r);
void add_era_models(registry& r);
void add_batch_models(registry& r);
void add_stamp_it_models(registry& r);
void add_lfrc_models(registry& r);
void add_rc_models(registry& r);

// A simulated thread's end: what pthread's thread-specific destructors run for a real one.
inline void thread_exits() { reclaim::core::leave_thread(); }

}  // namespace reclaim_verify
