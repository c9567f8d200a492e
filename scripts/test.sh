#!/usr/bin/env bash
# Runs Paige's whole test suite, installing what it needs first.
# One debug build; every test runs from it.
cd "$(dirname "$0")/.."
. scripts/lib.sh

ensure_rust
ensure_python_mcp
ensure_claude_code
say "checking formatting"
cargo fmt --all --check
say "linting (clippy)"
cargo clippy --workspace --all-targets --locked -- -D warnings
# The real `claude` binary drives `paige hook` in tests/e2e/claude.rs when this is set.
say "building and running the tests"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
cargo test --workspace --locked --lib --bins --tests 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
awk '/^test result:/ { passed += $4; failed += $6 } END { printf "rust: %d passed, %d failed\n", passed, failed }' "$log"
exit "$status"
