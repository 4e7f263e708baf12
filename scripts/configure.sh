#!/usr/bin/env bash
# Sourced by the other scripts: installs what is missing, configures the
# CMake build, and sets $root and $build.  $LANCE_C_SETUP, when set, is
# setup.sh's phase (scripts/test.sh: --build).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh" ${LANCE_C_SETUP:+"$LANCE_C_SETUP"}
build=${LANCE_C_BUILD_DIR:-$root/build}
export PATH="$HOME/.cargo/bin:$PATH"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DLANCE_C_PYTHON="${LANCE_C_VENV:-$HOME/.cache/lance-c/venv}/bin/python" >/dev/null
