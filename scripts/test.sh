#!/usr/bin/env bash
# Builds lance-c and runs every test, two at a time (CTEST_PARALLEL_LEVEL
# overrides; tests/CMakeLists.txt says why two).  Usage: scripts/test.sh [ctest args...]
start=$(date +%s)
# First, before anything is installed, downloaded or built: every
# prerequisite of the build and the tests (scripts/setup.sh --check, under a
# second), and root for the whole run: without ctest arguments every test
# runs, those labelled needs-root included.
"$(dirname "$0")/setup.sh" --check || exit 1
if [ "$(id -u)" -ne 0 ] && [ $# -eq 0 ]; then
  echo "test: the object-store and fault tests (ctest label needs-root) need root (network and mount namespaces): run this as root, or leave them out: scripts/test.sh -LE needs-root" >&2
  exit 1
fi
LANCE_C_SETUP=--build source "$(dirname "$0")/configure.sh"
# What only the tests need (pylance, the Maven artifacts, the storage
# emulators: about 6 minutes on a fresh machine, most of it building
# SeaweedFS) installs while cargo builds, at the lowest priority.  set -m
# gives it a process group of its own (so the trap below can stop all of
# it) in this session: Linux autogroup schedules by session, so a new
# session (setsid) would get a CPU share equal to cargo's, its nice value
# notwithstanding.
setup_log=$(mktemp)
set -m
nice -n 19 "$root/scripts/setup.sh" --test </dev/null >"$setup_log" 2>&1 &
setup_pid=$!
set +m
trap 'kill -- -"$setup_pid" 2>/dev/null || true; rm -f "$setup_log"' EXIT
cmake --build "$build"
# The Rust unit tests' harness (test_rust_units runs it): built here, before
# ctest, so that no test compiles while others run.
cmake --build "$build" --target lance_c_rust_tests
built=$(date +%s)
echo "build: $((built - start)) s"
setup_ok=true
wait "$setup_pid" || setup_ok=false
cat "$setup_log"
$setup_ok || { echo "test: scripts/setup.sh --test failed" >&2; exit 1; }
ready=$(date +%s)
echo "setup of the tests: waited $((ready - built)) s after the build"
cd "$build"
ctest --output-on-failure --parallel "${CTEST_PARALLEL_LEVEL:-2}" "$@"
echo "tests: $(( $(date +%s) - ready )) s"
