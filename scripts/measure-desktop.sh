#!/usr/bin/env bash
# Measures the desktop app: cold start to the UI's first frame (the page has loaded and
# painted, its script has run and said hello over IPC), idle RSS of the app's process tree
# with one project open, and the size of the .deb.
#   scripts/measure-desktop.sh [APP_BINARY] [PROJECT_DIR]
# Defaults: the release build in $CARGO_TARGET_DIR (or target/) and the sample project.
# Runs under Xvfb when there is no DISPLAY.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
app="${1:-$target/release/paige-app}"
project="${2:-examples/sample-project}"
[ -x "$app" ] || { echo "error: no app binary at $app (build it: ui/node_modules/.bin/tauri build)" >&2; exit 1; }
work=$(mktemp -d)
cleanup() {
  [ -n "${app_pid:-}" ] && kill "$app_pid" 2>/dev/null || true
  [ -n "${xvfb_pid:-}" ] && kill "$xvfb_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
if [ -z "${DISPLAY:-}" ]; then
  Xvfb :77 -screen 0 1400x900x24 >/dev/null 2>&1 & xvfb_pid=$!
  export DISPLAY=:77
  sleep 1
fi
tree_rss_kb() { # RSS of $1 and all its descendants, in kB
  ps -e -o pid=,ppid=,rss= | awk -v root="$1" '
    { parent[$1] = $2; rss[$1] = $3 }
    END {
      for (p in rss) { q = p; while (q != "" && q != 0) { if (q == root) { total += rss[p]; break } q = parent[q] } }
      print total + 0
    }'
}
start=$(date +%s%N)
RUST_LOG=info NO_COLOR=1 PAIGE_AGENT_CMD="bash --norc" ANTHROPIC_API_KEY=sk-ant-measure DATA_DIR="$work/data" \
  "$app" "$project" >"$work/log" 2>&1 & app_pid=$!
for _ in $(seq 1 300); do
  grep -q "terminal started" "$work/log" && break
  sleep 0.01
done
grep -q "terminal started" "$work/log" || { echo "error: the UI never connected; log:" >&2; cat "$work/log" >&2; exit 1; }
ready=$(date +%s%N)
echo "cold start to first UI frame: $(( (ready - start) / 1000000 )) ms"
sleep 10
echo "idle RSS of the app process tree: $(( $(tree_rss_kb "$app_pid") / 1024 )) MB"
deb=$(ls "$target"/release/bundle/deb/*.deb 2>/dev/null | head -1 || true)
[ -n "$deb" ] && echo ".deb size: $(du -k "$deb" | awk '{printf "%.1f MB", $1/1024}') ($deb)"
rpm=$(ls "$target"/release/bundle/rpm/*.rpm 2>/dev/null | head -1 || true)
[ -n "$rpm" ] && echo ".rpm size: $(du -k "$rpm" | awk '{printf "%.1f MB", $1/1024}') ($rpm)"
exit 0
