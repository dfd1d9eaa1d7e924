// SPDX-License-Identifier: MIT
// Temporary files a run must not leave behind: the timeline's FILE.tmpPID and the rows file of the
// trial a child process runs, FILE.tmpPID.child (timeline_file.hpp). The lab removes them itself
// when it ends normally or with an error. When a signal that ends a process by default (SIGINT,
// SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGABRT) ends it, a handler removes them and the signal then
// ends the lab as it would have (the exit status tells which signal). SIGKILL cannot be caught:
// what it leaves is removed by the next run that writes a timeline next to it, once the process
// that made the file is gone.
#pragma once
#include <sys/types.h>

#include <string>

namespace reclaim_bench {

// Installs the handler for those signals, except one that was ignored when the lab started (a run
// in the background of a non-interactive shell keeps ignoring SIGINT).
void remove_temporaries_on_signals();

// Registers `path`, a file that the handler removes, until forget_on_signal(path). The paths are
// copied into preallocated buffers: the handler only reads them and calls unlink(2). Throws
// usage_error past 64 files.
void remove_on_signal(const std::string& path);
void forget_on_signal(const std::string& path);

// The child process that runs the current trial (0: none). The handler sends it SIGTERM, so that it
// does not run on, and write its rows file, after the lab has gone.
void set_running_child(pid_t child);

// Removes the files named NAME.tmpPID or NAME.tmpPID.child next to `path` (NAME is its file name)
// whose process PID no longer exists (kill(PID, 0) fails with ESRCH), with a note on stderr for
// each; a live process's files, this one's included, are left alone.
void remove_stale_temporaries(const std::string& path);

}  // namespace reclaim_bench
