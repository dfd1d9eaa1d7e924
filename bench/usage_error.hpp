// SPDX-License-Identifier: MIT
// Bad input to the lab. main() prints "reclaim-bench: <what>" as one line and exits with status 2;
// nothing has been written by then, because every argument is checked before the output file is
// opened.
#pragma once
#include <stdexcept>

namespace reclaim_bench {

struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace reclaim_bench
