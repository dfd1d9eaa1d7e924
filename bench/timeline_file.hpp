// SPDX-License-Identifier: MIT
// The --timeline file: every trial's timeline events (reclaim/core/timeline.hpp) as one CSV file
// with the header
//   ds,scheme,alloc,threads,trial,thread,event,start_ns,end_ns,value
// where start_ns and end_ns count from the trial's measured start and `thread` is the worker index.
// The file is written under a temporary name next to FILE and renamed when the run ends, so FILE
// never holds half a run. Trials that run in a child process write their rows to a file of their
// own, which the parent appends whole. Neither temporary file outlives the run (cleanup.hpp).
#pragma once
#include <cstdio>
#include <string>
#include <string_view>

#include "registry.hpp"

namespace reclaim_bench {

// What the rows of one trial say before the event.
struct timeline_labels {
  std::string_view ds;
  std::string_view scheme;
  std::string_view alloc;
  unsigned threads;
  unsigned trial;
};

// Writes the rows of `result`'s timeline (none if it recorded none), without the header, to
// `file`, opened on `path`. Throws std::system_error naming `path` if the write fails.
void write_timeline_rows(std::FILE* file, const std::string& path, const timeline_labels& labels,
                         const trial_result& result);

// The same into a file of its own (a child's rows), created or truncated.
void write_timeline_rows(const std::string& path, const timeline_labels& labels,
                         const trial_result& result);

class timeline_file {
 public:
  // Removes what killed runs left next to FILE (remove_stale_temporaries), creates the temporary
  // file and writes the header; throws usage_error if it cannot.
  explicit timeline_file(std::string path);
  ~timeline_file();  // removes the temporary files (commit() has renamed FILE's)
  timeline_file(const timeline_file&) = delete;
  timeline_file& operator=(const timeline_file&) = delete;

  void append(const timeline_labels& labels, const trial_result& result);
  // Where a child writes its trial's rows. append_child_rows() copies them if the child succeeded
  // (a failed child may have left half a trial) and removes the file either way.
  std::string child_rows_path() const { return temp_ + ".child"; }
  void append_child_rows(bool child_succeeded);
  // Everything is written: FILE becomes the temporary file; but if no trial's rows were added
  // (every trial failed or was not run), FILE stays as it was. If that fails, the temporary file
  // is removed and std::system_error thrown.
  void commit();

 private:
  void forget_temporaries() const;  // the files the signal handler removes (cleanup.hpp)

  std::string path_;
  std::string temp_;
  std::FILE* file_ = nullptr;
  unsigned trials_ = 0;  // whose rows were added
};

}  // namespace reclaim_bench
