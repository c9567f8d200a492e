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
# Memory's embedding model, where Paige looks for it (PAIGE_MODEL_DIR, else DATA_DIR/models).
ensure_embedding_model "${PAIGE_MODEL_DIR:-${DATA_DIR:-$HOME/.paige}/models}"
# Coach mode's OS layer: Claude Code's Bash sandbox runs on bubblewrap and socat.
apt_install bubblewrap socat
ensure_tauri_build_deps
build_ui
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  say "building and starting the Paige desktop app on $project (the first build takes several minutes)"
  exec cargo run --release --locked -p paige-app -- "$project"
fi
# `paige serve` needs the key up front; say so before a long build, not after it.
settings="${DATA_DIR:-$HOME/.paige}/settings.json"
if [ -z "${ANTHROPIC_API_KEY:-}" ] && ! grep -qs '^ANTHROPIC_API_KEY=.' .env \
  && ! grep -qs '"anthropicApiKey": *"[^"]' "$settings"; then
  die "paige serve needs an Anthropic API key: set ANTHROPIC_API_KEY, put it in ./.env, or save it once in the desktop app's settings ($settings)"
fi
say "no display (DISPLAY and WAYLAND_DISPLAY are unset): starting paige serve with the browser UI instead"
say "when it is ready, open the ui: address it prints (http://127.0.0.1:PORT/?token=...) in a browser — Ctrl-C to stop"
exec cargo run --release --locked -p paige-cli -- serve --project "$project" --ui-dir ui/dist
