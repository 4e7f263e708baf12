#!/usr/bin/env bash
# Builds lance-c and runs the distributed index build demo: a coordinator
# process trains a shared model, starts worker processes that each build one
# segment, commits the segments as one index, and queries it.
# Usage: scripts/demo.sh [coordinator options, e.g. --rows 20000 --compare]
source "$(dirname "$0")/configure.sh"
cmake --build "$build" --target lance_coordinator lance_worker lance_demo
"$build/lance_coordinator" "$@"
