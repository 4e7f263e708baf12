#!/usr/bin/env bash
# Builds lance-c and runs every test.  Usage: scripts/test.sh [ctest args...]
start=$(date +%s)
source "$(dirname "$0")/configure.sh"
cmake --build "$build"
built=$(date +%s)
echo "build: $((built - start)) s"
cd "$build"
ctest --output-on-failure "$@"
echo "tests: $(( $(date +%s) - built )) s"
