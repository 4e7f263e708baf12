#!/usr/bin/env bash
# Segment build and commit on s3:// (a SeaweedFS server on another
# network-namespace host) against the local disk, side by side in one run,
# with each worker's peak memory (tests/stores/lib.sh sets up the hosts; root).
#
#   bench/s3_bench.sh LANCE_INDEX S3_DATASET [ROWS] [DIM] [SEGMENTS]
#   bench/s3_bench.sh LANCE_INDEX S3_DATASET --smoke
#
# The same dataset (ROWS x DIM clustered vectors, 16 fragments, default
# 100000 x 128) is written to both places; one IVF_FLAT model (64
# partitions) trained on the local copy serves both; SEGMENTS workers (4)
# build one segment each, one at a time, on host w1, then one commit each.
# Per store: median segment build wall time, the slowest, commit time, and
# worker peak RSS; then the cancel latency of a segment build cancelled as
# its shuffle starts (nothing written to the store yet), as it starts
# writing its partitions, and with half of them written (s3_dataset
# cancel-at, S3_BENCH_CANCELS builds per store and stage (5), each trained
# in its process):
# median and worst, from the cancel to the return.
# --smoke is the smallest shape that runs every step (4096 x 16, 2 segments,
# 1 cancelled build per store and stage): a check that the script still
# works (ctest's test_bench_smoke_s3 runs it), whose figures mean nothing.
#
#   bench/s3_bench.sh --maintenance BENCH_MAINTENANCE [OPTIONS]
#
# The maintenance of an index with hundreds of segments instead (issue 43):
# one bench_maintenance process on host w1 (bench/bench_maintenance.c says
# what it builds, plans, merges, commits and checks) runs on a dataset on
# w1's disk, then on one on s3://; OPTIONS go to it (--smoke among them).
# Its two JSON lines, then their figures side by side.
set -euo pipefail
if [ "${1:-}" = --maintenance ]; then
  BENCH=$(realpath "${2:?bench_maintenance}")
  shift 2
  source "$(dirname "$0")/../tests/stores/lib.sh"
  s3_hosts store w1
  s3_start
  echo "object store up in $S3_START_SECONDS s"
  lines=$(on w1 "$BENCH" "$(s3_dir w1)/maintenance.lance" "s3://$S3_BUCKET/bench/maintenance.lance" "$@")
  echo "$lines"
  disk=$(sed -n 1p <<<"$lines")
  s3=$(sed -n 2p <<<"$lines")
  figure() {
    local l r
    l=$(json_field "$disk" "$2")
    r=$(json_field "$s3" "$2")
    printf '%-44s %12s %12s %10s\n' "$1" "$l" "$r" "$(awk -v a="$r" -v b="$l" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')"
  }
  echo
  echo "$(json_field "$disk" fragments) fragments x $(json_field "$disk" rows_per_fragment) rows x" \
    "$(json_field "$disk" dim), IVF_FLAT ($(json_field "$disk" partitions) partitions), one segment per fragment;" \
    "$(json_field "$disk" appended_fragments) fragments appended"
  printf '%-44s %12s %12s %10s\n' "" "local disk" "s3://" "s3 / local"
  figure "build, one segment per fragment (s)" build_s
  figure "commit of those segments (s)" commit_build_s
  figure "open the dataset (ms)" open_ms
  figure "plan, first call on the handle (ms)" plan_first_ms
  figure "plan, median of the next calls (ms)" plan_ms
  figure "segments merged" merged_segments
  figure "merge tasks" merges
  figure "bytes merged (the sources' files)" merged_bytes
  figure "merges, reads included (s)" merge_s
  figure "merge, per source segment (ms)" merge_ms_per_segment
  figure "merge throughput (MB/s)" merge_mb_per_s
  figure "merge time per GB (s)" merge_s_per_gb
  figure "delta builds (s)" delta_build_s
  figure "commit with replace (s)" commit_s
  figure "segments after" segments_after
  figure "k-NN mismatches against brute force" knn_mismatches
  exit 0
fi
TOOL=$(realpath "${1:?lance-index}")
DATA=$(realpath "${2:?s3_dataset}")
ROWS=${3:-100000}
DIM=${4:-128}
SEGMENTS=${5:-4}
CANCELS=${S3_BENCH_CANCELS:-5} # cancelled builds per store and stage
if [ "$ROWS" = --smoke ]; then
  ROWS=4096 DIM=16 SEGMENTS=2 CANCELS=1
fi
source "$(dirname "$0")/../tests/stores/lib.sh"
[ -x /usr/bin/time ] || s3_fail "GNU time (/usr/bin/time, Debian package time) is needed for peak memory"

s3_hosts store w1
s3_start
echo "object store up in $S3_START_SECONDS s"
local_uri=$(s3_dir w1)/vectors.lance
s3_uri=s3://$S3_BUCKET/bench/vectors.lance
declare -A write_s
for where in local s3; do
  uri=$([ $where = local ] && echo "$local_uri" || echo "$s3_uri")
  t0=$(s3_now)
  on w1 "$DATA" write "$uri" "$ROWS" "$DIM" 16 1 >/dev/null
  write_s[$where]=$(s3_elapsed "$t0")
done
on w1 "$TOOL" train "$local_uri" --column vec --type IVF_FLAT --partitions 64 --quiet -o "$(s3_dir w1)/model.bin" >/dev/null
plan=$(on w1 "$TOOL" plan "$local_uri" --groups "$SEGMENTS")
mapfile -t groups < <(grep -o '"fragments": \[[^]]*\]' <<<"$plan" | sed 's/.*\[\(.*\)\]/\1/; s/ //g')

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int(NR / 2) + 1] }'; }
declare -A build_med build_max commit_s rss_max
for where in local s3; do
  uri=$([ $where = local ] && echo "$local_uri" || echo "$s3_uri")
  times=() rss=() segs=()
  for g in "${!groups[@]}"; do
    u=$(tr -d - </proc/sys/kernel/random/uuid)
    out=$(s3_dir w1)/$where-$g.bin
    t0=$(s3_now)
    on w1 /usr/bin/time -f '%M' -o "$S3_WORK/rss" "$TOOL" build "$uri" --column vec --model "$(s3_dir w1)/model.bin" \
      --fragments "${groups[g]}" --uuid "$u" --version 1 --quiet -o "$out"
    times+=("$(s3_elapsed "$t0")")
    rss+=("$(tail -n 1 "$S3_WORK/rss")")
    segs+=("$out")
  done
  build_med[$where]=$(printf '%s\n' "${times[@]}" | median)
  build_max[$where]=$(printf '%s\n' "${times[@]}" | sort -g | tail -n 1)
  rss_max[$where]=$(printf '%s\n' "${rss[@]}" | sort -g | tail -n 1)
  t0=$(s3_now)
  on w1 "$TOOL" commit "$uri" --name vec_idx --column vec "${segs[@]}" >/dev/null
  commit_s[$where]=$(s3_elapsed "$t0")
done
declare -A cancel_med cancel_max
for stage in shuffle merge_partitions merge_partitions+32; do
  for where in local s3; do
    uri=$([ $where = local ] && echo "$local_uri" || echo "$s3_uri")
    lat=()
    for _ in $(seq 1 "$CANCELS"); do
      u=$(tr -d - </proc/sys/kernel/random/uuid)
      line=$(on w1 "$DATA" cancel-at "$stage" "$uri" 64 "$u" 0 2>/dev/null) ||
        s3_fail "cancel-at $stage on $where: $line"
      lat+=("$(sed 's/.*"ms": \([0-9.]*\).*/\1/' <<<"$line")")
    done
    cancel_med[$stage-$where]=$(printf '%s\n' "${lat[@]}" | median)
    cancel_max[$stage-$where]=$(printf '%s\n' "${lat[@]}" | sort -g | tail -n 1)
  done
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
echo
echo "$ROWS x $DIM, 16 fragments, $SEGMENTS segments (IVF_FLAT, 64 partitions), one worker process at a time"
printf '%-40s %12s %12s %10s\n' "" "local disk" "s3://" "s3 / local"
printf '%-40s %12s %12s %10s\n' "write the dataset (s)" "${write_s[local]}" "${write_s[s3]}" "$(ratio "${write_s[s3]}" "${write_s[local]}")"
printf '%-40s %12s %12s %10s\n' "segment build, median (s)" "${build_med[local]}" "${build_med[s3]}" "$(ratio "${build_med[s3]}" "${build_med[local]}")"
printf '%-40s %12s %12s %10s\n' "segment build, slowest (s)" "${build_max[local]}" "${build_max[s3]}" "$(ratio "${build_max[s3]}" "${build_max[local]}")"
printf '%-40s %12s %12s %10s\n' "commit of $SEGMENTS segments (s)" "${commit_s[local]}" "${commit_s[s3]}" "$(ratio "${commit_s[s3]}" "${commit_s[local]}")"
printf '%-40s %12s %12s %10s\n' "worker peak RSS (MiB)" "$((rss_max[local] / 1024))" "$((rss_max[s3] / 1024))" "$(ratio "${rss_max[s3]}" "${rss_max[local]}")"
for stage in shuffle merge_partitions merge_partitions+32; do
  for what in median worst; do
    if [ $what = median ]; then l=${cancel_med[$stage-local]} r=${cancel_med[$stage-s3]}
    else l=${cancel_max[$stage-local]} r=${cancel_max[$stage-s3]}; fi
    printf '%-40s %12s %12s %10s\n' "cancel at $stage, $what (ms)" "$l" "$r" "$(ratio "$r" "$l")"
  done
done
echo "(build and commit times are whole lance-index processes: start, open, build or commit, exit;"
echo " cancel latency is from lance_index_build_cancel() to the build call's return, in one process)"
