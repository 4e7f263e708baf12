#!/usr/bin/env bash
# What a session's data cache buys on s3:// (issue 23): a dataset on a
# SeaweedFS server on host "store", read again and again by one
# data_cache_bench process on host w1, without a data cache, with one in
# memory and with a small memory tier over a disk tier (a directory on w1's
# own disk), side by side (bench/data_cache_bench.c describes the
# workloads, the passes and the checks).  tests/stores/lib.sh sets up the
# hosts; root.
#
#   bench/data_cache_bench.sh DATA_CACHE_BENCH [ROWS] [DIM] [FRAGMENTS] [RATE]
#   bench/data_cache_bench.sh DATA_CACHE_BENCH --smoke
#
# The dataset (ROWS x DIM float32 vectors and an int64 id, FRAGMENTS
# fragments, IVF_PQ index; default 200000 x 128, 8 fragments) is written
# and indexed from w1 once.  The measurement runs twice: over the bare
# link, then with w1's link shaped to RATE (default 100mbit) both ways:
# w1's uplink (its requests) and the store's (what w1 downloads; the store
# talks to no other host).  Each run prints its own table (medians of 3
# rounds) and its ratios.  --smoke is the smallest shape that runs every
# step (4096 x 32 in 2 fragments, 1 round of 5 queries per link): a check
# that the script still works (ctest's test_bench_smoke_data_cache runs
# it), whose figures mean nothing.
set -euo pipefail
BENCH=$(realpath "${1:?data_cache_bench}")
ROWS=${2:-200000}
DIM=${3:-128}
FRAGMENTS=${4:-8}
RATE=${5:-100mbit}
ROUNDS=3 QUERIES=50
if [ "$ROWS" = --smoke ]; then
  ROWS=4096 DIM=32 FRAGMENTS=2 ROUNDS=1 QUERIES=5
fi
source "$(dirname "$0")/../tests/stores/lib.sh"

s3_hosts store w1
s3_start
echo "object store up in $S3_START_SECONDS s"
uri=s3://$S3_BUCKET/bench/data-cache.lance
on w1 "$BENCH" setup "$uri" "$ROWS" "$DIM" "$FRAGMENTS"
on w1 "$BENCH" run "$uri" "$(s3_dir w1)/data-cache-bare" --rounds "$ROUNDS" --queries "$QUERIES" \
  --link "unshaped (veth pair and bridge, no limit)"
s3_limit_uplink w1 "$RATE"
s3_limit_uplink store "$RATE"
on w1 "$BENCH" run "$uri" "$(s3_dir w1)/data-cache-shaped" --rounds "$ROUNDS" --queries "$QUERIES" \
  --link "$RATE each way (tc tbf on w1 and on the store)"
