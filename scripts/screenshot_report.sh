#!/bin/sh
# Renders the latest report in headless Chromium and saves a screenshot, to check it by eye.
#   scripts/screenshot_report.sh [REPORT.html] [OUT.png]
# Needs Debian's chromium (and fonts-noto-cjk for Chinese names): apt-get install chromium fonts-noto-cjk
set -eu
cd "$(dirname "$0")/.."
report=${1:-${VISIBILITY_HOME:-.visibility}/reports/latest.html}
out=${2:-report.png}
[ -f "$report" ] || { echo "no report at $report: run ./dev.sh demo first" >&2; exit 2; }
chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --virtual-time-budget=15000 --window-size=1200,3000 \
    --screenshot="$out" "file://$(realpath "$report")" 2>/dev/null
echo "$out"
