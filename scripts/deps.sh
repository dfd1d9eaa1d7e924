#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian/Ubuntu packages that `make bench` or `make test` needs, when they are missing.
# As root it runs apt-get; otherwise it prints the one line to run and fails.
#   scripts/deps.sh bench|test
set -euo pipefail

build=(cmake ninja-build g++)
bench=(libcli11-dev nlohmann-json3-dev libfmt-dev libtomlplusplus-dev)
# The allocators of --alloc, preloaded by soname (no headers needed): jemalloc, tcmalloc (the lab
# preloads libtcmalloc_minimal.so.4 of libtcmalloc-minimal4; libgoogle-perftools4 brings the full
# one), mimalloc.
allocators=(libjemalloc2 libtcmalloc-minimal4 libgoogle-perftools4 libmimalloc2.0)
# The lab's peers (bench/peers.hpp): xenium, libcds, liburcu and Concurrency Kit, whose schemes the
# lab runs beside ours when they are installed (the lab builds without them).
peers=(libxenium-dev libcds-dev liburcu-dev libck-dev)
# python3-venv: .venv for the tools (pandas, matplotlib from PyPI; tools/requirements.txt).
python=(python3 python3-venv)
# pkg-config: tests/packaging compiles a program with the installed reclaim.pc. relacy-dev: the
# model checker of tests/verify. python3-clang: libclang for scripts/api_reference.py (docs.api).
test=(libgtest-dev pkg-config relacy-dev python3-clang)

case "${1:-}" in
  bench) wanted=("${build[@]}" "${bench[@]}" "${allocators[@]}" "${peers[@]}" "${python[@]}") ;;
  test) wanted=("${build[@]}" "${bench[@]}" "${allocators[@]}" "${peers[@]}" "${python[@]}"
              "${test[@]}") ;;
  *) echo "usage: $0 bench|test" >&2; exit 2 ;;
esac

missing=()
for pkg in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  echo "deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "deps: missing packages; run: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
