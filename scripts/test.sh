#!/usr/bin/env bash
# Runs Paige's whole test suite, installing what it needs first.
# Build once (debug), then run every test from that build.
cd "$(dirname "$0")/.."
. scripts/lib.sh

ensure_rust
say "checking formatting"
cargo fmt --all --check
say "building and running the tests"
cargo test --workspace --locked
say "linting (clippy)"
cargo clippy --workspace --all-targets --locked -- -D warnings
