#!/usr/bin/env bash
# Sourced by the other scripts: installs what is missing, configures the
# CMake build, and sets $root, $build and $profile.  $LANCE_C_SETUP, when set, is
# setup.sh's phase (scripts/test.sh: --build).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh" ${LANCE_C_SETUP:+"$LANCE_C_SETUP"}
# $LANCE_C_CARGO_PROFILE: the cargo profile, quick (the default: the demo,
# the tests, CI) or release (what ships: scripts/bench.sh sets it), each in
# a build tree of its own, build/ and build-release/ ($LANCE_C_BUILD_DIR
# overrides); docs/building.md "Two profiles".
# $LANCE_C_CARGO_FEATURES: cargo features on top of the default ones
# (docs/building.md "Features"), in a build tree of their own
# (build-tos-huggingface/ for "tos,huggingface"; CMake gives it a cargo
# target directory of its own too).
profile=${LANCE_C_CARGO_PROFILE:-quick}
features=${LANCE_C_CARGO_FEATURES:-}
suffix=""
[ "$profile" = quick ] || suffix="-$profile"
[ -z "$features" ] || suffix="$suffix-${features//,/-}"
build=${LANCE_C_BUILD_DIR:-$root/build$suffix}
export PATH="$HOME/.cargo/bin:$PATH"
target_args=()
[ -z "$features" ] || target_args=(-DLANCE_C_CARGO_FEATURES="$features")
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLANCE_C_CARGO_PROFILE="$profile" \
  "${target_args[@]}" -DLANCE_C_PYTHON="${LANCE_C_VENV:-$HOME/.cache/lance-c/venv}/bin/python" >/dev/null
