#!/usr/bin/env bash
# Builds lance-c and runs the benchmarks.  Usage: scripts/bench.sh [rows] [repeats]
source "$(dirname "$0")/configure.sh"
cmake --build "$build" --target bench_segment
"$build/bench_segment" "$@"
