#!/usr/bin/env bash
# Builds lance-c and runs the demo.  Usage: scripts/demo.sh [rows]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
build=${LANCE_C_BUILD_DIR:-$root/build}
export PATH="$HOME/.cargo/bin:$PATH"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target lance_demo
"$build/lance_demo" "$@"
