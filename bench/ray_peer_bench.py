"""The Ray example against lance-ray 0.5.0: one distributed IVF_PQ build, side by side.

    python bench/ray_peer_bench.py PATH-TO-lance-index [--seeds N] [--rows N] [--smoke] [--json]

For each seed s (1..N, default 5) it generates N x 128 float32 vectors as
examples/ray_build.py does (64 clusters), seeded with s, and writes them
twice, one dataset per system, each in 16 fragments.  On each it builds an
IVF_PQ index (256 partitions x 16 sub-vectors, column vec, 2 workers), each
system in a process of its own that starts a local Ray with 2 CPUs:

- ours: examples/ray_build.py --uri DATASET --workers 2 (the lance-index
  tool in Ray tasks; training as its --training auto chooses);
- lance-ray: lance_ray.create_index(uri, column="vec", index_type="IVF_PQ",
  num_workers=2, num_partitions=256, num_sub_vectors=16), which trains the
  IVF centroids and the PQ codebook on the driver, builds one segment per
  fragment batch in a Ray pool of 2 actors, and commits on the driver.

Each build is timed inside its process from after Ray is up to the index
committed (training, segments, commit).  The two systems take turns going
first.  Recall@10 of both indices is measured the same way, here, with
pylance: 100 queries drawn from the data, k 10, nprobes 16, no refine,
against the exact top 10 by numpy.  It prints one row per build and a
summary (median and mean time per system, ours over lance-ray per seed and
the median, mean recall and the difference), with --json also as one JSON
line, the last.  No figure is checked: the exit status says only that
every build ran.

lance-ray runs in its own environment, LANCE_RAY_VENV (created on first use
with this Python's interpreter and pip: lance-ray 0.5.0 with pylance 14.0.2
and Ray 2.60.0), through this file's --lance-ray-build mode.

--smoke: 20,000 rows, 16 partitions, 1 seed (lance-ray's sample rate
lowered to the rows / 256 its PQ check allows), in seconds once the
environment is there; its figures mean nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa

import lance

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LANCE_RAY_VENV = os.path.expanduser("~/.cache/lance-c/lance-ray-venv")
PINS = {"lance-ray": "0.5.0", "pylance": "14.0.2", "ray": "2.60.0"}
DIM = 128
SUB_VECTORS = 16
WORKERS = 2
FRAGMENTS = 16
QUERIES = 100
K = 10
NPROBES = 16
# lance-ray's default: rows sampled per IVF partition and per PQ centroid.
LANCE_RAY_SAMPLE_RATE = 256


def lance_ray_build(argv: list) -> None:
    """The lance-ray side, run in LANCE_RAY_VENV: start Ray as
    examples/ray_build.py does without --address, build, print the time."""
    parser = argparse.ArgumentParser(prog="ray_peer_bench.py --lance-ray-build")
    parser.add_argument("uri")
    parser.add_argument("--partitions", type=int, required=True)
    parser.add_argument("--sample-rate", type=int, default=LANCE_RAY_SAMPLE_RATE)
    args = parser.parse_args(argv)
    import lance_ray
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    t0 = time.time()
    lance_ray.create_index(args.uri, column="vec", index_type="IVF_PQ", name="vec_idx", num_workers=WORKERS,
                           num_partitions=args.partitions, num_sub_vectors=SUB_VECTORS,
                           sample_rate=args.sample_rate)
    print(f"lance-ray: trained, built and committed: {time.time() - t0:.2f} s")
    ray.shutdown()


def lance_ray_python() -> str:
    """LANCE_RAY_VENV's interpreter, the environment created or repaired
    first when it lacks the pinned versions."""
    python = os.path.join(LANCE_RAY_VENV, "bin", "python")
    check = ("import sys, importlib.metadata as m; "
             f"sys.exit(any(m.version(p) != v for p, v in {PINS!r}.items()))")
    if os.path.exists(python) and subprocess.run([python, "-c", check], capture_output=True).returncode == 0:
        return python
    print(f"installing lance-ray {PINS['lance-ray']} (pylance {PINS['pylance']}, Ray {PINS['ray']}) into "
          f"{LANCE_RAY_VENV}", file=sys.stderr, flush=True)
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", LANCE_RAY_VENV], check=True)
    subprocess.run([python, "-m", "pip", "install", "-q", *(f"{p}=={v}" for p, v in PINS.items())], check=True)
    subprocess.run([python, "-c", check], check=True)
    return python


def clustered_vectors(seed: int, rows: int) -> np.ndarray:
    """examples/ray_build.py's data, seeded with `seed`."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-10, 10, (64, DIM)).astype(np.float32)
    return centres[rng.integers(0, 64, rows)] + rng.normal(0, 2, (rows, DIM)).astype(np.float32)


def write_dataset(uri: str, vectors: np.ndarray) -> None:
    rows = len(vectors)
    lance.write_dataset(pa.table({"id": np.arange(rows, dtype=np.int64),
                                  "vec": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), DIM)}),
                        uri, max_rows_per_file=-(-rows // FRAGMENTS))


def exact_top_k(vectors: np.ndarray, queries: np.ndarray) -> list:
    """The exact top K row ids per query: candidates by float32 dot products
    over row blocks, then ranked by float64 distances (ties by id)."""
    norms = np.einsum("ij,ij->i", vectors, vectors, dtype=np.float64)
    spare = K + 40
    candidates = []
    for start in range(0, len(vectors), 65536):
        block = vectors[start:start + 65536]
        approx = norms[start:start + 65536, None] - 2.0 * (block @ queries.T)
        keep = min(spare, len(block))
        candidates.append(start + np.argpartition(approx, keep - 1, axis=0)[:keep])
    candidates = np.concatenate(candidates)
    truth = []
    for j, q in enumerate(queries.astype(np.float64)):
        ids = np.unique(candidates[:, j])
        d = ((vectors[ids].astype(np.float64) - q) ** 2).sum(axis=1)
        truth.append(set(int(i) for i in ids[np.lexsort((ids, d))[:K]]))
    return truth


def recall_at_k(uri: str, queries: np.ndarray, truth: list) -> float:
    ds = lance.dataset(uri)
    hits = 0
    for q, want in zip(queries, truth):
        got = ds.to_table(columns=["id"], nearest={"column": "vec", "q": q, "k": K, "nprobes": NPROBES},
                          disable_scoring_autoprojection=True)
        hits += len(want & set(got.column("id").to_pylist()))
    return hits / (K * len(queries))


def index_shape(uri: str) -> str:
    """The committed index as pylance sees it: type, partitions, segments."""
    stats = lance.dataset(uri).stats.index_stats("vec_idx")
    partitions = sorted({i["num_partitions"] for i in stats["indices"]})
    return f"{stats['index_type']} {'/'.join(map(str, partitions))} partitions, {stats['num_segments']} segments"


def run_timed(cmd: list, pattern: str) -> tuple:
    """Run one build process; its time (the figure its line `pattern`
    reports) and its whole stdout."""
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:2])} exited with {proc.returncode}:\n{proc.stdout}{proc.stderr}")
    found = re.search(pattern, proc.stdout, re.MULTILINE)
    if not found:
        raise RuntimeError(f"{' '.join(cmd[:2])} printed no line matching {pattern!r}:\n{proc.stdout}")
    return float(found.group(1)), proc.stdout


def build_ours(tool: str, uri: str, partitions: int) -> tuple:
    seconds, out = run_timed([sys.executable, os.path.join(ROOT, "examples", "ray_build.py"), tool, "--uri", uri,
                              "--workers", str(WORKERS), "--partitions", str(partitions), "--index-type", "IVF_PQ"],
                             r"^Ray: trained, built .*: ([0-9.]+) s$")
    choice = next((json.loads(line) for line in out.splitlines() if '"training-choice"' in line), {})
    return seconds, f"training {choice.get('training', '?')}"


def build_lance_ray(python: str, uri: str, partitions: int, sample_rate: int) -> tuple:
    seconds, _ = run_timed([python, os.path.abspath(__file__), "--lance-ray-build", uri, "--partitions",
                            str(partitions), "--sample-rate", str(sample_rate)],
                           r"^lance-ray: trained, built and committed: ([0-9.]+) s$")
    return seconds, f"training on the driver, sample rate {sample_rate}"


def main() -> None:
    if sys.argv[1:2] == ["--lance-ray-build"]:
        lance_ray_build(sys.argv[2:])
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("tool", help="the lance-index program")
    parser.add_argument("--seeds", type=int, default=5, help="seeds 1..N, one dataset pair and two builds each")
    parser.add_argument("--rows", type=int, default=500000)
    parser.add_argument("--partitions", type=int, default=256)
    parser.add_argument("--smoke", action="store_true", help="20,000 rows, 16 partitions, 1 seed")
    parser.add_argument("--json", action="store_true", help="also print the summary as one JSON line, the last")
    args = parser.parse_args()
    # The index statistics without the centroids (pylance warns otherwise).
    os.environ["LANCE_INCLUDE_VECTOR_CENTROIDS"] = "false"
    if args.smoke:
        args.seeds, args.rows, args.partitions = 1, 20000, 16
    tool = os.path.abspath(args.tool)
    python = lance_ray_python()
    # lance-ray refuses a PQ sample of more rows than the dataset has
    # (256 centroids x sample rate); its default where the rows allow it.
    sample_rate = min(LANCE_RAY_SAMPLE_RATE, args.rows // 256)
    print(f"{args.rows} x {DIM} in {FRAGMENTS} fragments, IVF_PQ {args.partitions} x {SUB_VECTORS}, {WORKERS} "
          f"workers, Ray local with 2 CPUs; recall@{K} of {QUERIES} queries, nprobes {NPROBES}, no refine")
    print(f"{'seed':>4}  {'system':<9} {'order':>5} {'build s':>8} {'recall':>7}  index / notes")

    runs = []
    for seed in range(1, args.seeds + 1):
        vectors = clustered_vectors(seed, args.rows)
        rows = np.random.default_rng([seed, 1]).choice(args.rows, QUERIES, replace=False)
        queries = vectors[rows]
        truth = exact_top_k(vectors, queries)
        work = tempfile.mkdtemp(prefix="ray-peer-")
        try:
            systems = {
                "ours": lambda uri: build_ours(tool, uri, args.partitions),
                "lance-ray": lambda uri: build_lance_ray(python, uri, args.partitions, sample_rate),
            }
            order = ["ours", "lance-ray"] if seed % 2 else ["lance-ray", "ours"]
            uris = {}
            for system in order:
                uris[system] = os.path.join(work, f"{system}.lance")
                write_dataset(uris[system], vectors)
            for position, system in enumerate(order, 1):
                seconds, notes = systems[system](uris[system])
                recall = recall_at_k(uris[system], queries, truth)
                runs.append({"seed": seed, "system": system, "order": position, "build_s": seconds,
                             "recall": recall})
                print(f"{seed:>4}  {system:<9} {position:>5} {seconds:>8.2f} {recall:>7.3f}  "
                      f"{index_shape(uris[system])}; {notes}", flush=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def of(system: str, key: str) -> list:
        return [r[key] for r in runs if r["system"] == system]

    ratios = [o / p for o, p in zip(of("ours", "build_s"), of("lance-ray", "build_s"))]
    summary = {"rows": args.rows, "partitions": args.partitions, "sub_vectors": SUB_VECTORS, "workers": WORKERS,
               "seeds": args.seeds}
    for system, key in (("ours", "ours"), ("lance-ray", "lance_ray")):
        summary[f"{key}_median_s"] = statistics.median(of(system, "build_s"))
        summary[f"{key}_mean_s"] = statistics.mean(of(system, "build_s"))
        summary[f"{key}_mean_recall"] = statistics.mean(of(system, "recall"))
    summary["ratio_per_seed"] = [round(r, 3) for r in ratios]
    summary["ratio_median"] = statistics.median(ratios)
    summary["recall_difference"] = summary["ours_mean_recall"] - summary["lance_ray_mean_recall"]
    print(f"build s, median / mean: ours {summary['ours_median_s']:.2f} / {summary['ours_mean_s']:.2f}, "
          f"lance-ray {summary['lance_ray_median_s']:.2f} / {summary['lance_ray_mean_s']:.2f}")
    print(f"ours / lance-ray: per seed {', '.join(f'{r:.2f}' for r in ratios)}; "
          f"median {summary['ratio_median']:.2f} (issue 42's target: <= 1)")
    print(f"recall@{K}, mean: ours {summary['ours_mean_recall']:.3f}, lance-ray "
          f"{summary['lance_ray_mean_recall']:.3f}, difference {summary['recall_difference']:+.3f} "
          f"(target: within 0.01)")
    if args.json:
        print(json.dumps(summary))


if __name__ == "__main__":
    main()
