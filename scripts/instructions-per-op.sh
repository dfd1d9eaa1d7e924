#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Instructions per operation of containers under schemes, counted by callgrind: deterministic,
# unlike timings on a shared 2-core machine. Builds scripts/ops_driver.cpp against INCLUDE
# (default: this checkout's include/; point it at another checkout's to compare versions), runs
# N = 100,000 and 200,000 operations, and prints the difference divided by 100,000.
#   scripts/instructions-per-op.sh [CONTAINER [SCHEME...]]   (default: hm_hashmap and six schemes;
#   containers: scripts/ops_driver.cpp)
#   INCLUDE=/path/to/other/include scripts/instructions-per-op.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
include=${INCLUDE:-$here/../include}
container=${1:-hm_hashmap}
shift || true
schemes=("$@")
[ ${#schemes[@]} -gt 0 ] || schemes=(none debra ebr qsbr hp token_af)
command -v valgrind >/dev/null || { echo "instructions-per-op: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
g++ -std=c++20 -O2 -DNDEBUG -I"$include" "$here/ops_driver.cpp" -o "$work/ops_driver" -pthread
count() {  # instructions of a whole run of N operations
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$work/ops_driver" "$container" "$1" "$2" 2>&1 |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
for scheme in "${schemes[@]}"; do
  a=$(count "$scheme" 100000)
  b=$(count "$scheme" 200000)
  echo "$container $scheme $(( (b - a) / 100000 )) instructions/op"
done
