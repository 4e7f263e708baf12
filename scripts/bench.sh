#!/usr/bin/env bash
# Builds lance-c and runs the benchmarks, one after another (never two
# builds or benchmarks at once: this machine has 2 cores).
# Usage: scripts/bench.sh [segment|commit|merge|cancel|budget|loop|suite|scale|scaling|cancel-1m|s3|
#                          data-cache|maintenance|s3-maintenance ...]
#        (default: segment commit merge cancel budget loop suite)
# `budget`: 8 segment builds in one process, in sequence and at once, with
# and without a process budget of 2 compute and 2 I/O threads (time,
# threads, peak RSS).
# `scale` (bench/scale_bench.sh): 1M x 128 IVF_PQ, one core per process
# (taskset): one one-core worker against two, and against the one-shot
# build; SCALE_ARGS passes options (--rows, --dim, --partitions ...).
# `scaling` (bench/scaling_bench.sh): the distributed training with 1, 2
# and 4 workers at 1,024 and 4,096 partitions, the scaling model checked
# against it and projected to 8-64 workers and 1B rows (a table and
# build-release/bench-plots/scaling_model.png); SCALING_ARGS passes options.
# `cancel-1m`: the
# cancel latencies of `cancel` at 1M rows.
# `s3` (bench/s3_bench.sh, as root: it starts SeaweedFS on network-namespace
# hosts) compares segment build and commit on s3:// with the local disk.
# `data-cache` (bench/data_cache_bench.sh, as root, the same hosts): repeated
# scans and k-NN queries of a dataset on s3:// without a data cache, with one
# in memory and with one on disk, over a bare and a shaped link;
# DATA_CACHE_ARGS passes ROWS DIM FRAGMENTS RATE.
# `maintenance` (bench/bench_maintenance.c): an index of 300 one-fragment
# segments on the local disk, 8 fragments appended, its maintenance planned
# (plan time), run in one process (merge time per GB, delta builds) and
# committed (commit time), then checked; `s3-maintenance` (as root, the hosts
# of `s3`) the same on the local disk and on s3:// side by side.
# MAINTENANCE_ARGS passes bench_maintenance options (--fragments, --rows, ...).
# `suite` (bench/suite.py) prints the summary table and writes PNG plots to
# build-release/bench-plots: its own five sections, then bench_merge, bench_cancel
# (1M rows) and scale_bench.sh (1M rows) run with --csv, as rows and plots of
# the same table; it uses pylance and matplotlib from the project's Python
# environment (installed here when missing).  SUITE_ROWS sets its size;
# SUITE_ARGS passes further options to suite.py (--only merge,cancel,scale,
# --cancel-rows 0, --scale-rows N, ...; see its docstring).
# The benchmarks measure what ships: the release profile, in build-release/
# (docs/building.md "Two profiles").
export LANCE_C_CARGO_PROFILE=${LANCE_C_CARGO_PROFILE:-release}
source "$(dirname "$0")/configure.sh"
cmake --build "$build" --target bench_segment bench_commit bench_merge bench_cancel bench_ffi bench_commit_scaling \
  bench_train bench_budget bench_maintenance lance_coordinator lance_worker lance_index_tool s3_dataset data_cache_bench
venv=${LANCE_C_VENV:-$HOME/.cache/lance-c/venv}
which=("$@")
[ ${#which[@]} -eq 0 ] && which=(segment commit merge cancel budget loop suite)
for b in "${which[@]}"; do
  echo "== $b"
  case $b in
    segment) "$build/bench_segment" ;;
    commit)  "$build/bench_commit" ;;
    # k-NN latency and recall for 1-64 segments and after merging, and merge
    # time against build time (100k x 128 IVF_PQ 64x16, one shared model).
    merge)   "$build/bench_merge" ;;
    cancel)  "$build/bench_cancel" ;;
    cancel-1m) "$build/bench_cancel" 1000000 1 20 ;;
    budget)  "$build/bench_budget" ;;
    scale)
      [ -x /usr/bin/time ] || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null; }
      # shellcheck disable=SC2086
      "$root/bench/scale_bench.sh" "$build" ${SCALE_ARGS:-} ;;
    scaling)
      "$venv/bin/python" -c "import matplotlib" 2>/dev/null || "$venv/bin/pip" install -q matplotlib
      # shellcheck disable=SC2086
      "$root/bench/scaling_bench.sh" "$build" --out "$build-release/bench-plots" ${SCALING_ARGS:-} ;;
    # The 4-worker multi-process loop (2 workers at a time) against the
    # one-shot build, 100k x 128 IVF_PQ, in one run.
    loop)    "$build/lance_coordinator" --compare 2> /dev/null ;;
    suite)
      "$venv/bin/python" -c "import matplotlib, wordllama" 2>/dev/null ||
        "$venv/bin/pip" install -q matplotlib "wordllama==0.4.0.post1"
      [ -x /usr/bin/time ] || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null; }
      # shellcheck disable=SC2086
      "$venv/bin/python" "$root/bench/suite.py" "$build" --rows "${SUITE_ROWS:-100000}" ${SUITE_ARGS:-} ;;
    s3)      "$root/bench/s3_bench.sh" "$build/lance-index" "$build/s3_dataset" ;;
    # shellcheck disable=SC2086
    data-cache) "$root/bench/data_cache_bench.sh" "$build/data_cache_bench" ${DATA_CACHE_ARGS:-} ;;
    maintenance)
      # shellcheck disable=SC2086
      "$build/bench_maintenance" ${MAINTENANCE_ARGS:-} ;;
    s3-maintenance)
      # shellcheck disable=SC2086
      "$root/bench/s3_bench.sh" --maintenance "$build/bench_maintenance" ${MAINTENANCE_ARGS:-} ;;
    *) echo "unknown benchmark $b" >&2; exit 2 ;;
  esac
done
