#!/usr/bin/env bash
# Builds lance-c and runs every test, two at a time (CTEST_PARALLEL_LEVEL
# overrides; CMakeLists.txt says why two).  Usage: scripts/test.sh [ctest args...]
start=$(date +%s)
source "$(dirname "$0")/configure.sh"
cmake --build "$build"
built=$(date +%s)
echo "build: $((built - start)) s"
cd "$build"
ctest --output-on-failure --parallel "${CTEST_PARALLEL_LEVEL:-2}" "$@"
echo "tests: $(( $(date +%s) - built )) s"
