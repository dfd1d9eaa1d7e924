// SPDX-License-Identifier: MIT
// The output files of a run (--out, --timeline, an experiment's `out` and timelines), checked
// before the first trial: a path that cannot take the lab's output is bad input, refused before
// anything is written, not found out after every trial ran (or never: renaming the timeline over a
// device node replaces the node).
#pragma once
#include <string>
#include <string_view>

namespace reclaim_bench {

// How the lab writes a file: --out is appended to in place; a --timeline file is replaced whole
// (written under a temporary name in its directory, then renamed over it).
enum class output_use { append, replace };

// Throws usage_error ("FLAG: ...") unless `path` can take the lab's output. An existing path must
// be a regular file (not a directory, a device such as /dev/full, a FIFO or a socket), and a file
// to append to must end with a newline (a partial last line would be glued to the next record). A
// new file, or a replacement, is made in the file's directory, which must exist and be writable;
// with `directories_made` (an experiment creates the directories of its outputs) the nearest
// directory that exists must be writable instead.
void check_output_path(std::string_view flag, const std::string& path, output_use use,
                       bool directories_made);

// Whether two paths name the same file: the same device and inode when both exist (so hard and
// symbolic links and relative paths count), otherwise the same path once made absolute and its
// existing part resolved.
bool same_file(const std::string& a, const std::string& b);

}  // namespace reclaim_bench
