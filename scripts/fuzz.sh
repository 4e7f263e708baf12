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
# A Rust allocation failure aborts with a backtrace that takes seconds to
# print; the input is what matters.
export RUST_BACKTRACE=0
findings=$build/fuzz-findings/long-$seed
mkdir -p "$findings"
seconds=$(awk "BEGIN {print $minutes * 60}")
echo "fuzz: seed $seed, $minutes min per target, findings under $findings"

# One target for $seconds: after a crash (the input is saved as
# crash-TARGET-seedN-execE.bin) the run resumes at execution E+1.
run() {
  local target=$1 start=0 total=0 crashes=0 began=$SECONDS log=$findings/$1.log
  : >"$log"
  while :; do
    local left=$((seconds - (SECONDS - began)))
    [ $left -gt 0 ] || break
    # (in a subshell whose own "Aborted" notice is dropped: the log has it all)
    if (nice -n 10 "$build/fuzz_distributed" run "$target" --seconds "$left" --seed "$seed" --start "$start" \
          --corpus "$root/tests/fuzz/corpus" --findings "$findings" >>"$log" 2>&1) 2>/dev/null ||
       grep -q "^fuzz $target: .* executions" <(tail -1 "$log"); then
      total=$((total + $(tail -1 "$log" | sed -n 's/.* \([0-9]*\) executions.*/\1/p')))
      break
    fi
    local crash
    crash=$(ls -t "$findings"/crash-"$target"-seed"$seed"-exec*.bin 2>/dev/null | head -1 || true)
    [ -n "$crash" ] || { echo "fuzz $target: stopped without a summary or a saved crash" >>"$log"; return 1; }
    local exec=${crash##*-exec}
    exec=${exec%.bin}
    total=$((total + exec + 1 - start))
    crashes=$((crashes + 1))
    start=$((exec + 1))
  done
  local found
  found=$(find "$findings" -name "$target-seed$seed-exec*.txt" | wc -l)
  echo "fuzz $target: $total executions in $((SECONDS - began)) s, $crashes crashes, $found other findings (log: $log)" \
    | tee -a "$findings/summary"
  [ $crashes -eq 0 ] && [ "$found" -eq 0 ]
}
status=0
if [ $parallel = 1 ]; then
  pids=()
  for t in "${targets[@]}"; do run "$t" & pids+=($!); done
  for p in "${pids[@]}"; do wait "$p" || status=1; done
else
  for t in "${targets[@]}"; do run "$t" || status=1; done
fi
echo "fuzz: finding files under $findings:"
ls "$findings" | grep -v -e '\.log$' -e '^summary$' || true
exit $status
