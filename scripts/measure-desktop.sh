#!/usr/bin/env bash
# Measures the desktop app: cold start to the UI's first frame (the page has loaded and
# painted, its script has run and said hello over IPC), idle memory of the app's process
# tree with one project open, and the size of the .deb/.rpm.
#   scripts/measure-desktop.sh [APP_BINARY] [PROJECT_DIR]
# Defaults: the release build in $CARGO_TARGET_DIR (or target/) and the sample project.
# Runs under Xvfb when there is no DISPLAY. RUNS=N (default 1) starts the app N times and
# reports medians; IDLE_SECS (default 10) is how long it idles before memory is read;
# OPEN_FILE=src/main.js has the file opened in the editor first (through the app's MCP
# server, as the agent would: the editor, Monaco, loads only when a file is opened). Any
# other environment (WEBKIT_*, JSC_*, GLIBC_TUNABLES...) reaches the app as is.
#
# Memory per process, from /proc/PID/smaps_rollup, in MB:
#   RSS  resident pages, shared library pages counted in full in every process: summed over
#        the tree it counts libwebkit2gtk, libLLVM... once per process that maps them;
#   PSS  each shared page divided by the number of processes mapping it: summed over the
#        tree, the fair "tree total" — lower while other processes (another WebKit app, the
#        desktop's GTK apps) map the same libraries;
#   USS  Private_Clean + Private_Dirty: what ending that process alone would free.
# As root also the tree's distinct pages (/proc/PID/pagemap): each physical page the tree
# maps counted once — what the tree costs by itself, whatever else runs beside it.
# Groups: paige-app itself; each WebKit helper (WebKitWebProcess, WebKitNetworkProcess);
# "terminal" is the window's terminal child (PAIGE_AGENT_CMD, here `bash --norc`) and its
# descendants — it leads its own session, so it is told apart by its session id. It is
# reported separately: it is whatever the user runs there (Claude Code, when real).
# Then the same for the floor (FLOOR, default: tauri-floor built beside the app, built when
# missing): an empty Tauri window with the same WebKit settings, and Paige minus the floor
# per process — what is Paige's own.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
app="${1:-$target/release/paige-app}"
project="${2:-examples/sample-project}"
runs="${RUNS:-1}"
idle="${IDLE_SECS:-10}"
[ -x "$app" ] || { echo "error: no app binary at $app (build it: scripts/package.sh)" >&2; exit 1; }
# The floor: an empty Tauri window (src-tauri/bin/floor.rs). FLOOR=none skips it.
floor="${FLOOR:-$target/release/tauri-floor}"
if [ "$floor" = none ]; then floor=
elif [ ! -x "$floor" ]; then
  echo "building the floor, an empty Tauri window (cargo build --release --features floor --bin tauri-floor)" >&2
  cargo build --release --quiet --features floor --bin tauri-floor
fi
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

# One line per process of the tree under $1: "group pid rss_kB pss_kB uss_kB".
tree_memory() {
  local root=$1 root_sid pid ppid sid group exe
  root_sid=$(ps -o sid= -p "$root" | tr -d ' ')
  ps -e -o pid=,ppid=,sid= | awk -v root="$root" '
    { parent[$1] = $2; line[$1] = $0 }
    END { for (p in line) { q = p; while (q != "" && q != 0) { if (q == root) { print line[p]; break } q = parent[q] } } }' |
    while read -r pid ppid sid; do
      [ -r "/proc/$pid/smaps_rollup" ] || continue
      exe=$(basename "$(readlink "/proc/$pid/exe" 2>/dev/null || cat "/proc/$pid/comm" 2>/dev/null)" 2>/dev/null) || continue
      if [ "$pid" = "$root" ]; then group=paige-app
      elif [ "$sid" != "$root_sid" ]; then group=terminal
      else group=$exe
      fi
      awk -v g="$group" -v pid="$pid" '
        /^Rss:/ { rss = $2 } /^Pss:/ { pss = $2 } /^Private_(Clean|Dirty):/ { uss += $2 }
        END { if (rss != "") print g, pid, rss, pss, uss + 0 }' "/proc/$pid/smaps_rollup" 2>/dev/null || true
    done
}

# "distinct APP_KB ALL_KB": the physical pages the processes GROUP=PID... map, each counted
# once, without and with the terminal. Nothing without root (pagemap hides page frames).
distinct_pages() {
  [ "$(id -u)" = 0 ] && command -v python3 >/dev/null || return 0
  python3 - "$@" <<'PY' || true
import array, sys
frames = {}
for arg in sys.argv[1:]:
    group, pid = arg.split("=")
    seen = frames.setdefault(group, set())
    try:
        with open(f"/proc/{pid}/smaps") as smaps, open(f"/proc/{pid}/pagemap", "rb") as pagemap:
            for line in smaps:
                head = line.split(None, 1)[0]
                if not head.endswith(":"):
                    start, end = (int(x, 16) for x in head.split("-"))
                elif head == "Rss:" and int(line.split()[1]) > 0:
                    pagemap.seek(start // 4096 * 8)
                    entries = array.array("Q", pagemap.read((end - start) // 4096 * 8))
                    seen.update(e & ((1 << 55) - 1) for e in entries if e >> 63)
    except OSError:
        pass
app = set().union(*(f for g, f in frames.items() if g != "terminal"))
everything = app.union(frames.get("terminal", set()))
if everything and 0 not in everything:
    print("distinct", len(app) * 4, len(everything) * 4)
PY
}

# Opens $1 in the editor through the running app's MCP server (DATA_DIR/run/server.json).
open_in_editor() {
  local info port token headers=(-H 'content-type: application/json' -H 'accept: application/json, text/event-stream')
  info="$work/data/run/server.json"
  port=$(sed -n 's/.*"port": *\([0-9]*\).*/\1/p' "$info")
  token=$(sed -n 's/.*"token": *"\([^"]*\)".*/\1/p' "$info")
  headers+=(-H "authorization: Bearer $token")
  curl -sf -D "$work/mcp-headers" -o /dev/null "${headers[@]}" "http://127.0.0.1:$port/mcp" \
    -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"measure-desktop","version":"1"}}}'
  headers+=(-H "mcp-session-id: $(awk 'tolower($1) == "mcp-session-id:" { print $2 }' "$work/mcp-headers" | tr -d '\r')")
  curl -sf -o /dev/null "${headers[@]}" "http://127.0.0.1:$port/mcp" -d '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  curl -sf "${headers[@]}" "http://127.0.0.1:$port/mcp" \
    -d "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"paige_open_file\",\"arguments\":{\"path\":\"$1\"}}}" |
    grep -q '"success":true' || { echo "error: could not open $1 in the editor" >&2; exit 1; }
}

# Starts "$@" (an app binary and its arguments) RUNS times under the label $1, waits for the
# line $2 in its log, idles, and appends its samples (cold start, memory per group).
measure() {
  local label=$1 ready_line=$2 run start ready
  shift 2
  for run in $(seq 1 "$runs"); do
    rm -rf "$work/data"
    start=$(date +%s%N)
    RUST_LOG=info NO_COLOR=1 PAIGE_AGENT_CMD="bash --norc" ANTHROPIC_API_KEY=sk-ant-measure DATA_DIR="$work/data" \
      "$@" >"$work/log" 2>&1 & app_pid=$!
    for _ in $(seq 1 300); do
      grep -q "$ready_line" "$work/log" && break
      sleep 0.01
    done
    grep -q "$ready_line" "$work/log" || { echo "error: $label never showed its page; log:" >&2; cat "$work/log" >&2; exit 1; }
    ready=$(date +%s%N)
    echo "start $label $(( (ready - start) / 1000000 ))" >>"$work/samples"
    [ "$runs" -gt 1 ] && echo "$label run $run: cold start to first frame: $(( (ready - start) / 1000000 )) ms"
    [ "$label" = paige ] && [ -n "${OPEN_FILE:-}" ] && open_in_editor "$OPEN_FILE"
    sleep "$idle"
    tree_memory "$app_pid" >"$work/tree"
    awk -v label="$label" '{ rss[$1] += $3; pss[$1] += $4; uss[$1] += $5 }
      END { for (g in rss) print "mem", label, g, rss[g], pss[g], uss[g] }' "$work/tree" >>"$work/samples"
    distinct_pages $(awk '{ print $1 "=" $2 }' "$work/tree") | sed "s/^distinct /distinct $label /" >>"$work/samples"
    kill "$app_pid" 2>/dev/null || true
    wait "$app_pid" 2>/dev/null || true
    app_pid=
    sleep 1
  done
}

measure paige "terminal started" "$app" "$project"
[ -n "$floor" ] && measure floor "floor ready" "$floor"

# Medians over the runs: cold start, and RSS/PSS/USS per group, for paige-app + WebKit
# (without the terminal) and for the whole tree; then the floor's, and Paige minus the floor.
awk -v runs="$runs" -v open_file="${OPEN_FILE:-}" '
  function median(list,   n, v, i, j, t) {
    n = split(list, v, " ")
    if (n == 0) return 0
    for (i = 2; i <= n; i++) { t = v[i] + 0; for (j = i - 1; j >= 1 && v[j] + 0 > t; j--) v[j + 1] = v[j]; v[j + 1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  function add(key, value) { values[key] = values[key] " " value }
  function mb(label, row, kind) { return median(values[label " " row " " kind]) / 1024 }
  $1 == "start" { add($2 " start", $3); labels[$2] = 1; next }
  $1 == "distinct" { add($2 " distinct app", $3); add($2 " distinct all", $4); has_distinct[$2] = 1; next }
  $1 == "mem" {
    l = $2; g = $3
    if (l == "floor" && g == "tauri-floor") g = "paige-app"
    group[g] = 1; add(l " " g " rss", $4); add(l " " g " pss", $5); add(l " " g " uss", $6)
    run = ++seen[l " " g]
    if (g != "terminal") { app_rss[l, run] += $4; app_pss[l, run] += $5; app_uss[l, run] += $6 }
    all_rss[l, run] += $4; all_pss[l, run] += $5; all_uss[l, run] += $6
  }
  END {
    for (l in labels) for (r = 1; r <= runs; r++) {
      add(l " app + WebKit rss", app_rss[l, r]); add(l " app + WebKit pss", app_pss[l, r]); add(l " app + WebKit uss", app_uss[l, r])
      add(l " tree total rss", all_rss[l, r]); add(l " tree total pss", all_pss[l, r]); add(l " tree total uss", all_uss[l, r])
    }
    what = runs > 1 ? "median of " runs " runs" : "one run"
    printf "cold start to first UI frame: %d ms (%s)\n", median(values["paige start"]), what
    if ("floor" in labels) printf "cold start of the empty Tauri window (the floor): %d ms\n", median(values["floor start"])
    printf "idle memory of the app process tree%s (MB, %s):\n", open_file == "" ? "" : ", " open_file " open in the editor", what
    printf "  %-24s %8s %8s %8s\n", "process", "RSS", "PSS", "USS"
    order = "paige-app WebKitWebProcess WebKitNetworkProcess"
    n = split(order, first, " ")
    for (i = 1; i <= n; i++) if (first[i] in group) { rows[++k] = first[i]; done[first[i]] = 1 }
    for (g in group) if (!(g in done) && g != "terminal") rows[++k] = g
    rows[++k] = "app + WebKit"
    if ("terminal" in group) rows[++k] = "terminal"
    rows[++k] = "tree total"
    for (i = 1; i <= k; i++) {
      name = rows[i] == "terminal" ? "terminal (agent command)" : rows[i]
      printf "  %-24s %8.1f %8.1f %8.1f\n", name, mb("paige", rows[i], "rss"), mb("paige", rows[i], "pss"), mb("paige", rows[i], "uss")
    }
    if (has_distinct["paige"])
      printf "  %-24s %8s %8.1f %8s  (app + WebKit: %.1f)\n", "tree, distinct pages", "", median(values["paige distinct all"]) / 1024, "", median(values["paige distinct app"]) / 1024
    printf "idle RSS of the app process tree: %d MB (summed RSS, shared pages counted per process); PSS: %d MB\n", mb("paige", "tree total", "rss"), mb("paige", "tree total", "pss")
    if (!("floor" in labels)) exit
    printf "against the floor, an empty Tauri window (same Tauri and WebKit settings; MB, %s):\n", what
    printf "  %-24s %8s %8s %8s   %8s %8s\n", "process", "floor PSS", "USS", "", "Paige-floor PSS", "USS"
    for (i = 1; i <= k; i++) {
      if (rows[i] == "terminal") continue
      printf "  %-24s %8.1f %8.1f %8s   %8.1f %8.1f\n", rows[i], mb("floor", rows[i], "pss"), mb("floor", rows[i], "uss"), "",
        mb("paige", rows[i], "pss") - mb("floor", rows[i], "pss"), mb("paige", rows[i], "uss") - mb("floor", rows[i], "uss")
    }
    if (has_distinct["floor"])
      printf "  %-24s %8.1f %8s %8s   %8.1f\n", "distinct pages (app)", median(values["floor distinct app"]) / 1024, "", "",
        (median(values["paige distinct app"]) - median(values["floor distinct app"])) / 1024
  }' "$work/samples"

deb=$(ls "$target"/release/bundle/deb/*.deb 2>/dev/null | head -1 || true)
[ -n "$deb" ] && echo ".deb size: $(du -k "$deb" | awk '{printf "%.1f MB", $1/1024}') ($deb)"
rpm=$(ls "$target"/release/bundle/rpm/*.rpm 2>/dev/null | head -1 || true)
[ -n "$rpm" ] && echo ".rpm size: $(du -k "$rpm" | awk '{printf "%.1f MB", $1/1024}') ($rpm)"
exit 0
