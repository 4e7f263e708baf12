#!/usr/bin/env bash
# Long local fuzzing runs of the distributed-build API (tests/fuzz/).  CI
# runs a fixed number of executions per target under ctest (test_fuzz_*);
# this runs each target for a time instead, at low priority, and prints
# the executions and the findings.
#
#   scripts/fuzz.sh [--minutes M] [--seed N] [--parallel] [TARGET...]
#
# TARGETs: segment, model, commit (default: all three, one after another;
# --parallel runs them at once).  M minutes per target (default 10).  The
# seed defaults to the current time and is printed: a finding is replayed
# with `fuzz_distributed run TARGET --seed N --only EXEC`.  Findings go to
# $build/fuzz-findings/long-<seed>/; the exit status is 1 when there are any.
# The build directory is $LANCE_C_BUILD_DIR or build/ (configured by
# scripts/configure.sh when it does not hold fuzz_distributed yet).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
minutes=10
seed=$(date +%s)
parallel=0
targets=()
while [ $# -gt 0 ]; do
  case $1 in
    --minutes) minutes=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --parallel) parallel=1; shift ;;
    segment|model|commit) targets+=("$1"); shift ;;
    *) echo "usage: scripts/fuzz.sh [--minutes M] [--seed N] [--parallel] [segment|model|commit...]" >&2; exit 2 ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(segment model commit)

build=${LANCE_C_BUILD_DIR:-$root/build}
if [ ! -f "$build/build.ninja" ]; then
  source "$root/scripts/configure.sh"
fi
cmake --build "$build" --target fuzz_distributed >/dev/null
findings=$build/fuzz-findings/long-$seed
mkdir -p "$findings"
seconds=$(awk "BEGIN {print $minutes * 60}")
echo "fuzz: seed $seed, $minutes min per target, findings under $findings"

run() {
  nice -n 10 "$build/fuzz_distributed" run "$1" --seconds "$seconds" --seed "$seed" \
    --corpus "$root/tests/fuzz/corpus" --findings "$findings" >"$findings/$1.log" 2>&1
}
status=0
if [ $parallel = 1 ]; then
  pids=()
  for t in "${targets[@]}"; do run "$t" & pids+=($!); done
  for p in "${pids[@]}"; do wait "$p" || status=1; done
else
  for t in "${targets[@]}"; do run "$t" || status=1; done
fi
for t in "${targets[@]}"; do grep "^fuzz $t:" "$findings/$t.log" || { echo "fuzz $t: no summary (crashed?):"; tail -5 "$findings/$t.log"; status=1; }; done
found=$(find "$findings" -name '*.txt' -o -name 'crash-*' | wc -l)
echo "fuzz: $found finding files under $findings"
exit $status
