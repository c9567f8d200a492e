#!/usr/bin/env bash
# Coverage-guided fuzzing with cargo fuzz (libFuzzer + AddressSanitizer): builds every target
# in fuzz/ once, runs each for PAIGE_CARGO_FUZZ_SECS seconds (default 30), prints per target
# its execs, coverage and seconds, and exits non-zero if any target crashed.
#
#   scripts/fuzz.sh                 every target, 30 s each
#   scripts/fuzz.sh ui_frame ...    only these targets
#
# cargo fuzz needs nightly compiler flags (-Zsanitizer); RUSTC_BOOTSTRAP=1 lets the stable
# toolchain take them, so CI needs no nightly. The build goes to its own target dir
# (PAIGE_FUZZ_TARGET_DIR), away from the workspace's; new inputs go to a scratch corpus
# (PAIGE_FUZZ_WORK), seeded from fuzz/corpus/<target>, and a crashing input to
# $PAIGE_FUZZ_WORK/artifacts/<target>/ (reproduce: the target's binary with that file).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

secs="${PAIGE_CARGO_FUZZ_SECS:-30}"
target_dir="${PAIGE_FUZZ_TARGET_DIR:-/var/tmp/paige-fuzz-target}"
work="${PAIGE_FUZZ_WORK:-/var/tmp/paige-fuzz-work}"
cargo_fuzz_version=0.13.2
export RUSTC_BOOTSTRAP=1
# As cargo fuzz run sets it: the bundled SQLite's globals trip ASan's ODR check at start-up.
export ASAN_OPTIONS="detect_odr_violation=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"

ensure_rust
if [ "$(cargo fuzz --version 2>/dev/null)" != "cargo-fuzz $cargo_fuzz_version" ]; then
  say "installing cargo-fuzz $cargo_fuzz_version (cargo install, about a minute)"
  cargo install cargo-fuzz --version "$cargo_fuzz_version" --locked
fi

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cargo fuzz list --fuzz-dir fuzz)
fi

# cargo fuzz has no --locked: check fuzz/Cargo.lock is current before building from it.
cargo metadata --locked --format-version 1 --manifest-path fuzz/Cargo.toml >/dev/null \
  || die "fuzz/Cargo.lock is out of date: run cargo update --manifest-path fuzz/Cargo.toml --workspace"
# The dev profile at opt-level 1, not cargo fuzz's release build with one codegen unit: on a
# 2-core machine it builds in ~6 min instead of ~12, and runs at ~60% of the release build's
# execs/s (debug assertions and overflow checks on in both). PAIGE_FUZZ_RELEASE=1 builds the
# release way for a long hunt.
profile=(--dev) bin_profile=debug
if [ "${PAIGE_FUZZ_RELEASE:-0}" = 1 ]; then profile=(--release --debug-assertions) bin_profile=release; fi
export CARGO_PROFILE_DEV_OPT_LEVEL=1 CARGO_PROFILE_DEV_DEBUG=0
say "building the fuzz targets (cargo fuzz build ${profile[*]}, AddressSanitizer)"
start=$(date +%s)
# A target that no longer compiles (an API it calls moved) counts as every target failed, and
# says so by name where scripts/test.sh lists the failures.
if ! cargo fuzz build "${profile[@]}" --fuzz-dir fuzz --target-dir "$target_dir"; then
  echo "not ok   cargo fuzz build: the fuzz targets do not compile (see the errors above)"
  echo "cargo fuzz: 0 passed, ${#targets[@]} failed"
  exit 1
fi
say "built in $(($(date +%s) - start)) s"

bin_dir="$target_dir/x86_64-unknown-linux-gnu/$bin_profile"
passed=0 failed=0
printf '%-16s %10s %8s %6s %7s  %s\n' target execs execs/s cov seconds result
for t in "${targets[@]}"; do
  mkdir -p "$work/corpus/$t" "$work/artifacts/$t"
  log="$work/$t.log"
  t0=$(date +%s.%N)
  set +e
  # The first corpus dir takes the new inputs; the committed seeds are only read.
  "$bin_dir/$t" "$work/corpus/$t" "fuzz/corpus/$t" \
    -max_total_time="$secs" -max_len=8192 -timeout=30 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/$t/" >"$log" 2>&1
  status=$?
  set -e
  seconds=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
  execs=$(awk '/^stat::number_of_executed_units:/ { print $2 }' "$log")
  rate=$(awk '/^stat::average_exec_per_sec:/ { print $2 }' "$log")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2 || true)
  if [ "$status" = 0 ]; then
    result=ok
    passed=$((passed + 1))
  else
    result="CRASH (exit $status): $(ls -t "$work/artifacts/$t" | head -1)"
    failed=$((failed + 1))
  fi
  printf '%-16s %10s %8s %6s %7s  %s\n' "$t" "${execs:--}" "${rate:--}" "${cov:--}" "$seconds" "$result"
  if [ "$status" != 0 ]; then
    grep -E -m 20 'panicked|ERROR: |SUMMARY|assert|Test unit written' "$log" >&2 || tail -20 "$log" >&2
    # Where scripts/test.sh lists the failures by name.
    echo "not ok   cargo fuzz $t: $result"
  fi
done
echo "cargo fuzz: $passed passed, $failed failed"
[ "$failed" = 0 ]
