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
profile=${LANCE_C_CARGO_PROFILE:-quick}
if [ "$profile" = quick ]; then
  build=${LANCE_C_BUILD_DIR:-$root/build}
else
  build=${LANCE_C_BUILD_DIR:-$root/build-$profile}
fi
export PATH="$HOME/.cargo/bin:$PATH"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLANCE_C_CARGO_PROFILE="$profile" \
  -DLANCE_C_PYTHON="${LANCE_C_VENV:-$HOME/.cache/lance-c/venv}/bin/python" >/dev/null
