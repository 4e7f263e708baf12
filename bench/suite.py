"""The benchmark suite: what distributing an index build buys, in one run.

    python bench/suite.py BUILD_DIR [--rows N] [--text-rows N] [--merge-rows N]
        [--cancel-rows N] [--scale-rows N] [--scale-dim D] [--rq-runs N] [--only SECTIONS]
        [--out DIR] [--smoke]

BUILD_DIR holds lance-index, bench_ffi, bench_commit_scaling, bench_merge,
bench_cancel and bench_train (scripts/bench.sh suite builds them and runs this).  Prints one
table and writes PNG plots to --out (default BUILD_DIR/bench-plots).  The
sections, by the names --only takes (a comma list; default: all of them):

1. ffi: FFI cost, the same IVF_FLAT segment (same fragments, same centroids)
   built through lance-c and through pylance, and the same IVF_PQ model
   trained through both with TRAIN_ITERS k-means iterations, interleaved,
   median of 5 pairs each (a segment sample is itself the median of 5
   builds in one warm process; needs --rows >= 65536: pylance trains PQ on
   256 rows per centroid).  In the same interleaving, the one-shot IVF_PQ
   build's own training phase (bench_ffi --oneshot-train): standalone
   training should cost no more.
2. scaling: the one-shot build against the distributed loop (train, N
   segment builds as processes, 2 at a time, commit) for N = 1, 2, 4, 8:
   wall time and CPU time, as ratios to one-shot.
3. recall: recall@10 and query latency (100 queries, nprobes 16, refine
   5) of the one-shot index, of 1, 2, 4, 8, 16 shared-model segments, and of 4
   independently trained segments; IVF_RQ recall@10 (no refine) of 4
   segments of one model merged into one, lance-c's (the model carries the
   RaBitQ rotation) against pylance's (one rabitq_model; issue 41's target:
   within 0.01), the mean of --rq-runs pairs (default 6); then the same (one-shot, 4 shared, 4
   independent) on real sentence embeddings: the comment and docstring
   lines of this machine's Python standard library, embedded with the
   WordLlama model that ships inside the `wordllama` package (256-d; no
   download: the package's own weights and tokenizer are used).
4. commit: commit time and listing time against the segment count, 1 to 256.
5. memory: peak memory (max RSS) of a worker process against its group's
   size.
Sections 1-5 use IVF_PQ 64 partitions x 16 sub-vectors over N x 128
clustered vectors in 16 fragments (N = --rows, default 100000); recall and
memory query and extend the indices scaling builds, so they run it too.
The last three run the separate benchmark programs with --csv and read the
CSV block each prints after its human output (formats in their headers;
the human output goes to stderr as they run):
6. merge (bench_merge, --merge-rows, default --rows): k-NN latency (median)
   and recall@10 of 1, 4, 16, 64 shared-model segments and of 16 and 64
   merged into 1 and into 4, latency as a ratio to the 1 segment (the
   one-shot stand-in; issue 18's target for 64 merged into 1: <= 1.1x,
   recall equal); merge time against the build time of its sources and of
   the 1 segment.
7. cancel (bench_cancel, --cancel-rows, default 1000000; 0 skips it): 20
   builds cancelled at random points, trained locally and with an injected
   model: median and worst latency (target at 1M rows: median <= 50 ms,
   worst <= 250 ms), worst by stage.
8. scale (bench/scale_bench.sh, --scale-rows, default 1000000, 0 skips it;
   --scale-dim, default 128): one core per process, train, the segment phase
   with 1 and 2 workers (speedup target >= 1.8x), commit, one-shot, and the
   whole build's ratio; the model trained by 1 and 2 workers together
   (bench_train: ratios to the one-node training, rounds, bytes), the whole
   build with it, and recall@10 and k-means losses of both models.
Plots: scaling, recall, latency, commit, memory, merge, cancel, scale (.png).
A benchmark program that fails stops the suite with a non-zero exit.

--smoke runs every section (those --only names) at its smallest shape, once,
in about 25 s: 4096 rows (1200 sentences), 1 FFI pair of 2 training
iterations (pylance sampling 16 rows per centroid: it refuses a sample the
rows cannot fill, where the core takes every row), 10 queries, 8 cancels, 1
to 4 segments for commit, and scale_bench.sh --smoke; the plots go to a
scratch directory and are checked to be PNG files.  ctest's test_bench_smoke
runs it, so a change that breaks a benchmark fails a test; its figures mean
nothing.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa

import lance

DIM, FRAGS, PARTITIONS, SUBVECTORS = 128, 16, 64, 16
# k-means iterations of the FFI training row.  With the core's default (50,
# or fewer once the loss settles) the work differs from run to run: on this
# data (100k rows) the IVF problem settles at iteration 6-8 and each PQ
# sub-problem at 36-50 or not at all, at random (96 sub-problems in 6 of
# pylance's trainings, logged on 2026-12-02).  At 30 no PQ sub-problem
# settles sooner, so both sides do the same work and the row compares the
# two builds.
TRAIN_ITERS = 30
# Repetitions and sample sizes --smoke lowers: FFI pairs, queries per
# recall measurement, cancelled builds per series, the most segments of the
# commit section, pylance's training sample rate (its default, as the core's).
PAIRS, QUERIES, CANCELS, COMMIT_SEGMENTS, PY_SAMPLE_RATE = 5, 100, 20, 256, 256
SECTIONS = ("ffi", "scaling", "recall", "commit", "memory", "merge", "cancel", "scale")


def tool(build: str, *args: str) -> str:
    proc = subprocess.run([os.path.join(build, "lance-index"), *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"lance-index {args[0]}: exit {proc.returncode}: {proc.stderr.strip()}")
    return proc.stdout


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def make_data(rows: int) -> np.ndarray:
    rng = np.random.default_rng(3)
    centres = rng.uniform(-10, 10, (64, DIM)).astype(np.float32)
    return centres[rng.integers(0, 64, rows)] + rng.normal(0, 2, (rows, DIM)).astype(np.float32)


def write(uri: str, vectors: np.ndarray) -> None:
    table = pa.table({"id": np.arange(len(vectors), dtype=np.int64),
                      "vec": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), vectors.shape[1])})
    lance.write_dataset(table, uri, max_rows_per_file=(len(vectors) + FRAGS - 1) // FRAGS)


def pq_args() -> list:
    return ["--type", "IVF_PQ", "--partitions", str(PARTITIONS), "--sub-vectors", str(SUBVECTORS)]


def bench_ffi(build: str, work: str, uri: str, vectors: np.ndarray) -> dict:
    centroids = vectors[np.arange(PARTITIONS) * 997 % len(vectors)].copy()
    cfile = os.path.join(work, "centroids.f32")
    centroids.astype("<f4").tofile(cfile)
    frags = list(range(FRAGS))
    ds = lance.dataset(uri)
    c_times, py_times = [], []
    # A warm-up build in this process, as bench_ffi warms up its own.
    ds.create_index_uncommitted("vec", "IVF_FLAT", num_partitions=PARTITIONS, ivf_centroids=centroids, fragment_ids=frags)
    # Each side's sample is the median of 5 builds in one warm process
    # (bench_ffi does the same on its side); 5 such pairs, interleaved.
    def py_build() -> float:
        t0 = time.perf_counter()
        ds.create_index_uncommitted("vec", "IVF_FLAT", num_partitions=PARTITIONS, ivf_centroids=centroids,
                                    fragment_ids=frags)
        return time.perf_counter() - t0

    for _ in range(PAIRS):
        out = subprocess.run([os.path.join(build, "bench_ffi"), uri, cfile, str(DIM), ",".join(map(str, frags))],
                             capture_output=True, text=True, check=True)
        c_times.append(float(out.stdout))
        py_times.append(statistics.median(py_build() for _ in range(5)))
    c, py = statistics.median(c_times), statistics.median(py_times)
    return {"lance-c s": c, "pylance s": py, "ratio": c / py}


def bench_ffi_train(build: str, uri: str, scratch: str) -> dict:
    """The same IVF_PQ model trained through lance-c and through pylance
    (IndicesBuilder.train_ivf then train_pq; TRAIN_ITERS iterations and the
    core's default sample rate in both),
    and the one-shot build's training phase on `scratch` (a copy: the build
    commits), interleaved, median of 5 triples; each time is the second run
    of its process."""
    builder = lance.indices.IndicesBuilder(lance.dataset(uri), "vec")

    def py_train() -> float:
        t0 = time.perf_counter()
        ivf = builder.train_ivf(num_partitions=PARTITIONS, max_iters=TRAIN_ITERS, sample_rate=PY_SAMPLE_RATE)
        builder.train_pq(ivf, num_subvectors=SUBVECTORS, max_iters=TRAIN_ITERS, sample_rate=PY_SAMPLE_RATE)
        return time.perf_counter() - t0

    py_train()
    c_times, py_times, phase_times = [], [], []
    for _ in range(PAIRS):
        out = subprocess.run([os.path.join(build, "bench_ffi"), "--train", uri, str(PARTITIONS), str(SUBVECTORS),
                              str(TRAIN_ITERS)],
                             capture_output=True, text=True, check=True)
        c_times.append(float(out.stdout))
        py_times.append(py_train())
        out = subprocess.run([os.path.join(build, "bench_ffi"), "--oneshot-train", scratch, str(PARTITIONS),
                              str(SUBVECTORS), str(TRAIN_ITERS)], capture_output=True, text=True, check=True)
        phase_times.append(float(out.stdout.split()[0]))
    c, py, phase = statistics.median(c_times), statistics.median(py_times), statistics.median(phase_times)
    return {"lance-c s": c, "pylance s": py, "ratio": c / py, "one-shot phase s": phase}


def distributed(build: str, uri: str, n: int, model: str | None) -> tuple:
    """train (unless given), n builds 2 at a time, commit; returns (wall, cpu)."""
    cpu0, t0 = children_cpu(), time.perf_counter()
    if model is None:
        model = uri + ".model"
        tool(build, "train", uri, "--column", "vec", *pq_args(), "-o", model)
    plan = json.loads(tool(build, "plan", uri, "--groups", str(n)))
    running, segs = [], []
    for i, g in enumerate(plan["groups"]):
        out = f"{uri}.seg{i}"
        segs.append(out)
        args = [os.path.join(build, "lance-index"), "build", uri, "--column", "vec", *pq_args(),
                "--fragments", ",".join(map(str, g["fragments"])), "--model", model, "-o", out, "--quiet"]
        running.append(subprocess.Popen(args))
        if len(running) == 2:
            if running.pop(0).wait() != 0:
                raise RuntimeError("a build failed")
    for p in running:
        if p.wait() != 0:
            raise RuntimeError("a build failed")
    tool(build, "commit", uri, "--name", "vec_idx", "--column", "vec", *segs)
    return time.perf_counter() - t0, children_cpu() - cpu0


def independent(build: str, uri: str, n: int) -> None:
    """n segments each trained on its own fragments, committed as one index."""
    segs = []
    for i, g in enumerate(json.loads(tool(build, "plan", uri, "--groups", str(n)))["groups"]):
        segs.append(f"{uri}.seg{i}")
        tool(build, "build", uri, "--column", "vec", *pq_args(), "--fragments", ",".join(map(str, g["fragments"])),
             "-o", segs[-1], "--quiet")
    tool(build, "commit", uri, "--name", "vec_idx", "--column", "vec", *segs, "--allow-independent-models")


def rq_merged(build: str, c_uri: str, py_uri: str, vectors: np.ndarray) -> tuple:
    """IVF_RQ (PARTITIONS partitions, 5 bits) as 4 segments of one shared
    model merged into one and committed, on two copies of the data: through
    lance-c (lance-index train --type IVF_RQ, whose model carries the
    rotation; build --model; merge; commit) and through pylance (train_ivf,
    one rabitq_model from build_rq_model, create_index_uncommitted,
    merge_existing_index_segments, commit_existing_index_segments), over the
    same fragment groups.  Returns both recalls@10 (nprobes 16, no refine:
    the quantizer shows)."""
    from lance.lance import indices as native

    model = c_uri + ".model"
    tool(build, "train", c_uri, "--column", "vec", "--type", "IVF_RQ", "--partitions", str(PARTITIONS), "-o", model)
    groups = [g["fragments"] for g in json.loads(tool(build, "plan", c_uri, "--groups", "4"))["groups"]]
    segs = []
    for i, frags in enumerate(groups):
        segs.append(f"{c_uri}.seg{i}")
        tool(build, "build", c_uri, "--column", "vec", "--model", model, "--fragments", ",".join(map(str, frags)),
             "-o", segs[-1], "--quiet")
    tool(build, "merge", c_uri, *segs, "-o", c_uri + ".merged", "--quiet")
    tool(build, "commit", c_uri, "--name", "vec_idx", "--column", "vec", c_uri + ".merged")

    ds = lance.dataset(py_uri)
    ivf = lance.indices.IndicesBuilder(ds, "vec").train_ivf(num_partitions=PARTITIONS, sample_rate=PY_SAMPLE_RATE)
    rotation = native.build_rq_model(DIM, 5)
    py_segs = [ds.create_index_uncommitted("vec", "IVF_RQ", name="vec_idx", num_partitions=PARTITIONS, num_bits=5,
                                           ivf_centroids=ivf.centroids, fragment_ids=frags, rabitq_model=rotation)
               for frags in groups]
    ds.commit_existing_index_segments("vec_idx", "vec", [ds.merge_existing_index_segments(py_segs)])
    return recall_latency(c_uri, vectors, refine=0)[0], recall_latency(py_uri, vectors, refine=0)[0]


def recall_latency(uri: str, vectors: np.ndarray, refine: int = 5) -> tuple:
    """recall@10 and median latency, nprobes 16, refine factor `refine` (0: none)."""
    ds = lance.dataset(uri)
    hits, lat = 0, []
    for q in range(QUERIES):
        row = (q * 7919 + 13) % len(vectors)
        nearest = {"column": "vec", "q": vectors[row], "k": 10, "nprobes": 16}
        if refine:
            nearest["refine_factor"] = refine
        t0 = time.perf_counter()
        t = ds.to_table(columns=["id", "_distance"], nearest=nearest)
        lat.append(time.perf_counter() - t0)
        truth = np.argsort(((vectors - vectors[row]) ** 2).sum(axis=1), kind="stable")[:10]
        hits += len(set(t.column("id").to_pylist()) & set(int(i) for i in truth))
    return hits / (10 * QUERIES), statistics.median(lat) * 1000


def text_embeddings(limit: int, work: str) -> np.ndarray:
    """Sentences from the Python standard library's sources, embedded with
    the model inside the wordllama package (offline)."""
    import sysconfig
    from pathlib import Path

    import wordllama
    from wordllama import WordLlama

    root = sysconfig.get_paths()["stdlib"]
    seen, sentences = set(), []
    for d, _, files in sorted(os.walk(root)):
        if "site-packages" in d or "test" in d:
            continue
        for f in sorted(files):
            if not f.endswith(".py"):
                continue
            with open(os.path.join(d, f), encoding="utf-8", errors="ignore") as fh:
                for line in fh:
                    t = line.strip().lstrip("#").strip()
                    if len(t.split()) >= 5 and t not in seen:
                        seen.add(t)
                        sentences.append(t)
    sentences = sentences[:limit]
    # The package ships its tokenizer under a directory name its loader does
    # not look in; hand it over through a cache directory instead.
    cache = Path(work) / "wordllama"
    target = WordLlama.get_file_path("tokenizer", cache)
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy(Path(wordllama.__file__).parent / "tokenizers" / "l2_supercat_tokenizer_config.json", target)
    model = WordLlama.load(cache_dir=cache, disable_download=True)
    return np.asarray(model.embed(sentences), dtype=np.float32)


def peak_rss(build: str, uri: str, model: str, frags: list) -> float:
    """Max RSS of one worker, in MiB.  Measured by GNU time, which forks the
    worker from its own small process: a child forked from this (large)
    Python process would count Python's pages before its exec."""
    report = uri + ".rss.txt"
    subprocess.run(["/usr/bin/time", "-f", "%M", "-o", report, os.path.join(build, "lance-index"), "build", uri,
                    "--column", "vec", *pq_args(), "--fragments", ",".join(map(str, frags)), "--model", model,
                    "-o", uri + ".rss", "--quiet"], check=True)
    with open(report) as f:
        return int(f.read().split()[-1]) / 1024


def figure(title: str, xlabel: str, ylabel: str) -> tuple:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    return fig, ax


def save(fig, out: str, name: str) -> str:
    import matplotlib.pyplot as plt

    path = os.path.join(out, name)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot(out: str, name: str, title: str, xlabel: str, ylabel: str, series: dict, logx: bool = False,
         logy: bool = False, hlines: dict | None = None) -> str:
    """Lines with markers over integer x values (log2 x: ticks at powers of
    2, written as plain numbers); hlines: label -> y of a dashed grey line,
    the label written under it."""
    from matplotlib.ticker import MaxNLocator, StrMethodFormatter

    fig, ax = figure(title, xlabel, ylabel)
    for label, (xs, ys) in series.items():
        ax.plot(xs, ys, marker="o", label=label)
    for label, y in (hlines or {}).items():
        ax.axhline(y, color="grey", linestyle="--", linewidth=1)
        ax.annotate(label, xy=(0.3, y), xycoords=("axes fraction", "data"), ha="center", va="top", fontsize=8,
                    color="dimgrey")
    if logx:
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(StrMethodFormatter("{x:g}"))
    else:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if logy:
        ax.set_yscale("log")
    ax.legend()
    return save(fig, out, name)


def bars(out: str, name: str, title: str, ylabel: str, values: dict) -> str:
    """One bar per label, its value written above it."""
    fig, ax = figure(title, "", ylabel)
    drawn = ax.bar(list(values), list(values.values()))
    ax.bar_label(drawn, fmt="%.2f")
    ax.grid(False, axis="x")
    return save(fig, out, name)


def run_csv(cmd: list, env: dict | None = None) -> list:
    """Runs a benchmark program that takes --csv (already in cmd); its human
    output goes to this process's stderr, its CSV block is returned as
    records (lists of strings).  A failure raises."""
    name = os.path.basename(cmd[0])
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    sys.stderr.write(proc.stdout.partition("# csv\n")[0])
    if proc.returncode != 0:
        raise RuntimeError(f"{name}: exit {proc.returncode}: {proc.stderr.strip()}")
    if "# csv\n" not in proc.stdout:
        raise RuntimeError(f"{name}: no CSV block in its output")
    return list(csv.reader(proc.stdout.partition("# csv\n")[2].splitlines()))


def bench_merge(build: str, rows: int) -> tuple:
    """bench_merge's layouts: (unmerged {segments: layout}, merged {(from,
    into): layout}); a layout is a dict of build_s, merge_s, ms, recall."""
    unmerged, merged = {}, {}
    for rec in run_csv([os.path.join(build, "bench_merge"), "--csv", str(rows), str(QUERIES)]):
        if rec[0] != "layout":
            continue
        layout = {"build_s": float(rec[3]), "merge_s": float(rec[4]), "ms": float(rec[5]), "recall": float(rec[6])}
        m = re.fullmatch(r"(\d+) merged -> (\d+)", rec[1])
        if m:
            merged[(int(m[1]), int(m[2]))] = layout
        else:
            unmerged[int(rec[2])] = layout
    if sorted(unmerged) != [1, 4, 16, 64] or sorted(merged) != [(16, 1), (16, 4), (64, 1), (64, 4)]:
        raise RuntimeError(f"bench_merge: unexpected layouts {sorted(unmerged)} {sorted(merged)}")
    return unmerged, merged


def bench_cancel(build: str, rows: int) -> dict:
    """Series name -> {"ms": latencies in order, "stages": the stage of each,
    "n", "finished", "median", "worst"} (one build to time, 20 cancels)."""
    series = {}
    for rec in run_csv([os.path.join(build, "bench_cancel"), "--csv", str(rows), "1", str(CANCELS)]):
        s = series.setdefault(rec[1], {"ms": [], "stages": []})
        if rec[0] == "cancel":
            s["stages"].append(rec[2])
            s["ms"].append(float(rec[3]))
        elif rec[0] == "summary":
            s.update(n=int(rec[2]), finished=int(rec[3]), median=float(rec[4]), worst=float(rec[5]))
    if sorted(series) != ["injected model", "trained locally"] or any("median" not in s for s in series.values()):
        raise RuntimeError(f"bench_cancel: a series without cancels or summary: {sorted(series)}")
    return series


def scale_bench(build: str, rows: int, dim: int, smoke: bool) -> dict:
    """bench/scale_bench.sh's figures, name -> value (its own smallest shape
    with smoke)."""
    env = dict(os.environ)
    env.setdefault("LANCE_C_PYTHON", sys.executable)
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scale_bench.sh")
    shape = ["--smoke"] if smoke else ["--rows", str(rows), "--dim", str(dim)]
    recs = run_csv([script, build, *shape, "--csv"], env)
    figures = {r[1]: float(r[2]) for r in recs if r[0] == "figure"}
    missing = {"train_s", "segments_x1_s", "segments_x2_s", "commit_s", "oneshot_s", "segment_speedup",
               "whole_build_ratio", "dist_train_x1_s", "dist_train_x2_s", "whole_build_dist_ratio",
               "recall_one_node", "recall_dist"} - set(figures)
    if missing:
        raise RuntimeError(f"scale_bench.sh: figures missing: {sorted(missing)}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--rows", type=int, default=100000)
    parser.add_argument("--text-rows", type=int, default=50000)
    parser.add_argument("--merge-rows", type=int, help="bench_merge's rows (default: --rows)")
    parser.add_argument("--cancel-rows", type=int, default=1000000, help="bench_cancel's rows (0: skip)")
    parser.add_argument("--scale-rows", type=int, default=1000000, help="scale_bench.sh's rows (0: skip)")
    parser.add_argument("--scale-dim", type=int, default=128)
    parser.add_argument("--only", default=",".join(SECTIONS), help="comma list of: " + ", ".join(SECTIONS))
    parser.add_argument("--rq-runs", type=int, default=6, help="IVF_RQ lance-c / pylance pairs in section recall")
    parser.add_argument("--out")
    parser.add_argument("--smoke", action="store_true",
                        help="every section at its smallest shape, once (sets the sizes; see the docstring)")
    args = parser.parse_args()
    only = set(args.only.split(","))
    if only - set(SECTIONS):
        parser.error(f"--only: unknown sections {', '.join(sorted(only - set(SECTIONS)))}")
    if only & {"recall", "memory"}:
        only.add("scaling")
    build = os.path.abspath(args.build)
    work = tempfile.mkdtemp(prefix="lance-c-bench-")
    if args.smoke:
        global TRAIN_ITERS, PAIRS, QUERIES, CANCELS, COMMIT_SEGMENTS, PY_SAMPLE_RATE
        TRAIN_ITERS, PAIRS, QUERIES, CANCELS, COMMIT_SEGMENTS, PY_SAMPLE_RATE = 2, 1, 10, 8, 4, 16
        args.rows = args.merge_rows = args.cancel_rows = args.scale_rows = 4096
        args.rq_runs = 1
        args.text_rows, args.scale_dim = 1200, 16  # scale_bench.sh --smoke's dimension
        args.out = args.out or os.path.join(work, "plots")
    out = os.path.abspath(args.out or os.path.join(build, "bench-plots"))
    os.makedirs(out, exist_ok=True)
    try:
        run(args, only, build, out, work)
    finally:
        shutil.rmtree(work)


def run(args: argparse.Namespace, only: set, build: str, out: str, work: str) -> None:
    """The sections of `only`, then the table; plots into `out`, scratch in `work`."""
    rows, plots = [], []
    if only & {"ffi", "scaling"}:
        vectors = make_data(args.rows)
        base = os.path.join(work, "base.lance")
        write(base, vectors)

    def copy(name: str) -> str:
        uri = os.path.join(work, name + ".lance")
        shutil.copytree(base, uri)
        return uri

    # 1. FFI cost
    if "ffi" in only:
        ffi = bench_ffi(build, work, copy("ffi"), vectors)
        rows.append(("FFI cost: IVF_FLAT segment, lance-c / pylance",
                     f"{ffi['lance-c s']:.2f} s / {ffi['pylance s']:.2f} s", f"ratio {ffi['ratio']:.2f}"))
        ffi = bench_ffi_train(build, copy("ffi-train"), copy("ffi-oneshot"))
        rows.append((f"FFI cost: IVF_PQ {PARTITIONS}x{SUBVECTORS} training ({TRAIN_ITERS} iterations), lance-c / pylance",
                     f"{ffi['lance-c s']:.2f} s / {ffi['pylance s']:.2f} s", f"ratio {ffi['ratio']:.2f}"))
        rows.append(("training: standalone / the one-shot build's training phase",
                     f"{ffi['lance-c s']:.2f} s / {ffi['one-shot phase s']:.2f} s",
                     f"ratio {ffi['lance-c s'] / ffi['one-shot phase s']:.2f}"))

    # 2. scaling (and the indices for 3 and 5)
    if "scaling" in only:
        one = copy("oneshot")
        cpu0, t0 = children_cpu(), time.perf_counter()
        tool(build, "create", one, "--column", "vec", *pq_args(), "--name", "vec_idx", "--quiet")
        one_wall, one_cpu = time.perf_counter() - t0, children_cpu() - cpu0
        rows.append(("one-shot build (lance-index create)", f"wall {one_wall:.2f} s, CPU {one_cpu:.2f} s",
                     "1.00 / 1.00"))
        scaling = {}
        uris = {}
        for n in (1, 2, 4, 8):
            uris[n] = copy(f"dist{n}")
            wall, cpu = distributed(build, uris[n], n, None)
            scaling[n] = (wall, cpu)
            rows.append((f"distributed, {n} segments (2 processes at a time)", f"wall {wall:.2f} s, CPU {cpu:.2f} s",
                         f"{wall / one_wall:.2f} / {cpu / one_cpu:.2f}"))
        uris[16] = copy("dist16")
        distributed(build, uris[16], 16, uris[4] + ".model")
        plots.append(plot(out, "scaling.png", f"Build time, {args.rows} x {DIM}", "segments", "time / one-shot",
                          {"wall": ([1, 2, 4, 8], [scaling[n][0] / one_wall for n in (1, 2, 4, 8)]),
                           "CPU": ([1, 2, 4, 8], [scaling[n][1] / one_cpu for n in (1, 2, 4, 8)])}))

    # 3. recall and latency
    if "recall" in only:
        indep = copy("indep")
        independent(build, indep, 4)
        r_one, l_one = recall_latency(one, vectors)
        rows.append(("recall@10 / latency, one-shot", f"{r_one:.3f} / {l_one:.1f} ms", ""))
        quality = {}
        for n in (1, 2, 4, 8, 16):
            quality[n] = recall_latency(uris[n], vectors)
            rows.append((f"recall@10 / latency, {n} shared-model segments",
                         f"{quality[n][0]:.3f} / {quality[n][1]:.1f} ms", f"{quality[n][0] - r_one:+.3f} vs one-shot"))
        r_ind, l_ind = recall_latency(indep, vectors)
        rows.append(("recall@10 / latency, 4 independently trained segments", f"{r_ind:.3f} / {l_ind:.1f} ms",
                     f"{r_ind - r_one:+.3f} vs one-shot"))
        # Each side trains its own IVF model: one pair differs by the
        # k-means run (+-0.03 measured), so the target is on the mean.
        pairs = [rq_merged(build, copy(f"rq-c{i}"), copy(f"rq-py{i}"), vectors) for i in range(args.rq_runs)]
        r_c, r_py = statistics.mean(p[0] for p in pairs), statistics.mean(p[1] for p in pairs)
        diffs = [c - py for c, py in pairs]
        rows.append((f"IVF_RQ {PARTITIONS} x 5 bits, 4 segments of one model merged: recall@10 (no refine), "
                     f"lance-c / pylance (one rabitq_model), mean of {len(pairs)} pairs", f"{r_c:.3f} / {r_py:.3f}",
                     f"{r_c - r_py:+.3f}, pairs {min(diffs):+.3f}..{max(diffs):+.3f} (target: mean within 0.01)"))
        plots.append(plot(out, "recall.png", "Recall@10 (nprobes 16, refine 5)", "segments", "recall@10",
                          {"shared model": ([1, 2, 4, 8, 16], [quality[n][0] for n in (1, 2, 4, 8, 16)]),
                           "one-shot": ([1, 16], [r_one, r_one]), "4 independent": ([4], [r_ind])}))
        plots.append(plot(out, "latency.png", "Query latency (median)", "segments", "ms",
                          {"shared model": ([1, 2, 4, 8, 16], [quality[n][1] for n in (1, 2, 4, 8, 16)]),
                           "one-shot": ([1, 16], [l_one, l_one])}))

        # 3b. real sentence embeddings
        t0 = time.perf_counter()
        text = text_embeddings(args.text_rows, work)
        text_base = os.path.join(work, "text.lance")
        write(text_base, text)
        rows.append((f"sentence embeddings: {len(text)} x {text.shape[1]} (WordLlama)",
                     f"{time.perf_counter() - t0:.1f} s to embed", ""))
        text_one = os.path.join(work, "text_one.lance")
        shutil.copytree(text_base, text_one)
        tool(build, "create", text_one, "--column", "vec", *pq_args(), "--name", "vec_idx", "--quiet")
        text_seg = os.path.join(work, "text_seg.lance")
        shutil.copytree(text_base, text_seg)
        distributed(build, text_seg, 4, None)
        text_ind = os.path.join(work, "text_ind.lance")
        shutil.copytree(text_base, text_ind)
        independent(build, text_ind, 4)
        t_one = recall_latency(text_one, text)
        for label, uri in (("one-shot", text_one), ("4 shared-model segments", text_seg),
                           ("4 independently trained segments", text_ind)):
            r, lat = t_one if uri == text_one else recall_latency(uri, text)
            rows.append((f"sentences: recall@10 / latency, {label}", f"{r:.3f} / {lat:.1f} ms",
                         "" if uri == text_one else f"{r - t_one[0]:+.3f} vs one-shot"))

    # 4. commit and listing against segment count
    if "commit" in only:
        lines = subprocess.run([os.path.join(build, "bench_commit_scaling"), str(COMMIT_SEGMENTS)],
                               capture_output=True, text=True,
                               check=True).stdout.strip().split("\n")[1:]
        commit_rows = [tuple(float(x) for x in line.split(",")) for line in lines]
        for seg, c, lst, _ in commit_rows:
            if seg in (1, 16, 256):
                rows.append((f"commit / listing, {int(seg)} segments", f"{c:.1f} ms / {lst:.2f} ms", ""))
        plots.append(plot(out, "commit.png", "Commit and listing time", "segments", "ms",
                          {"commit": ([r[0] for r in commit_rows], [r[1] for r in commit_rows]),
                           "segments listing": ([r[0] for r in commit_rows], [r[2] for r in commit_rows])},
                          logx=True))

    # 5. peak memory against group size
    if "memory" in only:
        model = uris[4] + ".model"
        rss = {}
        for size in (1, 2, 4, 8, 16):
            rss[size] = peak_rss(build, uris[4], model, list(range(size)))
            rows.append((f"worker peak RSS, {size} fragments ({size * args.rows // FRAGS} rows)",
                         f"{rss[size]:.0f} MiB", ""))
        plots.append(plot(out, "memory.png", "Worker peak RSS", "fragments in the group", "MiB",
                          {"max RSS": (list(rss), list(rss.values()))}))

    # 6. k-NN after merging (bench_merge)
    if "merge" in only:
        merge_rows = args.merge_rows or args.rows
        unmerged, merged = bench_merge(build, merge_rows)
        one_seg = unmerged[1]
        rows.append((f"merge: {merge_rows} x {DIM}, IVF_PQ 64 x 16, one shared model, 64 fragments", "", ""))
        for n, lay in unmerged.items():
            rows.append((f"merge: k-NN latency / recall@10, {n} segment{'s' if n > 1 else ' (one-shot stand-in)'}",
                         f"{lay['ms']:.2f} ms / {lay['recall']:.3f}",
                         f"{lay['ms'] / one_seg['ms']:.2f}x, recall {lay['recall'] - one_seg['recall']:+.3f}"))
        for (src, into), lay in merged.items():
            target = " (target <= 1.1x one-shot, recall equal)" if (src, into) == (64, 1) else ""
            rows.append((f"merge: k-NN latency / recall@10, {src} merged -> {into}",
                         f"{lay['ms']:.2f} ms / {lay['recall']:.3f}",
                         f"{lay['ms'] / one_seg['ms']:.2f}x, recall {lay['recall'] - one_seg['recall']:+.3f}" + target))
        for (src, into), lay in merged.items():
            rows.append((f"merge: merge time {src} -> {into} / build of its {src} segments / 1-segment build",
                         f"{lay['merge_s']:.2f} s / {lay['build_s']:.2f} s / {one_seg['build_s']:.2f} s",
                         f"{lay['merge_s'] / lay['build_s']:.2f} of its sources, "
                         f"{lay['merge_s'] / one_seg['build_s']:.2f} of one-shot"))
        counts = sorted(unmerged)
        plots.append(plot(out, "merge.png", f"k-NN latency after merging, {merge_rows} x {DIM}",
                          "segments (merged: before the merge)", "median latency / 1 segment",
                          {"unmerged": (counts, [unmerged[n]["ms"] / one_seg["ms"] for n in counts]),
                           "merged into 1": ([16, 64], [merged[(n, 1)]["ms"] / one_seg["ms"] for n in (16, 64)]),
                           "merged into 4": ([16, 64], [merged[(n, 4)]["ms"] / one_seg["ms"] for n in (16, 64)])},
                          logx=True, hlines={"target for 64 merged -> 1: 1.1x": 1.1}))

    # 7. cancel latency (bench_cancel)
    if "cancel" in only and args.cancel_rows > 0:
        series = bench_cancel(build, args.cancel_rows)
        rows.append((f"cancel: IVF_PQ 64 x 16 segment build, {args.cancel_rows} x 128, cancels at random points", "",
                     ""))
        for name, s in series.items():
            worst = {}
            for stage, ms in zip(s["stages"], s["ms"]):
                worst[stage] = max(worst.get(stage, 0), ms)
            rows.append((f"cancel latency, {name} ({s['n']} cancelled, {s['finished']} finished first)",
                         f"median {s['median']:.1f} ms / worst {s['worst']:.1f} ms",
                         "target at 1M rows: median <= 50 ms, worst <= 250 ms"))
            rows.append((f"cancel latency, {name}: worst by stage", "",
                         ", ".join(f"{st} {ms:.1f} ms" for st, ms in worst.items())))
        plots.append(plot(out, "cancel.png", f"Cancel latency, {args.cancel_rows} x 128, 20 random points",
                          "cancels, sorted by latency", "ms from cancel to return (log)",
                          {name: (list(range(1, s["n"] + 1)), sorted(s["ms"])) for name, s in series.items()},
                          logy=True,
                          hlines={"target median (1M rows): 50 ms": 50, "target worst (1M rows): 250 ms": 250}))

    # 8. one core per process at scale (scale_bench.sh)
    if "scale" in only and args.scale_rows > 0:
        f = scale_bench(build, args.scale_rows, args.scale_dim, args.smoke)
        dist = f["distributed_s"]
        rows.append((f"scale: {args.scale_rows} x {args.scale_dim}, IVF_PQ {f['partitions']:.0f} x "
                     f"{f['sub_vectors']:.0f}, one core per process (taskset)", "", ""))
        rows.append(("scale: train (coordinator, 1 core)",
                     f"{f['train_s']:.2f} s, peak RSS {f['train_rss_mib']:.0f} MiB", ""))
        rows.append(("scale: segment phase, 1 worker x 1 core",
                     f"{f['segments_x1_s']:.2f} s, peak RSS {f['segments_x1_rss_mib']:.0f} MiB", ""))
        rows.append(("scale: segment phase, 2 workers x 1 core each",
                     f"{f['segments_x2_s']:.2f} s, peak RSS {f['segments_x2_rss_mib_0']:.0f} / "
                     f"{f['segments_x2_rss_mib_1']:.0f} MiB",
                     f"speedup {f['segment_speedup']:.2f}x (target >= 1.8x)"))
        rows.append(("scale: commit (2 segments)", f"{f['commit_s']:.2f} s", ""))
        rows.append(("scale: one-shot build (1 core)", f"{f['oneshot_s']:.2f} s", ""))
        rows.append(("scale: distributed build (train + 2 workers + commit)", f"{dist:.2f} s",
                     f"one-shot / distributed {f['whole_build_ratio']:.2f}x"))
        rows.append(("scale: distributed training, 1 worker x 1 core", f"{f['dist_train_x1_s']:.2f} s",
                     f"{f['dist_x1_ratio']:.2f}x the one-node training (target <= 1.05)"))
        rows.append(("scale: distributed training, 2 workers x 1 core each", f"{f['dist_train_x2_s']:.2f} s",
                     f"{f['dist_x2_ratio']:.2f}x the one-node training (target <= 0.55); "
                     f"{f['dist_train_rounds']:.0f} rounds, {f['dist_train_bytes'] / 1e6:.1f} MB exchanged"))
        rows.append(("scale: whole build, distributed training + 2 workers + commit",
                     f"{f['dist_train_x2_s'] + f['segments_x2_s'] + f['commit_s']:.2f} s",
                     f"one-shot / distributed {f['whole_build_dist_ratio']:.2f}x (target >= 1.8x)"))
        rows.append(("scale: recall@10, one-node model / distributed-trained model",
                     f"{f['recall_one_node']:.3f} / {f['recall_dist']:.3f}", "target: within 0.01"))
        rows.append(("scale: k-means loss, IVF and PQ, distributed / one-node",
                     f"{f['ivf_loss_dist'] / f['ivf_loss_one_node']:.3f}x / "
                     f"{f['pq_loss_dist'] / f['pq_loss_one_node']:.3f}x", "target: within 2%"))
        plots.append(bars(out, "scale.png", f"One core per process, {args.scale_rows} x {args.scale_dim}, IVF_PQ "
                          f"{f['partitions']:.0f} x {f['sub_vectors']:.0f}", "s",
                          {"train": f["train_s"], "segments\nx1": f["segments_x1_s"],
                           "segments\nx2": f["segments_x2_s"], "commit": f["commit_s"],
                           "one-shot": f["oneshot_s"]}))

    width = max((len(r[0]) for r in rows), default=0)
    vwidth = max((len(r[1]) for r in rows), default=0)
    if only & set(SECTIONS[:5]):
        print(f"lance-c bench suite: {args.rows} x {DIM}, IVF_PQ {PARTITIONS} x {SUBVECTORS}, {FRAGS} fragments")
    else:
        print(f"lance-c bench suite: {', '.join(s for s in SECTIONS if s in only)}")
    for name, value, ratio in rows:
        print(f"  {name:<{width}}  {value:<{vwidth}}  {ratio}".rstrip())
    print("plots: " + ", ".join(plots))
    if args.smoke:
        # Each section made its plot, and each plot is a PNG image.
        for path in plots:
            with open(path, "rb") as f:
                if f.read(8) != b"\x89PNG\r\n\x1a\n":
                    raise RuntimeError(f"{path} is not a PNG image")
        made = {os.path.basename(p) for p in plots}
        expected = {"ffi": set(), "scaling": {"scaling.png"}, "recall": {"recall.png", "latency.png"},
                    "commit": {"commit.png"}, "memory": {"memory.png"}, "merge": {"merge.png"},
                    "cancel": {"cancel.png"}, "scale": {"scale.png"}}
        missing = set().union(*(expected[s] for s in only)) - made
        if missing:
            raise RuntimeError(f"plots missing: {sorted(missing)}")
        print(f"smoke: {len(rows)} rows, {len(plots)} plots")


if __name__ == "__main__":
    main()
