#!/usr/bin/env bash
# Builds Paige's .deb and .rpm with the `paige` CLI inside, beside paige-app (a Tauri
# sidecar): the installed app's Claude Code hooks call it. The embedding model
# (all-MiniLM-L6-v2, ~87 MB) ships as a resource, /usr/lib/Paige/models/; PAIGE_BUNDLE_MODEL=0
# leaves it out (memory then ranks by keywords until the model is in DATA_DIR/models).
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
# The sidecar and the model are named in their own configs: tauri-build checks they exist on
# every compile of the app, and plain `cargo build`s have none staged.
configs=(--config src-tauri/sidecar.conf.json)
if [ "${PAIGE_BUNDLE_MODEL:-1}" = 1 ]; then
  ensure_embedding_model "$tools_dir/models"
  rm -rf src-tauri/models && mkdir -p src-tauri/models
  cp -r "$tools_dir/models/all-MiniLM-L6-v2" src-tauri/models/
  configs+=(--config src-tauri/model.conf.json)
fi
# Paige's own bubblewrap and the AppArmor profile that lets it make a user namespace where
# AppArmor restricts them (Ubuntu 24.04+): the .deb only (packaging/apparmor/paige-bwrap).
apt_install bubblewrap
cp "$(command -v bwrap)" src-tauri/binaries/bwrap
configs+=(--config src-tauri/apparmor.conf.json)
say "bundling $bundles ($profile)"
ui/node_modules/.bin/tauri build "${flag[@]}" --bundles "$bundles" "${configs[@]}"
