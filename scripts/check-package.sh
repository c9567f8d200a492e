#!/usr/bin/env bash
# The installed app has the hook: unpacks a built .deb into a temporary root and starts the
# unpacked paige-app (under Xvfb) on a project, then checks that the Claude Code settings it
# generates for its terminal call the unpacked `paige hook`.
#   scripts/check-package.sh PATH/TO/Paige.deb
# Needs xvfb-run and Claude Code on PATH (the terminal runs it; without it no settings).
set -uo pipefail
deb="$1"
work=$(mktemp -d)
app=""
# The app, Xvfb and the terminal's Claude Code run in one process group, stopped together.
stop() { [ -n "$app" ] && kill -TERM -- "-$app" 2>/dev/null && wait "$app" 2>/dev/null; rm -rf "$work"; }
trap stop EXIT
passed=0
failed=0
check() {
  if eval "$2"; then passed=$((passed + 1)); echo "ok   $1"; else failed=$((failed + 1)); echo "FAIL $1"; fi
}
finish() {
  echo "package check: $passed passed, $failed failed"
  [ "$failed" = 0 ]
  exit
}
root="$work/root"
dpkg-deb -x "$deb" "$root" || { failed=1; finish; }
check "the package ships paige beside paige-app" '[ -x "$root/usr/bin/paige" ] && [ -x "$root/usr/bin/paige-app" ]'
check "the package depends on bubblewrap and socat" 'dpkg-deb -f "$deb" Depends | grep -q bubblewrap && dpkg-deb -f "$deb" Depends | grep -q socat'
check "the unpacked paige runs" '"$root/usr/bin/paige" --version >/dev/null'
profile="$root/etc/apparmor.d/paige-bwrap"
check "the package ships its own bwrap with an AppArmor profile allowing it a user namespace" \
  '[ -x "$root/usr/lib/paige/bwrap" ] && grep -q "^profile paige-bwrap /usr/lib/paige/bwrap flags=(unconfined) {" "$profile" && grep -q "^  userns,$" "$profile"'
check "its bwrap runs" '"$root/usr/lib/paige/bwrap" --version >/dev/null'
model="$root/usr/lib/Paige/models/all-MiniLM-L6-v2"
check "the package ships the embedding model" '[ -s "$model/model.safetensors" ] && [ -s "$model/tokenizer.json" ] && [ -s "$model/config.json" ]'
mkdir -p "$work/project" "$work/data"
echo 'fn main() {}' > "$work/project/main.rs"
# No other paige on PATH: only the one beside the app can be found.
path="$(dirname "$(command -v claude)"):/usr/bin:/bin"
DATA_DIR="$work/data" PATH="$path" HOME="$work" ANTHROPIC_API_KEY=sk-package-check \
  setsid xvfb-run -a "$root/usr/bin/paige-app" "$work/project" >"$work/app.log" 2>&1 &
app=$!
settings=""
for _ in $(seq 1 600); do
  settings=$(ls "$work"/data/run/settings-*.json 2>/dev/null | head -1)
  [ -n "$settings" ] && break
  sleep 0.1
done
check "the unpacked app starts Claude Code with generated settings" '[ -n "$settings" ]'
expected="'$root/usr/bin/paige' hook pre-tool-use"
check "its hooks call the unpacked paige hook" 'grep -qF "$expected" "$settings"'
# No model in DATA_DIR/models: what the app found is the one it ships.
check "the unpacked app's memory uses the model it ships" \
  'grep -q "collection paige_memories ready" "$work/app.log" && ! grep -q "embedding model is not available" "$work/app.log"'
[ "$failed" = 0 ] || { echo "--- app log"; tail -20 "$work/app.log"; }
finish
