#!/usr/bin/env bash
# The measurements behind the scaling model (bench/scaling_model.py), and
# the model itself: checked against them, then projected.
#
#   bench/scaling_bench.sh BUILD_DIR [--rows N] [--dim D] [--partitions "K1 K2"]
#                          [--workers "1 2 4"] [--out DIR] [--smoke]
#
# On N x D clustered float32 vectors (default 1,000,000 x 128, 16
# fragments), for each partition count K (default "1024 4096"), IVF_PQ with
# D/8 sub-vectors: the core's one-node training on one core (`lance-index
# train`, taskset), the segment build of every row from that model on one
# core (`lance-index build`), and the distributed training with each worker
# count (bench_train: one `lance-index train-worker` process per worker,
# pinned round-robin to this machine's cores, one thread each; with more
# workers than cores they share them).  Each measurement is one JSON line in
# DIR/measurements.jsonl (default: a temporary directory, printed); the
# model then calibrates on the one-worker runs and prints its predictions
# for every run measured, with the error, and its projection (DIR/*.png).
# --smoke: 20,000 x 16, K "300 600", workers "1 2": a check that the script
# still runs (ctest's test_bench_smoke_scaling), whose figures mean nothing.
set -euo pipefail
shopt -s inherit_errexit
build=$(cd "$1" && pwd)
shift
rows=1000000 dim=128 parts="1024 4096" workers="1 2 4" out=""
while [ $# -gt 0 ]; do
  case $1 in
    --rows) rows=$2; shift 2 ;;
    --dim) dim=$2; shift 2 ;;
    --partitions) parts=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --smoke) rows=20000 dim=16 parts="300 600" workers="1 2"; shift ;;
    *) echo "scaling_bench: unknown option $1" >&2; exit 2 ;;
  esac
done
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tool=$build/lance-index
python=${LANCE_C_PYTHON:-$HOME/.cache/lance-c/venv/bin/python}
work=$(mktemp -d "${TMPDIR:-/tmp}/lance-scaling.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ -z "$out" ]; then out=$(mktemp -d "${TMPDIR:-/tmp}/lance-scaling-out.XXXXXX"); fi
mkdir -p "$out"
log=$out/measurements.jsonl
: >"$log"
uri=$work/vectors.lance
"$python" "$here/make_vectors.py" "$uri" "$rows" "$dim"
subs=$((dim / 8))
cores=$(nproc)
# shellcheck source=SCRIPTDIR/timing.sh
source "$(dirname "${BASH_SOURCE[0]}")/timing.sh"
export RAYON_NUM_THREADS=1
for k in $parts; do
  t=$(now)
  taskset -c 0 "$tool" train "$uri" --column vec --type IVF_PQ --partitions "$k" --sub-vectors "$subs" --quiet \
    -o "$work/model-$k.bin" >/dev/null
  train=$(since "$t")
  t=$(now)
  taskset -c 0 "$tool" build "$uri" --column vec --model "$work/model-$k.bin" --quiet -o "$work/seg-$k.bin" >/dev/null
  segment=$(since "$t")
  printf '{"kind": "one_node", "rows": %d, "dim": %d, "partitions": %d, "sub_vectors": %d, "cores": %d, "train_s": %s, "segment_s": %s}\n' \
    "$rows" "$dim" "$k" "$subs" "$cores" "$train" "$segment" >>"$log"
  for w in $workers; do
    read -r secs rounds bytes _ _ round_bytes reduce reduce_max ivf rss < <("$build/bench_train" "$uri" "$w" "$k" "$subs" "$tool")
    printf '{"kind": "distributed", "rows": %d, "dim": %d, "partitions": %d, "sub_vectors": %d, "cores": %d, "workers": %d, "train_s": %s, "rounds": %d, "bytes": %d, "max_round_bytes": %d, "reduce_s": %s, "max_reduce_s": %s, "ivf_s": %s, "worker_rss_mib": [%s]}\n' \
      "$rows" "$dim" "$k" "$subs" "$cores" "$w" "$secs" "$rounds" "$bytes" "$round_bytes" "$reduce" "$reduce_max" "$ivf" \
      "$(tr ' ' ',' <<<"$rss")" >>"$log"
  done
done
echo "measurements: $log"
"$python" "$here/scaling_model.py" "$log" --out "$out"
