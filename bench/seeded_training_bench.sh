#!/usr/bin/env bash
# One-node training: the core's trainer against a seeded training (this
# library's training rounds in one process, lance.h's
# LanceVectorTrainingOptions), side by side, one core each (taskset), and
# the k-means loss of every model (IVF: the squared distance of 20,000 rows
# to their nearest centroid, the centroids read through the library with
# bench_train --values).
#
#   bench/seeded_training_bench.sh BUILD_DIR [--smoke]
#
# N x 128 clustered float32 vectors (N = 1,000,000; ROWS=... to change it)
# in 16 fragments, IVF_FLAT, PARTS (default "256 1024") partitions, two runs
# of each trainer per count (the seeded ones with seeds 1 and 2), in
# alternation.  --smoke: 20,000 rows, 16 and 300 partitions (seconds; the
# figures mean nothing: a check that the script still runs).
set -euo pipefail
build=$(cd "$1" && pwd)
shift
rows=${ROWS:-1000000} parts=${PARTS:-"256 1024"}
if [ "${1:-}" = --smoke ]; then rows=20000 parts="16 300"; fi
tool="$build/lance-index"
values="$build/bench_train"
py=${LANCE_C_PYTHON:-$HOME/.cache/lance-c/venv/bin/python}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$py" - "$work/ds.lance" "$rows" <<'PYEOF'
import sys
import numpy as np, pyarrow as pa, lance
uri, n, dim = sys.argv[1], int(sys.argv[2]), 128
rng = np.random.default_rng(7)
centres = rng.uniform(-10, 10, (1024, dim)).astype(np.float32)
v = centres[rng.integers(0, 1024, n)] + rng.normal(0, 2, (n, dim)).astype(np.float32)
lance.write_dataset(pa.table({"id": np.arange(n), "vec": pa.FixedSizeListArray.from_arrays(pa.array(v.reshape(-1)), dim)}),
                    uri, max_rows_per_file=-(-n // 16))
PYEOF
echo "$rows x 128 in 16 fragments, IVF_FLAT, one core per training"
printf "%-10s %-4s %-7s %9s  %s\n" partitions run trainer seconds fingerprint
for p in $parts; do
  for run in 1 2; do
    for mode in core seeded; do
      seed=()
      [ "$mode" = seeded ] && seed=(--seed "$run")
      start=$(date +%s.%N)
      fp=$(taskset -c 0 "$tool" train "$work/ds.lance" --column vec --type IVF_FLAT --partitions "$p" "${seed[@]}" \
           -o "$work/$mode-$p-$run.bin" --quiet)
      end=$(date +%s.%N)
      printf "%-10s %-4s %-7s %9.2f  %s\n" "$p" "$run" "$mode" "$(echo "$end - $start" | bc)" "${fp:0:16}"
      "$values" --values "$work/$mode-$p-$run.bin" "$work/$mode-$p-$run.c.f32" "$work/$mode-$p-$run.pq.f32" >/dev/null
    done
  done
done
"$py" - "$work" <<'PYEOF'
import glob, os, sys
import numpy as np, lance
work = sys.argv[1]
v = lance.dataset(os.path.join(work, "ds.lance")).to_table(columns=["vec"]).column("vec")
v = v.combine_chunks().values.to_numpy().reshape(-1, 128)
v = v[:: max(1, len(v) // 20000)][:20000]
vv = (v * v).sum(1)
print("IVF k-means loss on", len(v), "rows")
for f in sorted(glob.glob(os.path.join(work, "*.c.f32"))):
    c = np.fromfile(f, dtype=np.float32).reshape(-1, 128)
    d = vv[:, None] - 2 * v @ c.T + (c * c).sum(1)[None, :]
    print(f"  {os.path.basename(f)[:-6]:<16} {float(d.min(1).clip(0).sum()):.6g}")
PYEOF
