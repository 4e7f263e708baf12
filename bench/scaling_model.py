"""The scaling model of a distributed index build, calibrated on
bench/scaling_bench.sh's measurements, checked against every run measured,
then projected to clusters and tables this machine cannot hold.

    python bench/scaling_model.py MEASUREMENTS.jsonl [--out DIR]

The model, per phase (N rows of D dimensions, K partitions, W workers):

  training  (the distributed training's rounds, lance.h "distributed
            training"): the workers' compute, c_ivf * S * D * L + c_pq * P *
            D, divided among the workers that run at once (min(W, cores) on
            one machine, W on a cluster), where S = min(N, 256 K) is the IVF
            sample, L the levels of the core's hierarchy (1 up to 256
            partitions, else ceil(log16 K)), P = min(N, 65,536) the PQ
            sample; plus, every round, the coordinator's share: reducing W
            statistics (r * K * D per worker) and moving W requests and
            statistics (b * K * D bytes per worker) over its link.  The
            rounds: the measured rounds per level (levels + 1 for PQ).  The
            sample's read: S * D * 4 bytes over the workers' links.
  segments  one segment per worker over N / W rows: N * D * (a + e * K)
            seconds of one core's work (the IVF assignment grows with K),
            divided by W, or the worker's share of the table read over its
            link if that takes longer (reads overlap the build).
  commit    0.2 s + 6.8 ms per segment (the initial commit of 256 segments
            on s3://: 1.62-1.75 s, docs/measurements.md "Index maintenance
            at scale").

Calibration: c_ivf, c_pq, r, b and the rounds per level from the runs with
one worker (their time to the end of the IVF phases separates c_ivf from
c_pq), a and e from the one-node segment builds.  Every distributed run is
then predicted from those constants alone, on this machine's cores, and the
error printed: the runs with 2 and 4 workers are a test of the model, not a
fit.  Assumptions of the projection, printed with it: a worker per node with
one core's speed of this machine (x86-64-v3), workers and coordinator
linked at 1 or 10 Gbit/s, the table on object storage read at link speed,
K = the power of two nearest sqrt(N) capped at 16,384 (Lance's rule of
thumb), IVF_PQ with D / 8 sub-vectors of 8 bits.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
from typing import Dict, List

LOCAL_BYTES_PER_S = 2e9  # files in the page cache between processes of one machine
COMMIT_FIXED_S, COMMIT_PER_SEGMENT_S = 0.2, 1.75 / 256


def levels(k: int) -> int:
    """The k-means levels of a training: the core's hierarchy above 256."""
    return 1 if k <= 256 else math.ceil(math.log(k, 16) - 1e-9)


def ivf_sample(n: float, k: int) -> float:
    return min(n, 256.0 * k)


def pq_sample(n: float) -> float:
    return min(n, 65536.0)


class Model:
    def __init__(self, runs: List[dict]) -> None:
        ones = [r for r in runs if r["kind"] == "distributed" and r["workers"] == 1]
        if not ones:
            raise SystemExit("scaling_model: no distributed run with one worker to calibrate on")
        c_ivf, c_pq, red, byt, per_level = [], [], [], [], []
        for r in ones:
            n, d, k, rounds = r["rows"], r["dim"], r["partitions"], r["rounds"]
            overhead = r["reduce_s"] + r["bytes"] / LOCAL_BYTES_PER_S
            work = 1 - overhead / r["train_s"]
            c_ivf.append(r["ivf_s"] * work / (ivf_sample(n, k) * d * levels(k)))
            c_pq.append((r["train_s"] - r["ivf_s"]) * work / (pq_sample(n) * d))
            red.append(r["reduce_s"] / rounds / (k * d))
            byt.append(r["bytes"] / rounds / (k * d))
            per_level.append(rounds / (levels(k) + 1))
        self.c_ivf, self.c_pq = statistics.mean(c_ivf), statistics.mean(c_pq)
        self.r, self.b = statistics.mean(red), statistics.mean(byt)
        self.rounds_per_level = statistics.mean(per_level)
        # Segments: seconds = rows * dim * (a + e * K), least squares over
        # the one-node builds (e = 0 with a single partition count).
        seg = [(r["rows"] * r["dim"], r["partitions"], r["segment_s"]) for r in runs if r["kind"] == "one_node"]
        if not seg:
            raise SystemExit("scaling_model: no one-node segment build to calibrate on")
        ks = {k for _, k, _ in seg}
        if len(ks) == 1:
            self.a, self.e = statistics.mean(s / x for x, _, s in seg), 0.0
        else:
            # Minimizes sum((s/x - a - e k)^2).
            ys = [s / x for x, _, s in seg]
            xs = [float(k) for _, k, _ in seg]
            mx, my = statistics.mean(xs), statistics.mean(ys)
            self.e = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
            self.a = my - self.e * mx

    def rounds(self, k: int) -> float:
        return self.rounds_per_level * (levels(k) + 1)

    def train(self, n: float, d: int, k: int, w: int, parallel: int, link_bytes_per_s: float) -> Dict[str, float]:
        compute = (self.c_ivf * ivf_sample(n, k) * d * levels(k) + self.c_pq * pq_sample(n) * d) / parallel
        rounds = self.rounds(k)
        coordinator = rounds * (self.r * k * d * w + self.b * k * d * w / link_bytes_per_s)
        return {"compute": compute, "coordinator": coordinator, "total": compute + coordinator, "rounds": rounds}

    def segments(self, n: float, d: int, k: int, w: int, parallel: int, link_bytes_per_s: float) -> float:
        build = n * d * (self.a + self.e * k) / parallel
        read = n * d * 4 / w / link_bytes_per_s
        return max(build, read)


def nearest_partitions(n: float) -> int:
    return min(16384, 2 ** round(math.log2(math.sqrt(n))))


def human(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.2f} h"


def validate(model: Model, runs: List[dict]) -> List[tuple]:
    print("the model against every distributed run measured (this machine's cores; workers beyond them share)")
    print(f"  {'rows':>9} {'dim':>4} {'K':>5} {'workers':>7} {'measured':>9} {'predicted':>9} {'error':>7}")
    out = []
    for r in runs:
        if r["kind"] != "distributed":
            continue
        w = r["workers"]
        p = model.train(r["rows"], r["dim"], r["partitions"], w, min(w, r["cores"]), LOCAL_BYTES_PER_S)["total"]
        err = p / r["train_s"] - 1
        out.append((r, p, err))
        print(f"  {r['rows']:>9} {r['dim']:>4} {r['partitions']:>5} {w:>7} {r['train_s']:>8.2f}s {p:>8.2f}s {err:>+6.1%}")
    worst = max(abs(e) for _, _, e in out)
    print(f"  largest error {worst:.1%} (target: within 15%)")
    return out


def project(model: Model) -> List[dict]:
    rows = []
    print("\nprojection: whole build = distributed training + segment phase + commit, one worker per node")
    print("  (assumptions: see the module's text; K = power of two nearest sqrt(N), at most 16,384)")
    print(f"  {'rows':>6} {'dim':>4} {'K':>6} {'link':>8} {'workers':>7} {'training':>10} {'coord.':>7} "
          f"{'segments':>10} {'commit':>7} {'whole':>10} {'vs 1 worker':>11}")
    for d in (128, 768):
        for n in (1e7, 1e8, 1e9):
            k = nearest_partitions(n)
            for gbit in (1, 10):
                link = gbit * 1e9 / 8
                base = None
                for w in (1, 8, 16, 32, 64):
                    t = model.train(n, d, k, w, w, link)
                    read = ivf_sample(n, k) * d * 4 / w / link
                    seg = model.segments(n, d, k, w, w, link)
                    commit = COMMIT_FIXED_S + COMMIT_PER_SEGMENT_S * w
                    whole = t["total"] + read + seg + commit
                    base = whole if w == 1 else base
                    row = {"rows": n, "dim": d, "partitions": k, "gbit": gbit, "workers": w,
                           "training_s": t["total"] + read, "coordinator_s": t["coordinator"], "segments_s": seg,
                           "commit_s": commit, "whole_s": whole, "speedup": base / whole}
                    rows.append(row)
                    if w == 1:
                        continue
                    share = t["coordinator"] / whole
                    print(f"  {n:>6.0e} {d:>4} {k:>6} {gbit:>3} Gb/s {w:>7} {human(row['training_s']):>10} "
                          f"{share:>6.1%} {human(seg):>10} {human(commit):>7} {human(whole):>10} {base / whole:>10.1f}x")
    return rows


def published(model: Model) -> None:
    print("\nagainst published figures (different index types, hardware and storage: orders of magnitude only)")
    link = 10e9 / 8
    n, d, k, w = 1.28e6, 2048, 1000, 4
    t = model.train(n, d, k, w, w, link)["total"] + ivf_sample(n, k) * d * 4 / w / link
    seg = model.segments(n, d, k, w, w, link)
    print(f"  lance#5117 (1.28M x 2048, 1,000 partitions, IVF_SQ on S3, 4 workers): 149 -> 37 min, with 11 min of "
          f"one-node training; the model (IVF_PQ, 10 Gbit/s): training {human(t)} on the 4 workers, segments "
          f"{human(seg)}")
    n, k, w = 5e7, 1 << 20, 64
    t = model.train(n, 128, k, w, w, link)["total"]
    print(f"  FAISS distributed k-means (1M centroids from 50M points, 899 s): the model at 128 dimensions, 64 workers "
          f"(outside the measured range: {levels(k)} levels): {human(t)}")


def plot(rows: List[dict], checks: List[tuple], out: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for d, style in ((128, "-"), (768, "--")):
        for n in (1e7, 1e8, 1e9):
            pts = [r for r in rows if r["dim"] == d and r["rows"] == n and r["gbit"] == 10]
            axes[0].plot([r["workers"] for r in pts], [r["whole_s"] / 60 for r in pts], style, marker="o",
                         label=f"{n:.0e} x {d}")
    axes[0].set(xscale="log", yscale="log", xlabel="workers", ylabel="whole build (min)",
                title="projected whole build, 10 Gbit/s")
    axes[0].legend(fontsize=8)
    measured = [r["train_s"] for r, _, _ in checks]
    predicted = [p for _, p, _ in checks]
    axes[1].scatter(measured, predicted)
    top = max(measured + predicted) * 1.1
    axes[1].plot([0, top], [0, top], "k:")
    axes[1].set(xlabel="measured training (s)", ylabel="predicted (s)", title="the model against this machine")
    fig.tight_layout()
    path = os.path.join(out, "scaling_model.png")
    fig.savefig(path, dpi=100)
    print(f"\nplot: {path}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("measurements")
    parser.add_argument("--out", default=None, help="where the plot and projection.json go")
    args = parser.parse_args()
    with open(args.measurements) as f:
        runs = [json.loads(line) for line in f if line.strip()]
    model = Model(runs)
    print(f"calibrated: c_ivf {model.c_ivf:.3e} s per sample row x dim x level, c_pq {model.c_pq:.3e} s per PQ row x "
          f"dim, reduce {model.r:.3e} s and {model.b:.2f} bytes per worker x K x dim a round, "
          f"{model.rounds_per_level:.1f} rounds per level; segments {model.a:.3e} + {model.e:.3e} K s per row x dim")
    checks = validate(model, runs)
    rows = project(model)
    published(model)
    if args.out:
        with open(os.path.join(args.out, "projection.json"), "w") as f:
            json.dump(rows, f, indent=1)
        plot(rows, checks, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
