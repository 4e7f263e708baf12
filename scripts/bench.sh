#!/usr/bin/env bash
# Builds lance-c and runs the benchmarks.  Usage: scripts/bench.sh [rows] [repeats]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
build=${LANCE_C_BUILD_DIR:-$root/build}
export PATH="$HOME/.cargo/bin:$PATH"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target bench_segment
"$build/bench_segment" "$@"
