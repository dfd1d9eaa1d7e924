#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs two builds of the lab on one sweep, trial by trial in alternating order (before, after;
# then after, before; ...), so that the machine's drift falls on both alike, and prints the
# throughput ratios after / before per point (python -m reclaim_tools compare).
#   scripts/compare-builds.sh BEFORE_BENCH AFTER_BENCH DIR TRIALS LAB_FLAGS...
# e.g. a checkout of an older commit built with `cmake --preset release` against this one:
#   scripts/compare-builds.sh /tmp/old/build/release/bench/reclaim-bench \
#       build/release/bench/reclaim-bench results/generic 5 --ds lazy_list,hm_list --scheme debra
# DIR receives before.jsonl, after.jsonl (appended to) and compare.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 4 ]; then
  echo "usage: $0 BEFORE_BENCH AFTER_BENCH DIR TRIALS LAB_FLAGS..." >&2
  exit 2
fi
before=$1 after=$2 dir=$3 trials=$4
shift 4
for bench in "$before" "$after"; do
  [ -x "$bench" ] || { echo "compare-builds: '$bench' is not an executable lab" >&2; exit 2; }
done
[[ "$trials" =~ ^[1-9][0-9]*$ ]] || { echo "compare-builds: TRIALS '$trials': a positive integer" >&2; exit 2; }
mkdir -p "$dir"
for ((t = 1; t <= trials; ++t)); do
  if ((t % 2)); then order=(before after); else order=(after before); fi
  for which in "${order[@]}"; do
    bench=$before
    [ "$which" = after ] && bench=$after
    echo "compare-builds: trial $t of $trials: $which" >&2
    "$bench" "$@" --trials 1 --out "$dir/$which.jsonl" >/dev/null
  done
done
PYTHONPATH="$here/../tools" "$here/../.venv/bin/python" -m reclaim_tools compare \
  "$dir/before.jsonl" "$dir/after.jsonl" --out "$dir/compare.md" >/dev/null
cat "$dir/compare.md"
