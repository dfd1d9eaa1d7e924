#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Paper 004 (Dice, Herlihy, Kogan), Figure 13, by trace-driven simulation as its section 7.3 did
# with Pin: every store of the lab's lazy_list and lazy_skiplist under hp, recorded by valgrind's
# lackey, hazard-slot stores marked, replayed through a 32-line store buffer and hazard lookaside
# buffers of 0, 1, 2, 4, ..., 32 entries (tools/reclaim_tools/hlb.py says how it counts).
#   scripts/hlb-record.sh [EXPERIMENT.toml [OUT_DIR]]
#       default: experiments/hlb_fig13.toml and results/hlb; writes OUT_DIR/trace.npz, the table
#       OUT_DIR/hlb.md and OUT_DIR/plots/{hlb,hlb_gaps}.png
# 1. The recording build, build/hlb: the release preset's flags, plus -g (GCC's code does not
#    change with it; its debug information tells which instruction publishes a hazard) and
#    -no-pie (run-time addresses are then the binary's own, for addr2line), with the schemes none
#    and hp only (RECLAIM_BENCH_ONLY_SCHEMES).
# 2. reclaim_tools hlb-record runs each point of the experiment (ds, scheme and threads expanded)
#    under valgrind's lackey, one process each, and turns each log into per-thread store traces
#    as soon as it is written (a log takes hundreds of MB). Why lackey rather than instrumenting
#    the lab: it sees every store the processor would (spills, pushes, the allocator's, the
#    scheme's), as Pin did, with no change to the code measured; valgrind runs one thread at a
#    time, and --trace-sched says which.
# 3. reclaim_tools hlb: the table, Figure 13 and the gap histogram.
# Needs valgrind and binutils; a run of the default experiment takes a few minutes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
experiment=${1:-experiments/hlb_fig13.toml}
out=${2:-results/hlb}
python=${PYTHON:-$root/.venv/bin/python}
for tool in valgrind addr2line; do
  command -v $tool >/dev/null ||
    { echo "hlb-record: needs $tool (apt-get install valgrind binutils)" >&2; exit 1; }
done
[ -f "$experiment" ] || { echo "hlb-record: no such experiment file '$experiment'" >&2; exit 2; }
experiment=$(realpath "$experiment")
out=$(realpath -m "$out")

cd "$root"
cmake -S . -B build/hlb -G Ninja -DCMAKE_BUILD_TYPE=Release -DRECLAIM_BUILD_BENCH=ON \
  -DCMAKE_CXX_FLAGS=-g -DCMAKE_EXE_LINKER_FLAGS=-no-pie \
  "-DRECLAIM_BENCH_ONLY_SCHEMES=none;hp" >/dev/null
cmake --build build/hlb --target reclaim-bench
bench=$root/build/hlb/bench/reclaim-bench

mkdir -p "$out"
PYTHONPATH=tools "$python" -m reclaim_tools hlb-record "$experiment" --bench "$bench" \
  --out "$out/trace.npz"
PYTHONPATH=tools "$python" -m reclaim_tools hlb "$out/trace.npz" --out "$out/plots/hlb.png" \
  --gaps-out "$out/plots/hlb_gaps.png" --table "$out/hlb.md"
