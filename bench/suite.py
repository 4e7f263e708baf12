"""The benchmark suite: what distributing an index build buys, in one run.

    python bench/suite.py BUILD_DIR [--rows N] [--out DIR]

BUILD_DIR holds lance-index, bench_ffi and bench_commit_scaling (scripts/
bench.sh suite builds them and runs this).  Prints one table and writes PNG
plots to --out (default BUILD_DIR/bench-plots):

1. FFI cost: the same IVF_FLAT segment (same fragments, same centroids)
   built through lance-c and through pylance, and the same IVF_PQ model
   trained through both, interleaved, median of 5 pairs each.
2. Scaling: the one-shot build against the distributed loop (train, N
   segment builds as processes, 2 at a time, commit) for N = 1, 2, 4, 8:
   wall time and CPU time, as ratios to one-shot.
3. Recall@10 and query latency (100 queries, nprobes 16, refine 5) of the
   one-shot index, of 1, 2, 4, 8, 16 shared-model segments, and of 4
   independently trained segments; then the same (one-shot, 4 shared, 4
   independent) on real sentence embeddings: the comment and docstring
   lines of this machine's Python standard library, embedded with the
   WordLlama model that ships inside the `wordllama` package (256-d; no
   download: the package's own weights and tokenizer are used).
4. Commit time and listing time against the segment count, 1 to 256.
5. Peak memory (max RSS) of a worker process against its group's size.
IVF_PQ 64 partitions x 16 sub-vectors over N x 128 clustered vectors in 16
fragments (default N = 100000).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time

import numpy as np
import pyarrow as pa

import lance

DIM, FRAGS, PARTITIONS, SUBVECTORS = 128, 16, 64, 16


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
    for _ in range(5):
        out = subprocess.run([os.path.join(build, "bench_ffi"), uri, cfile, str(DIM), ",".join(map(str, frags))],
                             capture_output=True, text=True, check=True)
        c_times.append(float(out.stdout))
        t0 = time.perf_counter()
        ds.create_index_uncommitted("vec", "IVF_FLAT", num_partitions=PARTITIONS, ivf_centroids=centroids,
                                    fragment_ids=frags)
        py_times.append(time.perf_counter() - t0)
    c, py = statistics.median(c_times), statistics.median(py_times)
    return {"lance-c s": c, "pylance s": py, "ratio": c / py}


def bench_ffi_train(build: str, uri: str) -> dict:
    """The same IVF_PQ model trained through lance-c and through pylance
    (IndicesBuilder.train_ivf then train_pq, the core's defaults in both),
    interleaved, median of 5 pairs; each side's time is its second run."""
    builder = lance.indices.IndicesBuilder(lance.dataset(uri), "vec")

    def py_train() -> float:
        t0 = time.perf_counter()
        ivf = builder.train_ivf(num_partitions=PARTITIONS)
        builder.train_pq(ivf, num_subvectors=SUBVECTORS)
        return time.perf_counter() - t0

    py_train()
    c_times, py_times = [], []
    for _ in range(5):
        out = subprocess.run([os.path.join(build, "bench_ffi"), "--train", uri, str(PARTITIONS), str(SUBVECTORS)],
                             capture_output=True, text=True, check=True)
        c_times.append(float(out.stdout))
        py_times.append(py_train())
    c, py = statistics.median(c_times), statistics.median(py_times)
    return {"lance-c s": c, "pylance s": py, "ratio": c / py}


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


def recall_latency(uri: str, vectors: np.ndarray) -> tuple:
    ds = lance.dataset(uri)
    hits, lat = 0, []
    for q in range(100):
        row = (q * 7919 + 13) % len(vectors)
        t0 = time.perf_counter()
        t = ds.to_table(columns=["id", "_distance"],
                        nearest={"column": "vec", "q": vectors[row], "k": 10, "nprobes": 16, "refine_factor": 5})
        lat.append(time.perf_counter() - t0)
        truth = np.argsort(((vectors - vectors[row]) ** 2).sum(axis=1), kind="stable")[:10]
        hits += len(set(t.column("id").to_pylist()) & set(int(i) for i in truth))
    return hits / 1000, statistics.median(lat) * 1000


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


def plot(out: str, name: str, title: str, xlabel: str, ylabel: str, series: dict, logx: bool = False) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for label, (xs, ys) in series.items():
        ax.plot(xs, ys, marker="o", label=label)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if logx:
        ax.set_xscale("log", base=2)
    ax.grid(True, alpha=0.3)
    ax.legend()
    path = os.path.join(out, name)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--rows", type=int, default=100000)
    parser.add_argument("--text-rows", type=int, default=50000)
    parser.add_argument("--out")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    out = os.path.abspath(args.out or os.path.join(build, "bench-plots"))
    os.makedirs(out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="lance-c-bench-")
    vectors = make_data(args.rows)
    base = os.path.join(work, "base.lance")
    write(base, vectors)
    rows = []

    def copy(name: str) -> str:
        uri = os.path.join(work, name + ".lance")
        shutil.copytree(base, uri)
        return uri

    # 1. FFI cost
    ffi = bench_ffi(build, work, copy("ffi"), vectors)
    rows.append(("FFI cost: IVF_FLAT segment, lance-c / pylance", f"{ffi['lance-c s']:.2f} s / {ffi['pylance s']:.2f} s",
                 f"ratio {ffi['ratio']:.2f}"))
    ffi = bench_ffi_train(build, copy("ffi-train"))
    rows.append((f"FFI cost: IVF_PQ {PARTITIONS}x{SUBVECTORS} training, lance-c / pylance",
                 f"{ffi['lance-c s']:.2f} s / {ffi['pylance s']:.2f} s", f"ratio {ffi['ratio']:.2f}"))

    # 2. scaling (and the indices for 3)
    one = copy("oneshot")
    cpu0, t0 = children_cpu(), time.perf_counter()
    tool(build, "create", one, "--column", "vec", *pq_args(), "--name", "vec_idx", "--quiet")
    one_wall, one_cpu = time.perf_counter() - t0, children_cpu() - cpu0
    rows.append(("one-shot build (lance-index create)", f"wall {one_wall:.2f} s, CPU {one_cpu:.2f} s", "1.00 / 1.00"))
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

    # 3. recall and latency
    indep = copy("indep")
    independent(build, indep, 4)
    r_one, l_one = recall_latency(one, vectors)
    rows.append(("recall@10 / latency, one-shot", f"{r_one:.3f} / {l_one:.1f} ms", ""))
    quality = {}
    for n in (1, 2, 4, 8, 16):
        quality[n] = recall_latency(uris[n], vectors)
        rows.append((f"recall@10 / latency, {n} shared-model segments", f"{quality[n][0]:.3f} / {quality[n][1]:.1f} ms",
                     f"{quality[n][0] - r_one:+.3f} vs one-shot"))
    r_ind, l_ind = recall_latency(indep, vectors)
    rows.append(("recall@10 / latency, 4 independently trained segments", f"{r_ind:.3f} / {l_ind:.1f} ms",
                 f"{r_ind - r_one:+.3f} vs one-shot"))

    # 3b. real sentence embeddings
    t0 = time.perf_counter()
    text = text_embeddings(args.text_rows, work)
    text_base = os.path.join(work, "text.lance")
    write(text_base, text)
    rows.append((f"sentence embeddings: {len(text)} x {text.shape[1]} (WordLlama)", f"{time.perf_counter() - t0:.1f} s to embed", ""))
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
    csv = subprocess.run([os.path.join(build, "bench_commit_scaling")], capture_output=True, text=True,
                         check=True).stdout.strip().split("\n")[1:]
    commit_rows = [tuple(float(x) for x in line.split(",")) for line in csv]
    for s, c, l, _ in commit_rows:
        if s in (1, 16, 256):
            rows.append((f"commit / listing, {int(s)} segments", f"{c:.1f} ms / {l:.2f} ms", ""))

    # 5. peak memory against group size
    model = uris[4] + ".model"
    rss = {}
    for size in (1, 2, 4, 8, 16):
        rss[size] = peak_rss(build, uris[4], model, list(range(size)))
        rows.append((f"worker peak RSS, {size} fragments ({size * args.rows // FRAGS} rows)", f"{rss[size]:.0f} MiB", ""))

    plots = [
        plot(out, "scaling.png", f"Build time, {args.rows} x {DIM}", "segments", "time / one-shot",
             {"wall": ([1, 2, 4, 8], [scaling[n][0] / one_wall for n in (1, 2, 4, 8)]),
              "CPU": ([1, 2, 4, 8], [scaling[n][1] / one_cpu for n in (1, 2, 4, 8)])}),
        plot(out, "recall.png", "Recall@10 (nprobes 16, refine 5)", "segments", "recall@10",
             {"shared model": ([1, 2, 4, 8, 16], [quality[n][0] for n in (1, 2, 4, 8, 16)]),
              "one-shot": ([1, 16], [r_one, r_one]), "4 independent": ([4], [r_ind])}),
        plot(out, "latency.png", "Query latency (median)", "segments", "ms",
             {"shared model": ([1, 2, 4, 8, 16], [quality[n][1] for n in (1, 2, 4, 8, 16)]),
              "one-shot": ([1, 16], [l_one, l_one])}),
        plot(out, "commit.png", "Commit and listing time", "segments", "ms",
             {"commit": ([r[0] for r in commit_rows], [r[1] for r in commit_rows]),
              "segments listing": ([r[0] for r in commit_rows], [r[2] for r in commit_rows])}, logx=True),
        plot(out, "memory.png", "Worker peak RSS", "fragments in the group", "MiB",
             {"max RSS": (list(rss), list(rss.values()))}),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"lance-c bench suite: {args.rows} x {DIM}, IVF_PQ {PARTITIONS} x {SUBVECTORS}, {FRAGS} fragments")
    for name, value, ratio in rows:
        print(f"  {name:<{width}}  {value:<30} {ratio}")
    print("plots: " + ", ".join(plots))
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
