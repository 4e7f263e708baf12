#!/usr/bin/env bash
# Builds lance-c and runs the benchmarks, one after another (never two
# builds or benchmarks at once: this machine has 2 cores).
# Usage: scripts/bench.sh [segment|commit|cancel|loop ...]   (default: all)
source "$(dirname "$0")/configure.sh"
cmake --build "$build" --target bench_segment bench_commit bench_cancel lance_coordinator lance_worker
which=("$@")
[ ${#which[@]} -eq 0 ] && which=(segment commit cancel loop)
for b in "${which[@]}"; do
  echo "== $b"
  case $b in
    segment) "$build/bench_segment" ;;
    commit)  "$build/bench_commit" ;;
    cancel)  "$build/bench_cancel" ;;
    # The 4-worker multi-process loop (2 workers at a time) against the
    # one-shot build, 100k x 128 IVF_PQ, in one run.
    loop)    "$build/lance_coordinator" --compare 2> /dev/null ;;
    *) echo "unknown benchmark $b" >&2; exit 2 ;;
  esac
done
