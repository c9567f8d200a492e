#!/usr/bin/env bash
# Runs the benchmark suite BENCHMARKS.md reports, each next to its baseline in the same run,
# installing what the baselines need first. One release build; every bench runs from it.
#   scripts/bench.sh            # all of them (about 15 minutes on 2 cores after the build)
#   scripts/bench.sh hook memory  # only these (names as in the list below)
# Benches: hook, mcp_diff, memory, dashboard, startup, ws_ingest, confine, desktop.
cd "$(dirname "$0")/.."
. scripts/lib.sh

all=(hook mcp_diff memory dashboard startup ws_ingest confine desktop)
wanted=("${@:-${all[@]}}")
for name in "${wanted[@]}"; do
  [[ " ${all[*]} " == *" $name "* ]] || die "unknown bench '$name' (one of: ${all[*]})"
done
want() { [[ " ${wanted[*]} " == *" $1 "* ]]; }

ensure_rust
# The baselines: Node.js for the hook and the TypeScript MCP SDK, Python for the hook,
# ChromaDB's real server for memory, and the embedding model both stores are filled with.
ensure_node
command -v python3 >/dev/null || apt_install python3
ensure_chromadb
ensure_embedding_model "$tools_dir/models"
export PAIGE_MODEL_DIR="$tools_dir/models"

say "building the benches (release)"
cargo bench --locked -p paige-cli -p paige-memory -p paige-server --no-run 2>&1 | tail -2

run() {
  local package=$1 bench=$2
  say "$bench"
  cargo bench --locked -q -p "$package" --bench "$bench" 2>&1 | grep -v '^\s*\(Finished\|Running\|Compiling\)'
}
want hook && run paige-cli hook
want mcp_diff && run paige-cli mcp_diff
want memory && run paige-memory memory
want dashboard && run paige-server dashboard
want startup && run paige-cli startup
want ws_ingest && run paige-server ws_ingest
# Coach mode's layers (issue 39): bubblewrap for the jail, against plain spawns.
want confine && { apt_install bubblewrap; run paige-cli confine; }
if want desktop; then
  say "desktop: idle memory of the app vs an empty Tauri window (Xvfb)"
  ensure_tauri_build_deps
  apt_install xvfb xauth
  build_ui
  cargo build --locked --release -p paige-app 2>&1 | tail -1
  RUNS="${RUNS:-3}" scripts/measure-desktop.sh
fi
