#!/usr/bin/env bash
# Builds lance-c and runs every test.  Usage: scripts/test.sh [ctest args...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
build=${LANCE_C_BUILD_DIR:-$root/build}
export PATH="$HOME/.cargo/bin:$PATH"
start=$(date +%s)
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build"
built=$(date +%s)
echo "build: $((built - start)) s"
cd "$build"
ctest --output-on-failure "$@"
echo "tests: $(( $(date +%s) - built )) s"
