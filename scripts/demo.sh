#!/usr/bin/env bash
# Builds lance-c and runs the demo.  Usage: scripts/demo.sh [rows]
source "$(dirname "$0")/configure.sh"
cmake --build "$build" --target lance_demo
"$build/lance_demo" "$@"
