#!/usr/bin/env bash
# Builds Paige's .deb and .rpm with the `paige` CLI inside, beside paige-app (a Tauri
# sidecar): the installed app's Claude Code hooks call it.
#   scripts/package.sh [--debug] [BUNDLES]     BUNDLES: deb,rpm (default)
# Packages land in $CARGO_TARGET_DIR (or target)/{release,debug}/bundle/.
cd "$(dirname "$0")/.."
. scripts/lib.sh

profile=release
flag=()
if [ "${1:-}" = "--debug" ]; then
  profile=debug
  flag=(--debug)
  shift
fi
bundles="${1:-deb,rpm}"
ensure_rust
ensure_tauri_build_deps
build_ui
target="${CARGO_TARGET_DIR:-target}"
say "building the paige CLI ($profile)"
if [ "$profile" = release ]; then cargo build --locked --release -p paige-cli; else cargo build --locked -p paige-cli; fi
# Tauri takes a sidecar as <name>-<target triple>; it installs it as plain `paige`.
triple=$(rustc -vV | sed -n 's/^host: //p')
mkdir -p src-tauri/binaries
cp "$target/$profile/paige" "src-tauri/binaries/paige-$triple"
say "bundling $bundles ($profile)"
# The sidecar is named in its own config: tauri-build checks it exists on every compile of
# the app, and plain `cargo build`s have none staged.
ui/node_modules/.bin/tauri build "${flag[@]}" --bundles "$bundles" --config src-tauri/sidecar.conf.json
