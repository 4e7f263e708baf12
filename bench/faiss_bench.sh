#!/usr/bin/env bash
# Training against the in-memory limit (issue 52): the same IVF_PQ model
# trained by FAISS and by this library on the same rows and cores.
#
#   bench/faiss_bench.sh BUILD_DIR [--rows N] [--dim D] [--partitions K] [--sub-vectors M]
#                        [--iterations I] [--csv] [--smoke]
#   bench/faiss_bench.sh --setup
#
# N x D float32 vectors from bench/make_vectors.py (default 1,000,000 x 128,
# as scale_bench.sh) in a Lance table; FAISS gets the same rows, read into
# numpy once (timed apart, not counted).  The model: IVF_PQ, K partitions
# (default 1,024), M sub-vectors (16) of 8 bits, L2; both sides train IVF
# on K x 256 rows (the library's sample rate, lance.h's default; FAISS's
# rows drawn from the table's copy with a fixed seed) and PQ on 256 x 256
# residuals, and cap each k-means at I iterations (default 50, the
# library's default).  Where the two cannot be made equal:
#   - FAISS runs every k-means for exactly I iterations; the core stops one
#     when its loss changes by less than 1e-4 (the table says how many
#     stopped early, from the core's log), and the distributed rounds stop
#     as the core does.  FAISS is also run with its own defaults (IVF 10,
#     PQ 25 iterations), for the time a FAISS user would see.
#   - Above 256 partitions the core trains IVF as a hierarchy (16-way
#     nodes), and so do the rounds; FAISS's IndexIVFPQ trains one flat
#     k-means.  The core's k-means balances cluster sizes; FAISS's does not.
#   - FAISS computes with the SIMD level it picks at run time (AVX-512 on
#     such a CPU) and its BLAS; the library with its build's CPU level.
#   - The library's training time includes its process start and reading
#     its sample from the table; FAISS's is index.train() on memory.
# On one core (everything under taskset -c 0): FAISS with 1 OpenMP thread,
# the library's one-node `lance-index train`, then one worker's segment
# build over every fragment from that model and the commit.  On two
# (taskset -c 0,1): FAISS with 2 threads, the library's distributed
# training with two one-core `lance-index train-worker` processes (driven
# by bench_train, as scale_bench.sh drives them), then two one-core workers'
# segments and the commit.  FAISS's whole build is train + add.  Each
# model is evaluated the same way (faiss_side.py): IVF and PQ k-means loss
# on a fixed 20,000-row probe, and recall@10 of 100 queries against the
# exact neighbours, at nprobes 16 with a refine of 5x the k (FAISS:
# IndexRefineFlat, k_factor 5; the library: its index through pylance,
# refine_factor 5).
#
# FAISS runs in its own environment, ~/.cache/lance-c/faiss-venv
# (LANCE_C_FAISS_VENV), with faiss-cpu, numpy and pylance at the versions
# pinned below; `--setup` makes it when it is missing or differs (and only
# that: scripts/setup.sh --test runs it), and every run checks it first.
# --csv adds, after the table, "# csv" and one `figure,NAME,VALUE` record
# per figure (the names are faiss_side.py report's).  --smoke: 4,096 x 16,
# IVF_PQ 16 x 4, 10 iterations, in seconds (ctest's test_bench_smoke_faiss);
# its figures mean nothing.
set -euo pipefail
shopt -s inherit_errexit
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
venv=${LANCE_C_FAISS_VENV:-$HOME/.cache/lance-c/faiss-venv}
pins=(faiss-cpu==1.15.1 numpy==2.4.6 pylance==14.0.2)

# The FAISS environment, made or repaired when it lacks a pinned version.
setup() {
  local check="import sys, importlib.metadata as m
sys.exit(any(m.version(p) != v for p, v in (s.split('==') for s in sys.argv[1:])))"
  if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "$check" "${pins[@]}" 2>/dev/null; then return 0; fi
  echo "faiss_bench: installing ${pins[*]} into $venv" >&2
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/pip" install -q "${pins[@]}"
  "$venv/bin/python" -c "$check" "${pins[@]}"
}
if [ "${1:-}" = --setup ]; then
  setup
  exit 0
fi

build=$(cd "$1" && pwd)
shift
rows=1000000 dim=128 parts=1024 subs=16 iterations=50 csv=0
while [ $# -gt 0 ]; do
  case $1 in
    --rows) rows=$2; shift 2 ;;
    --dim) dim=$2; shift 2 ;;
    --partitions) parts=$2; shift 2 ;;
    --sub-vectors) subs=$2; shift 2 ;;
    --iterations) iterations=$2; shift 2 ;;
    --csv) csv=1; shift ;;
    --smoke) rows=4096 dim=16 parts=16 subs=4 iterations=10; shift ;;
    *) echo "faiss_bench: unknown option $1" >&2; exit 2 ;;
  esac
done
[ "$(nproc)" -ge 2 ] || { echo "faiss_bench: needs 2 cores" >&2; exit 2; }
setup
tool=$build/lance-index
python=${LANCE_C_PYTHON:-$HOME/.cache/lance-c/venv/bin/python}
fpy=$venv/bin/python
side=$here/faiss_side.py
rate=256 # rows per centroid in both samples: lance.h's default sample_rate
work=$(mktemp -d "${TMPDIR:-/tmp}/lance-faiss.XXXXXX")
trap 'rm -rf "$work"' EXIT

# shellcheck source=SCRIPTDIR/timing.sh
source "$here/timing.sh"
figures=$work/figures.txt
fig() { echo "$1 $2" >>"$figures"; }

"$python" "$here/make_vectors.py" "$work/vectors.lance" "$rows" "$dim"
cp -r "$work/vectors.lance" "$work/d2.lance"
plan=$("$tool" plan "$work/vectors.lance" --groups 2)
version=$(sed -n 's/.*"dataset_version": *\([0-9]*\).*/\1/p' <<<"$plan")
mapfile -t groups < <(grep -o '"fragments": \[[^]]*\]' <<<"$plan" | sed 's/.*\[\(.*\)\]/\1/; s/ //g')
all=$(IFS=,; echo "${groups[*]}")
ivf_sample=$((parts * rate < rows ? parts * rate : rows))
pq_sample=$((256 * rate < ivf_sample ? 256 * rate : ivf_sample))
{
  echo "rows $rows"; echo "dim $dim"; echo "partitions $parts"; echo "sub_vectors $subs"
  echo "iterations $iterations"; echo "ivf_sample_rows $ivf_sample"; echo "pq_sample_rows $pq_sample"
} >"$figures"
fig faiss_version "$("$fpy" -c 'import faiss; print(faiss.__version__)' 2>/dev/null)"
fig faiss_simd "$("$fpy" -c 'import faiss; print(faiss.SIMDConfig.get_level_name())' 2>/dev/null)"

# The table's rows into numpy once, with the probe, queries and exact neighbours.
timed 0,1 "$work/read.out" "$fpy" "$side" read "$work"
fig read_s "$(cat "$work/read.out")"

# This library on one core: the one-node training (the core's log counts the
# k-means runs that stop before the cap), then one worker's segments.
vec=(--column vec --type IVF_PQ --partitions "$parts" --sub-vectors "$subs" --bits 8 --iterations "$iterations")
t=$(now)
LANCE_LOG=info timed 0 "$work/train.out" "$tool" train "$work/vectors.lance" "${vec[@]}" --version "$version" \
  --quiet -o "$work/one.bin"
fig lance_one_node_train_s "$(since "$t")"
fig lance_one_node_rss_mib "$(rss "$work/train.out")"
# (The core logs every 10th iteration, so the runs that reach the cap are
# counted only when the cap is a multiple of 10; -1 otherwise.)
awk -v cap="$iterations" '
  /KMeans training: converged at iteration/ { split($0, a, "iteration "); i = a[2] + 0; if (i < cap) { n++; s += i } }
  /KMeans training: iteration [0-9]+ \/ / { split($0, a, "iteration "); if (a[2] + 0 == cap) at++ }
  END { printf "lance_kmeans_converged %d\nlance_kmeans_mean_iteration %.2f\nlance_kmeans_at_cap %d\n", n, n ? s / n : 0,
        cap % 10 ? -1 : at }' "$work/train.out.err" >>"$figures"
t=$(now)
timed 0 "$work/seg-all.out" "$tool" build "$work/vectors.lance" --column vec --model "$work/one.bin" \
  --version "$version" --fragments "$all" --quiet -o "$work/seg-all.bin"
taskset -c 0 "$tool" commit "$work/vectors.lance" --name vec_idx --column vec "$work/seg-all.bin" >/dev/null
fig lance_one_node_build_s "$(since "$t")"

# This library on two cores: two one-core training workers, then two
# one-core segment workers and the commit.
BENCH_TRAIN_ITERATIONS=$iterations "$build/bench_train" "$work/d2.lance" 2 "$parts" "$subs" "$tool" \
  "$work/d2.bin" >"$work/d2.out" || { echo "faiss_bench: bench_train with 2 workers failed" >&2; exit 1; }
read -r dist2 rounds _ _ _ _ _ _ _ drss0 drss1 <"$work/d2.out"
fig lance_dist_x2_train_s "$dist2"
fig lance_dist_x2_rounds "$rounds"
fig lance_dist_x2_rss_mib "$((drss0 > drss1 ? drss0 : drss1))"
t=$(now)
pids=()
for g in 0 1; do
  taskset -c "$g" "$tool" build "$work/d2.lance" --column vec --model "$work/d2.bin" --version "$version" \
    --fragments "${groups[$g]}" --quiet -o "$work/d2-seg-$g.bin" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
taskset -c 0,1 "$tool" commit "$work/d2.lance" --name vec_idx --column vec "$work/d2-seg-0.bin" \
  "$work/d2-seg-1.bin" >/dev/null
fig lance_dist_x2_build_s "$(since "$t")"

# FAISS: 1 thread on core 0 and 2 threads on cores 0-1, with the same
# iteration cap and with FAISS's defaults.
for t in 1 2; do
  cores=0
  [ "$t" = 1 ] || cores=0,1
  for kind in same def; do
    name=faiss_${t}t
    its=(--iterations "$iterations")
    [ "$kind" = same ] || { name=faiss_def_${t}t; its=(); }
    OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t MKL_NUM_THREADS=$t timed "$cores" "$work/$name.out" "$fpy" "$side" \
      train "$work" "$name" --threads "$t" --partitions "$parts" --sub-vectors "$subs" --sample-rate "$rate" "${its[@]}"
    read -r _ train_s add_s recall <"$work/$name.out"
    fig "${name}_train_s" "$train_s"
    fig "${name}_add_s" "$add_s"
    fig "${name}_recall" "$recall"
    fig "${name}_rss_mib" "$(rss "$work/$name.out")"
  done
done

# Both models of this library as values, then every model's losses and the
# library's recall (pylance logs a warning per query: kept out of the report).
for m in one d2; do
  "$build/bench_train" --values "$work/$m.bin" "$work/$m.centroids.f32" "$work/$m.codebook.f32" >/dev/null
done
for m in lance_one_node:vectors lance_dist_x2:d2; do
  r=$("$fpy" "$side" recall "$work" "$work/${m#*:}.lance" 2>"$work/recall.err") ||
    { cat "$work/recall.err" >&2; exit 1; }
  fig "${m%:*}_recall" "$r"
done
"$fpy" "$side" loss "$work" "$dim" "$parts" "$subs" 8 one d2 faiss_1t faiss_def_1t faiss_2t faiss_def_2t \
  >"$work/loss.out"
while read -r m ivf pq; do
  case $m in one) m=lance_one_node ;; d2) m=lance_dist_x2 ;; esac
  fig "${m}_ivf_loss" "$ivf"
  fig "${m}_pq_loss" "$pq"
done <"$work/loss.out"
args=()
[ "$csv" = 0 ] || args=(--csv)
"$fpy" "$side" report "$figures" "${args[@]}"
