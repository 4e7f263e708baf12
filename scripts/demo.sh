#!/usr/bin/env bash
# Builds lance-c and runs the distributed index build demo: a coordinator
# process trains a shared model, starts worker processes that each build one
# segment, commits the segments as one index, and queries it.
# Usage: scripts/demo.sh [coordinator options, e.g. --rows 20000 --compare]
# It installs only what the build needs (scripts/setup.sh --build: Debian
# packages, the Rust toolchain check): the demo is C over the library
# (examples/coordinator.c and worker.c; --compare builds the one-shot index
# in the coordinator itself), so no Python, Java, Go or Node.js.
# shellcheck source=SCRIPTDIR/configure.sh
LANCE_C_SETUP=--build source "$(dirname "$0")/configure.sh"
cmake --build "$build" --target lance_coordinator lance_worker
"$build/lance_coordinator" "$@"
