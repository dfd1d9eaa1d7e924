#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Renders an HTML report (python -m reclaim_tools report, `make bench`'s results/report.html) to a
# PNG with the distribution's headless Chromium, to see the page as a browser shows it.
#   scripts/screenshot-report.sh [REPORT.html [OUT.png [HEIGHT]]]
# Defaults: results/report.html, the same name with .png, a 1200 x 4000 pixel window.
set -euo pipefail
html=${1:-results/report.html}
png=${2:-${html%.html}.png}
height=${3:-4000}
[ -f "$html" ] || { echo "screenshot-report: no such file '$html' (run make bench first)" >&2; exit 2; }
[[ "$height" =~ ^[1-9][0-9]*$ ]] || { echo "screenshot-report: HEIGHT '$height': a positive integer" >&2; exit 2; }
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "screenshot-report: needs Chromium; install it with: sudo apt-get install -y chromium" >&2
  exit 1
fi
# --no-sandbox: root (CI, containers) may not use Chromium's sandbox. The page has no script and
# loads nothing: its plots are embedded.
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1200,"$height" \
  --screenshot="$png" "file://$(realpath "$html")" 2>/dev/null
echo "$png"
