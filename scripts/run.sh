#!/usr/bin/env bash
# Builds Paige and runs it on a project: the desktop app when there is a display, else
# `paige serve` with the browser UI.
#   scripts/run.sh [PROJECT_DIR]     default: $PROJECT_DIR, else the bundled sample project
# The Anthropic API key comes from ANTHROPIC_API_KEY, ./.env, or the desktop app's settings
# screen (saved in DATA_DIR/settings.json); `paige serve` needs one of them.
cd "$(dirname "$0")/.."
. scripts/lib.sh

ensure_rust
project="${1:-${PROJECT_DIR:-examples/sample-project}}"
[ -d "$project" ] || die "project directory not found: $project"
# The coach runs in Claude Code: without `claude` the terminal could only open a shell.
if ! command -v claude >/dev/null; then
  ensure_claude_code
  export PATH="$(dirname "$PAIGE_TEST_CLAUDE"):$PATH"
fi
# Paige's data folder is private (0700) from the start: the model step below would otherwise
# make it with the umask's 0755 before Paige could.
data_dir="${DATA_DIR:-$HOME/.paige}"
[ -d "$data_dir" ] || install -d -m 0700 "$data_dir"
# Memory's embedding model, where Paige looks for it (PAIGE_MODEL_DIR, else DATA_DIR/models).
ensure_embedding_model "${PAIGE_MODEL_DIR:-$data_dir/models}"
# Coach mode's OS layer: Claude Code's Bash sandbox runs on bubblewrap and socat.
apt_install bubblewrap socat
build_ui
target="${CARGO_TARGET_DIR:-target}"
# The `paige` CLI first: the app's terminal runs Claude Code with `paige hook` for every tool
# call, and refuses coach mode without it. On a fresh 2-core machine: ~7-8 min.
say "building the paige CLI (release; the first build takes ~8 minutes, later ones seconds)"
cargo build --release --locked -p paige-cli
export PATH="$(realpath "$target")/release:$PATH"
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  # The window's WebKitGTK build packages: only when there is a window to build.
  ensure_tauri_build_deps
  say "building the Paige desktop app (release; the first build takes ~14 minutes more, later ones seconds)"
  cargo build --release --locked -p paige-app
  say "starting the Paige desktop app on $project"
  exec "$target/release/paige-app" "$project"
fi
# `paige serve` needs the key up front; say so before a long build, not after it.
settings="$data_dir/settings.json"
if [ -z "${ANTHROPIC_API_KEY:-}" ] && ! grep -qs '^ANTHROPIC_API_KEY=.' .env \
  && ! grep -qs '"anthropicApiKey": *"[^"]' "$settings"; then
  die "paige serve needs an Anthropic API key: set ANTHROPIC_API_KEY, put it in ./.env, or save it once in the desktop app's settings ($settings)"
fi
say "no display (DISPLAY and WAYLAND_DISPLAY are unset): starting paige serve with the browser UI instead"
say "when it is ready, open the ui: address it prints (http://127.0.0.1:PORT/?token=...) in a browser — Ctrl-C to stop"
say "then run Claude Code for it in another terminal: $(realpath "$target")/release/paige claude"
exec "$target/release/paige" serve --project "$project" --ui-dir ui/dist
