#!/usr/bin/env bash
# Clippy over lance-c, warnings as errors, reusing the quick build's crates.
#
#   scripts/clippy.sh [--fix]
#
# `cargo clippy` is `cargo check` with clippy-driver in place of rustc for
# this crate: it type-checks every dependency again in check mode, crates the
# quick build (scripts/test.sh, scripts/demo.sh) has already compiled, which
# costs most of a clean build's front end (about 15 minutes on 2 cores).
# Here cargo builds the quick profile as the tests do, with clippy-driver as
# the wrapper of this workspace's crate only (RUSTC_WORKSPACE_WRAPPER): the
# dependencies are the quick build's, already compiled, so only lance-c is
# compiled, with its lints, as the library and as its unit-test harness.  The
# lint levels are Cargo.toml's [lints.clippy]; warnings are errors here.
# Afterwards the next plain build compiles lance-c once more (its fingerprint
# names the wrapper).  --fix applies clippy's machine-applicable suggestions
# (through `cargo clippy --fix`, which re-checks the dependencies: slow).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$HOME/.cargo/bin:$PATH"
# The target directory and CPU level of the quick build tree (build/, as
# CMake recorded them), so that its compiled dependencies are reused.
cache=${LANCE_C_BUILD_DIR:-$root/build}/CMakeCache.txt
[ -f "$cache" ] || { echo "clippy.sh: no $cache: build the tree first (scripts/test.sh or scripts/demo.sh)" >&2; exit 1; }
cached() { sed -n "s/^$1:[A-Z]*=//p" "$cache"; }
cpu=$(cached LANCE_C_TARGET_CPU)
export CARGO_TARGET_DIR
CARGO_TARGET_DIR=$(cached LANCE_C_CARGO_TARGET_DIR)
if [ -n "$cpu" ] && [ "$cpu" != x86-64 ]; then
  CARGO_TARGET_DIR=$CARGO_TARGET_DIR-$cpu
  export RUSTFLAGS="${RUSTFLAGS:-} -C target-cpu=$cpu"
fi
cd "$root"
if [ "${1:-}" = --fix ]; then
  exec cargo clippy --profile quick --lib --tests --fix --allow-dirty -- -D warnings
fi
driver=$(rustup which clippy-driver 2>/dev/null) || {
  echo "clippy.sh: no clippy-driver: rustup component add clippy" >&2
  exit 1
}
start=$(date +%s)
CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__" RUSTC_WORKSPACE_WRAPPER="$driver" \
  cargo build --profile quick --locked --lib --tests
echo "clippy: lance-c clean, warnings as errors ($(($(date +%s) - start)) s)"
