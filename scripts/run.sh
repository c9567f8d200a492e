#!/usr/bin/env bash
# Builds Paige and runs it headless (`paige serve`) on a project.
#   scripts/run.sh [PROJECT_DIR]     default: $PROJECT_DIR, else the bundled sample project
# Needs ANTHROPIC_API_KEY in the environment or in ./.env.
cd "$(dirname "$0")/.."
. scripts/lib.sh

ensure_rust
project="${1:-${PROJECT_DIR:-examples/sample-project}}"
[ -d "$project" ] || die "project directory not found: $project"
if [ -z "${ANTHROPIC_API_KEY:-}" ] && ! grep -qs '^ANTHROPIC_API_KEY=.' .env; then
  die "set ANTHROPIC_API_KEY (or put ANTHROPIC_API_KEY=... in ./.env) — Paige's coaching calls need it"
fi
say "building and starting paige on $project — Ctrl-C to stop"
exec cargo run --quiet --release --locked -p paige-cli -- serve --project "$project"
