#!/usr/bin/env bash
# The distributed build at scale, with per-host CPU limits (issue 18).
#
#   bench/scale_bench.sh BUILD_DIR [--rows N] [--dim D] [--partitions K] [--sub-vectors M]
#                        [--quality-seeds S] [--csv] [--smoke]
#
# N x D float32 vectors (default 1,000,000 x 128, clustered), 16 fragments,
# IVF_PQ K x M (default 256 x 16).  --smoke is the smallest shape that runs
# every step (4,096 x 16, IVF_PQ 16 x 4, --quality-seeds 1; options after it
# change it): a check that the script still works (ctest's
# test_bench_smoke runs it through bench/suite.py --smoke), whose figures
# mean nothing.  Each "host" is one core (taskset), so
# the comparison shows what two one-core workers buy over one one-core
# build, on a 2-core machine whose one-shot build would otherwise use both:
#   train         the shared model, on one core (the coordinator)
#   segments x1   one worker on one core builds every fragment's segment
#   segments x2   two workers, each on its own core, one half of the
#                 fragments each (planned by `lance-index plan --groups 2`)
#   commit        the two segments as one index
#   one-shot      `lance-index create` on one core: trains, builds, commits
#   dist train x1 the same model trained by one `lance-index train-worker`
#                 on one core, driven by bench_train (lance.h "distributed
#                 training")
#   dist train x2 the same by two workers, each on its own core
# and reports the segment phase's speedup (x1 / x2), the whole build's
# (one-shot / (train + segments x2 + commit)), with each worker's peak RSS,
# the distributed training's ratios to the one-node training, the whole
# build with it (one-shot / (dist train x2 + segments x2 + commit)), the
# rounds and bytes it exchanged, and recall@10 (100 queries, nprobes 16,
# refine 5) of the index built from each model (one-node, 2 workers), with
# each model's k-means loss (IVF: squared distance to the nearest
# centroid; PQ: of the residual to its nearest codewords) on 20,000 rows
# (the model read through the library: bench_train --values).
# Lance sizes its thread pools from the CPUs a process may run on, so a
# process pinned to one core also computes with one thread.
# --quality-seeds S then repeats the comparison of quality S times: S
# one-node trainings (the core starts each from its own random centroids)
# and S distributed ones (seeds 1..S), each model indexed and evaluated as
# above, and prints each training's recall@10 and losses with the means and
# standard deviations (the initial centroids move recall by more than the
# trainer does: compare means, not single runs).
# --csv adds, after the human table, a line "# csv" and then one record
# `figure,NAME,VALUE` per figure (seconds, MiB, or a ratio): rows, dim,
# partitions, sub_vectors, train_s, train_rss_mib, segments_x1_s,
# segments_x1_rss_mib, segments_x2_s, segments_x2_rss_mib_0,
# segments_x2_rss_mib_1, commit_s, oneshot_s, distributed_s (train +
# segments x2 + commit), segment_speedup (x1 / x2), whole_build_ratio
# (one-shot / distributed), dist_train_x1_s, dist_train_x2_s,
# dist_train_rounds, dist_train_bytes, dist_x1_ratio (dist x1 / train),
# dist_x2_ratio (dist x2 / train), whole_build_dist_ratio (one-shot /
# (dist x2 + segments x2 + commit)), recall_one_node, recall_dist,
# ivf_loss_one_node, ivf_loss_dist, pq_loss_one_node, pq_loss_dist; with
# --quality-seeds: quality_trainings, quality_recall_one_node_mean / _sd,
# quality_recall_dist_mean / _sd, quality_ivf_loss_ratio and
# quality_pq_loss_ratio (distributed mean / one-node mean);
# dist_train_max_round_bytes, dist_train_reduce_s, dist_train_max_reduce_s
# (the coordinator's reductions, all rounds and the longest) and
# dist_train_rss_mib_0 / _1 (each training worker's peak RSS).
set -euo pipefail
shopt -s inherit_errexit # a failure inside $(...) fails the script too
build=$(cd "$1" && pwd)
shift
rows=1000000 dim=128 parts=256 subs=16 csv=0 seeds=0
while [ $# -gt 0 ]; do
  case $1 in
    --rows) rows=$2; shift 2 ;;
    --dim) dim=$2; shift 2 ;;
    --partitions) parts=$2; shift 2 ;;
    --sub-vectors) subs=$2; shift 2 ;;
    --csv) csv=1; shift ;;
    --quality-seeds) seeds=$2; shift 2 ;;
    --smoke) rows=4096 dim=16 parts=16 subs=4 seeds=1; shift ;;
    *) echo "scale_bench: unknown option $1" >&2; exit 2 ;;
  esac
done
[ "$(nproc)" -ge 2 ] || { echo "scale_bench: needs 2 cores (one per worker)" >&2; exit 2; }
tool=$build/lance-index
python=${LANCE_C_PYTHON:-$HOME/.cache/lance-c/venv/bin/python}
work=$(mktemp -d "${TMPDIR:-/tmp}/lance-scale.XXXXXX")
trap 'rm -rf "$work"' EXIT
uri=$work/vectors.lance

# shellcheck source=SCRIPTDIR/timing.sh
source "$(dirname "${BASH_SOURCE[0]}")/timing.sh"

t=$(now)
"$python" "$(dirname "${BASH_SOURCE[0]}")/make_vectors.py" "$uri" "$rows" "$dim"
echo "dataset: $rows x $dim float32 in 16 fragments, written in $(since "$t") s"
# Copies without an index, for an index from each model (below).
cp -r "$uri" "$work/model.lance"
cp -r "$uri" "$work/model-d2.lance"

plan=$("$tool" plan "$uri" --groups 2)
version=$(sed -n 's/.*"dataset_version": *\([0-9]*\).*/\1/p' <<<"$plan")
mapfile -t groups < <(grep -o '"fragments": \[[^]]*\]' <<<"$plan" | sed 's/.*\[\(.*\)\]/\1/; s/ //g')
all=$(IFS=,; echo "${groups[*]}")
vec=(--column vec --type IVF_PQ --partitions "$parts" --sub-vectors "$subs")

t=$(now)
timed 0 "$work/train.out" "$tool" train "$uri" "${vec[@]}" --version "$version" --quiet -o "$work/model.bin"
train=$(since "$t")

t=$(now)
timed 0 "$work/one.out" "$tool" build "$uri" --column vec --model "$work/model.bin" --version "$version" \
  --fragments "$all" --quiet -o "$work/seg-all.bin"
seg1=$(since "$t")

t=$(now)
timed 0 "$work/w0.out" "$tool" build "$uri" --column vec --model "$work/model.bin" --version "$version" \
  --fragments "${groups[0]}" --quiet -o "$work/seg-0.bin" &
p0=$!
timed 1 "$work/w1.out" "$tool" build "$uri" --column vec --model "$work/model.bin" --version "$version" \
  --fragments "${groups[1]}" --quiet -o "$work/seg-1.bin" &
p1=$!
wait "$p0"
wait "$p1"
seg2=$(since "$t")

t=$(now)
"$tool" commit "$uri" --name dist_idx --column vec "$work/seg-0.bin" "$work/seg-1.bin" >/dev/null
commit=$(since "$t")

t=$(now)
timed 0 "$work/oneshot.out" "$tool" create "$uri" "${vec[@]}" --name oneshot_idx --quiet
oneshot=$(since "$t")

# The same model trained by the workers together, with 1 and 2 of them.
"$build/bench_train" "$uri" 1 "$parts" "$subs" "$tool" "$work/model-d1.bin" >"$work/d1.out" ||
  { echo "scale_bench: bench_train with 1 worker failed" >&2; exit 1; }
"$build/bench_train" "$uri" 2 "$parts" "$subs" "$tool" "$work/model-d2.bin" >"$work/d2.out" ||
  { echo "scale_bench: bench_train with 2 workers failed" >&2; exit 1; }
read -r dist1 _ _ _ _ <"$work/d1.out"
read -r dist2 rounds bytes _ _ round_bytes reduce reduce_max _ drss0 drss1 <"$work/d2.out"

# An index from each model, on the copies of the dataset, and their recall@10
# and k-means losses.  evaluate.py WORK DATASET CENTROIDS CODEBOOK DIM
# PARTITIONS SUB_VECTORS BITS prints "RECALL IVF_LOSS PQ_LOSS": the model's
# values come as the raw float32 files and the shape `bench_train --values`
# writes and prints (the exact neighbours of the 100 queries are computed
# once and kept in the work directory).
cat >"$work/evaluate.py" <<'EOF'
import json, os, sys
import numpy as np
import lance
work, dataset, centroids_path, codebook_path = sys.argv[1:5]
dim, parts, subs, bits = map(int, sys.argv[5:9])
def model():
    c = np.fromfile(centroids_path, "<f4").reshape(parts, dim)
    book = np.fromfile(codebook_path, "<f4").reshape(subs, 1 << bits, dim // subs)
    return c, book
base = lance.dataset(f"{work}/vectors.lance")
vecs = base.to_table(columns=["vec"], limit=200000).column("vec")
vecs = vecs.combine_chunks().values.to_numpy().reshape(-1, dim)[::10][:20000]
queries = [vecs[(q * 7919 + 13) % len(vecs)] for q in range(100)]
truth_path = f"{work}/truth.json"
if not os.path.exists(truth_path):
    truth = [base.to_table(columns=["id"], nearest={"column": "vec", "q": v, "k": 10, "use_index": False})
             .column("id").to_pylist() for v in queries]
    json.dump(truth, open(truth_path, "w"))
truth = json.load(open(truth_path))
ds = lance.dataset(dataset)
hits = 0
for v, t in zip(queries, truth):
    got = ds.to_table(columns=["id"], nearest={"column": "vec", "q": v, "k": 10, "nprobes": 16,
                                               "refine_factor": 5, "use_index": True})
    hits += len(set(got.column("id").to_pylist()) & set(t))
c, book = model()
d2 = (vecs ** 2).sum(1)[:, None] - 2 * vecs @ c.T + (c ** 2).sum(1)[None, :]
near = d2.argmin(1)
r = vecs - c[near]
ivf = float((r ** 2).sum())
m, _, sub = book.shape
pq = 0.0
for i in range(m):
    part = r[:, i * sub:(i + 1) * sub]
    e = (part ** 2).sum(1)[:, None] - 2 * part @ book[i].T + (book[i] ** 2).sum(1)[None, :]
    pq += float(np.maximum(e.min(1), 0).sum())
print(hits / 1000, ivf, pq)
EOF
# index_and_evaluate COPY MODEL [--replace]: segments on both cores, one
# commit, then evaluate.py's figures.  Call it as VAR=$(index_and_evaluate
# ...), so that a failure stops the script (set -e).
index_and_evaluate() {
  local copy=$1 m=$2 shape pids=()
  shift 2
  for g in 0 1; do
    taskset -c "$g" "$tool" build "$work/$copy.lance" --column vec --model "$work/$m.bin" \
      --version "$version" --fragments "${groups[$g]}" --quiet -o "$work/$copy-seg-$g.bin" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  "$tool" commit "$work/$copy.lance" --name vec_idx --column vec "$work/$copy-seg-0.bin" "$work/$copy-seg-1.bin" \
    "$@" >/dev/null
  shape=$("$build/bench_train" --values "$work/$m.bin" "$work/$m.centroids.f32" "$work/$m.codebook.f32")
  # (pylance logs a deprecation warning per query: kept out of the report)
  # shellcheck disable=SC2086 # the shape is four numbers
  "$python" "$work/evaluate.py" "$work" "$work/$copy.lance" "$work/$m.centroids.f32" "$work/$m.codebook.f32" \
    $shape 2>"$work/evaluate.err" || { cat "$work/evaluate.err" >&2; exit 1; }
}
figures=$(index_and_evaluate model model)
read -r recall1 ivf1 pq1 <<<"$figures"
figures=$(index_and_evaluate model-d2 model-d2)
read -r recall2 ivf2 pq2 <<<"$figures"
if [ -z "$pq1" ] || [ -z "$pq2" ]; then
  echo "scale_bench: the evaluation printed no figures" >&2
  exit 1
fi

# Quality over seeds: one-node trainings (each with the core's own random
# start) against distributed trainings with seeds 1..S (2 workers), each
# model indexed and evaluated as above.  One line per training, then the
# means and standard deviations.
if [ "$seeds" -gt 0 ]; then
  : >"$work/quality.txt"
  for i in $(seq 1 "$seeds"); do
    "$tool" train "$uri" "${vec[@]}" --version "$version" --quiet -o "$work/q-one-$i.bin"
    BENCH_TRAIN_SEED=$i "$build/bench_train" "$uri" 2 "$parts" "$subs" "$tool" "$work/q-dist-$i.bin" >/dev/null ||
      { echo "scale_bench: bench_train with seed $i failed" >&2; exit 1; }
    figures=$(index_and_evaluate model "q-one-$i" --replace)
    echo "one-node $i $figures" >>"$work/quality.txt"
    figures=$(index_and_evaluate model-d2 "q-dist-$i" --replace)
    echo "distributed $i $figures" >>"$work/quality.txt"
  done
fi

awk -v csv="$csv" -v rows="$rows" -v dim="$dim" -v parts="$parts" -v subs="$subs" -v train="$train" -v seg1="$seg1" \
    -v seg2="$seg2" -v commit="$commit" -v oneshot="$oneshot" -v r1="$(rss "$work/one.out")" \
    -v r0="$(rss "$work/w0.out")" -v r2="$(rss "$work/w1.out")" -v rt="$(rss "$work/train.out")" \
    -v dist1="$dist1" -v dist2="$dist2" -v rounds="$rounds" -v bytes="$bytes" -v recall1="$recall1" \
    -v recall2="$recall2" -v ivf1="$ivf1" -v ivf2="$ivf2" -v pq1="$pq1" -v pq2="$pq2" \
    -v round_bytes="$round_bytes" -v reduce="$reduce" -v reduce_max="$reduce_max" -v drss0="$drss0" \
    -v drss1="$drss1" 'BEGIN {
  dist = train + seg2 + commit
  distd = dist2 + seg2 + commit
  printf "scale: %d x %d, IVF_PQ %d x %d, one core per process (taskset)\n", rows, dim, parts, subs
  printf "  train (coordinator, 1 core)                %8.2f s   peak RSS %s MiB\n", train, rt
  printf "  segment phase, 1 worker x 1 core           %8.2f s   peak RSS %s MiB\n", seg1, r1
  printf "  segment phase, 2 workers x 1 core each     %8.2f s   peak RSS %s / %s MiB\n", seg2, r0, r2
  printf "  commit (2 segments)                        %8.2f s\n", commit
  printf "  one-shot build (1 core)                    %8.2f s\n", oneshot
  printf "  segment phase speedup, 2 workers vs 1      %8.2fx  (target >= 1.8x)\n", seg1 / seg2
  printf "  whole build, distributed vs one-shot       %8.2fx  (train + 2 workers + commit = %.2f s)\n", oneshot / dist, dist
  printf "  distributed training, 1 worker x 1 core    %8.2f s   %.2fx the one-node training (target <= 1.05)\n", dist1, dist1 / train
  printf "  distributed training, 2 workers x 1 core   %8.2f s   %.2fx the one-node training (target <= 0.6); %d rounds, %.1f MB exchanged\n", dist2, dist2 / train, rounds, bytes / 1e6
  printf "    per round at most %.2f MB; reductions %.2f s in all, %.3f s the longest; workers peak RSS %s / %s MiB\n", round_bytes / 1e6, reduce, reduce_max, drss0, drss1
  printf "  whole build with distributed training      %8.2fx  one-shot / (dist train x2 + 2 workers + commit = %.2f s) (target >= 1.7)\n", oneshot / distd, distd
  printf "  recall@10, one-node model / distributed    %.3f / %.3f\n", recall1, recall2
  printf "  k-means loss IVF, one-node / distributed   %.5g / %.5g (%.3fx)\n", ivf1, ivf2, ivf2 / ivf1
  printf "  k-means loss PQ, one-node / distributed    %.5g / %.5g (%.3fx)\n", pq1, pq2, pq2 / pq1
  if (csv) {
    print "# csv"
    split("rows dim partitions sub_vectors train_s train_rss_mib segments_x1_s segments_x1_rss_mib segments_x2_s " \
          "segments_x2_rss_mib_0 segments_x2_rss_mib_1 commit_s oneshot_s distributed_s segment_speedup " \
          "whole_build_ratio dist_train_x1_s dist_train_x2_s dist_train_rounds dist_train_bytes dist_x1_ratio " \
          "dist_x2_ratio whole_build_dist_ratio recall_one_node recall_dist ivf_loss_one_node ivf_loss_dist " \
          "pq_loss_one_node pq_loss_dist dist_train_max_round_bytes dist_train_reduce_s dist_train_max_reduce_s " \
          "dist_train_rss_mib_0 dist_train_rss_mib_1", names, " ")
    split(rows " " dim " " parts " " subs " " train " " rt " " seg1 " " r1 " " seg2 " " r0 " " r2 " " commit " " \
          oneshot " " dist " " seg1 / seg2 " " oneshot / dist " " dist1 " " dist2 " " rounds " " bytes " " \
          dist1 / train " " dist2 / train " " oneshot / distd " " recall1 " " recall2 " " ivf1 " " ivf2 " " \
          pq1 " " pq2 " " round_bytes " " reduce " " reduce_max " " drss0 " " drss1, values, " ")
    for (i = 1; i in names; i++) printf "figure,%s,%s\n", names[i], values[i]
  }
}'
if [ "$seeds" -gt 0 ]; then
  awk -v csv="$csv" '{
    k = $1; n[k]++; r[k] += $3; r2[k] += $3 * $3; iv[k] += $4; iv2[k] += $4 * $4; pq[k] += $5; pq2[k] += $5 * $5
    line[NR] = sprintf("    %-11s %2d   recall@10 %.3f   loss IVF %.5g   PQ %.5g", $1, $2, $3, $4, $5)
  }
  function mean(s, k) { return s / n[k] }
  function sd(s, s2, k) { v = s2 / n[k] - (s / n[k]) ^ 2; return n[k] > 1 && v > 0 ? sqrt(v * n[k] / (n[k] - 1)) : 0 }
  END {
    o = "one-node"; d = "distributed"
    printf "quality over %d trainings each (one-node: the core'"'"'s random start; distributed: seeds 1..%d, 2 workers)\n", n[o], n[d]
    for (i = 1; i <= NR; i++) print line[i]
    printf "  recall@10 mean (sd), one-node / distributed  %.3f (%.3f) / %.3f (%.3f)   difference %+.3f\n",
      mean(r[o], o), sd(r[o], r2[o], o), mean(r[d], d), sd(r[d], r2[d], d), mean(r[d], d) - mean(r[o], o)
    printf "  loss IVF mean (sd), one-node / distributed  %.5g (%.2g) / %.5g (%.2g)   %.3fx\n",
      mean(iv[o], o), sd(iv[o], iv2[o], o), mean(iv[d], d), sd(iv[d], iv2[d], d), iv[d] / n[d] / (iv[o] / n[o])
    printf "  loss PQ mean (sd), one-node / distributed   %.5g (%.2g) / %.5g (%.2g)   %.3fx\n",
      mean(pq[o], o), sd(pq[o], pq2[o], o), mean(pq[d], d), sd(pq[d], pq2[d], d), pq[d] / n[d] / (pq[o] / n[o])
    if (csv) {
      printf "figure,quality_trainings,%d\n", n[o]
      printf "figure,quality_recall_one_node_mean,%.4f\nfigure,quality_recall_one_node_sd,%.4f\n", mean(r[o], o), sd(r[o], r2[o], o)
      printf "figure,quality_recall_dist_mean,%.4f\nfigure,quality_recall_dist_sd,%.4f\n", mean(r[d], d), sd(r[d], r2[d], d)
      printf "figure,quality_ivf_loss_ratio,%.4f\nfigure,quality_pq_loss_ratio,%.4f\n", iv[d] / n[d] / (iv[o] / n[o]),
        pq[d] / n[d] / (pq[o] / n[o])
    }
  }' "$work/quality.txt"
fi
