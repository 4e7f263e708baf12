"""The FAISS side of bench/faiss_bench.sh, and the evaluation both sides
share.  Runs in the bench's own environment (faiss-cpu, numpy and pylance:
faiss_bench.sh --setup makes it); every mode takes the bench's work
directory, where faiss_bench.sh wrote the table `vectors.lance`.

    faiss_side.py read WORK
        The table's rows into numpy once, in id order (vectors.npy), timed
        (printed: "SECONDS"); then the fixed probe (every 10th of the first
        200,000 rows, at most 20,000), the 100 queries drawn from it (as
        scale_bench.sh draws them) and their exact 10 nearest ids over every
        row (probe.npy, queries.npy, truth.npy; not timed).
    faiss_side.py train WORK NAME --threads T --partitions K --sub-vectors M
                        --sample-rate S [--iterations I]
        Trains FAISS's IndexIVFPQ (K lists, M sub-vectors of 8 bits, L2) on
        min(rows, K * S) rows drawn from vectors.npy with a fixed seed, each
        k-means (the coarse quantizer's and every PQ sub-quantizer's) run
        for exactly I iterations (without --iterations: FAISS's defaults),
        with T OpenMP threads; writes the model as NAME.centroids.f32 and
        NAME.codebook.f32 (the layout `bench_train --values` writes); then
        adds every row behind an IndexRefineFlat (k_factor 5) and measures
        recall@10 of the 100 queries at nprobe 16.  Prints "LOAD_S TRAIN_S
        ADD_S RECALL" (the load of vectors.npy is not training).
    faiss_side.py recall WORK DATASET
        recall@10 of the same queries against the index `vec_idx` of the
        Lance dataset DATASET (pylance, nprobes 16, refine factor 5).
    faiss_side.py loss WORK DIM PARTITIONS SUB_VECTORS BITS NAME...
        For each model NAME (its two .f32 files in WORK), "NAME IVF_LOSS
        PQ_LOSS" on the probe: the squared distance of each row to its
        nearest centroid, and of its residual to the nearest codeword of
        every sub-vector.
    faiss_side.py report FIGURES [--csv]
        The table (and with --csv the `figure,NAME,VALUE` records) from the
        "NAME VALUE" lines faiss_bench.sh collected in FIGURES.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

PROBE_FROM = 200000
PROBE_STEP = 10
PROBE_ROWS = 20000
QUERIES = 100
K = 10
NPROBES = 16
REFINE = 5
SAMPLE_SEED = 1


def path(work: str, name: str) -> str:
    return os.path.join(work, name)


def read(work: str) -> None:
    import faiss
    import lance

    t0 = time.perf_counter()
    table = lance.dataset(path(work, "vectors.lance")).to_table(columns=["id", "vec"])
    ids = table.column("id").to_numpy()
    vec = table.column("vec").combine_chunks()
    x = vec.values.to_numpy().reshape(len(ids), vec.type.list_size)
    order = np.argsort(ids, kind="stable")
    x = np.ascontiguousarray(x[order], dtype=np.float32)
    seconds = time.perf_counter() - t0
    # The table's ids are 0..rows-1 (make_vectors.py), so a row's position
    # in vectors.npy is its id: FAISS's labels and Lance's ids compare.
    if not np.array_equal(ids[order], np.arange(len(ids))):
        sys.exit("faiss_side: the table's ids are not 0..rows-1")
    np.save(path(work, "vectors.npy"), x)
    probe = x[:PROBE_FROM:PROBE_STEP][:PROBE_ROWS]
    queries = np.stack([probe[(q * 7919 + 13) % len(probe)] for q in range(QUERIES)])
    exact = faiss.IndexFlatL2(x.shape[1])
    exact.add(x)
    _, truth = exact.search(queries, K)
    np.save(path(work, "probe.npy"), probe)
    np.save(path(work, "queries.npy"), queries)
    np.save(path(work, "truth.npy"), truth)
    print(f"{seconds:.3f}")


def recall_of(found: np.ndarray, truth: np.ndarray) -> float:
    return sum(len(set(f.tolist()) & set(t.tolist())) for f, t in zip(found, truth)) / (len(truth) * K)


def option(args: list, name: str, default=None):
    if name in args:
        return args[args.index(name) + 1]
    if default is None:
        sys.exit(f"faiss_side: {name} is required")
    return default


def train(work: str, name: str, args: list) -> None:
    import faiss

    threads = int(option(args, "--threads"))
    parts = int(option(args, "--partitions"))
    subs = int(option(args, "--sub-vectors"))
    rate = int(option(args, "--sample-rate"))
    iterations = int(option(args, "--iterations", "0"))
    faiss.omp_set_num_threads(threads)
    t0 = time.perf_counter()
    x = np.load(path(work, "vectors.npy"))
    load = time.perf_counter() - t0
    rows, dim = x.shape
    # The library's sample: partitions x sample rate rows, at most every row.
    pick = np.sort(np.random.default_rng(SAMPLE_SEED).choice(rows, min(rows, parts * rate), replace=False))
    sample = np.ascontiguousarray(x[pick])
    index = faiss.IndexIVFPQ(faiss.IndexFlatL2(dim), dim, parts, subs, 8)
    # No subsampling of the IVF sample; FAISS trains the PQ on
    # pq.cp.max_points_per_centroid x 256 residuals of it: at the library's
    # rate, the library's PQ sample size.
    index.cp.max_points_per_centroid = rate
    index.pq.cp.max_points_per_centroid = rate
    if iterations:
        index.cp.niter = iterations
        index.pq.cp.niter = iterations
    t0 = time.perf_counter()
    index.train(sample)
    train_s = time.perf_counter() - t0
    index.quantizer.reconstruct_n(0, parts).astype("<f4").tofile(path(work, f"{name}.centroids.f32"))
    faiss.vector_to_array(index.pq.centroids).astype("<f4").tofile(path(work, f"{name}.codebook.f32"))
    refined = faiss.IndexRefineFlat(index)
    refined.k_factor = REFINE
    t0 = time.perf_counter()
    refined.add(x)
    add_s = time.perf_counter() - t0
    index.nprobe = NPROBES
    _, found = refined.search(np.load(path(work, "queries.npy")), K)
    print(f"{load:.3f} {train_s:.3f} {add_s:.3f} {recall_of(found, np.load(path(work, 'truth.npy'))):.4f}")


def lance_recall(work: str, dataset: str) -> None:
    import lance

    ds = lance.dataset(dataset)
    found = []
    for q in np.load(path(work, "queries.npy")):
        got = ds.to_table(columns=["id"], nearest={"column": "vec", "q": q, "k": K, "nprobes": NPROBES,
                                                   "refine_factor": REFINE, "use_index": True})
        found.append(got.column("id").to_numpy())
    print(f"{recall_of(found, np.load(path(work, 'truth.npy'))):.4f}")


def losses(work: str, dim: int, parts: int, subs: int, bits: int, names: list) -> None:
    probe = np.load(path(work, "probe.npy")).astype(np.float64)
    for name in names:
        c = np.fromfile(path(work, f"{name}.centroids.f32"), "<f4").reshape(parts, dim).astype(np.float64)
        book = np.fromfile(path(work, f"{name}.codebook.f32"), "<f4").reshape(subs, 1 << bits, dim // subs)
        d2 = (probe ** 2).sum(1)[:, None] - 2 * probe @ c.T + (c ** 2).sum(1)[None, :]
        r = probe - c[d2.argmin(1)]
        ivf = float((r ** 2).sum())
        sub = dim // subs
        pq = 0.0
        for i in range(subs):
            part = r[:, i * sub:(i + 1) * sub]
            b = book[i].astype(np.float64)
            e = (part ** 2).sum(1)[:, None] - 2 * part @ b.T + (b ** 2).sum(1)[None, :]
            pq += float(np.maximum(e.min(1), 0).sum())
        print(name, f"{ivf:.6g}", f"{pq:.6g}")


def report(figures_path: str, csv: bool) -> None:
    f: dict = {}
    order = []
    for line in open(figures_path):
        key, value = line.split(None, 1)
        value = value.strip()
        try:
            f[key] = float(value)
        except ValueError:
            f[key] = value
        order.append(key)

    def ratio(a: str, b: str) -> float:
        return f[a] / f[b] if f.get(b) else float("nan")

    # The derived figures: whole builds, and this library over FAISS.
    for t in ("1", "2"):
        for side in (f"faiss_{t}t", f"faiss_def_{t}t"):
            f[f"{side}_build_s"] = f[f"{side}_train_s"] + f[f"{side}_add_s"]
        lib = "lance_one_node" if t == "1" else "lance_dist_x2"
        f[f"{lib}_whole_s"] = f[f"{lib}_train_s"] + f[f"{lib}_build_s"]
        f[f"train_ratio_{t}"] = ratio(f"{lib}_train_s", f"faiss_{t}t_train_s")
        f[f"train_ratio_def_{t}"] = ratio(f"{lib}_train_s", f"faiss_def_{t}t_train_s")
        f[f"build_ratio_{t}"] = ratio(f"{lib}_whole_s", f"faiss_{t}t_build_s")
        f[f"build_ratio_def_{t}"] = ratio(f"{lib}_whole_s", f"faiss_def_{t}t_build_s")
        f[f"ivf_loss_ratio_{t}"] = ratio(f"{lib}_ivf_loss", f"faiss_{t}t_ivf_loss")
        f[f"pq_loss_ratio_{t}"] = ratio(f"{lib}_pq_loss", f"faiss_{t}t_pq_loss")
        f[f"recall_diff_{t}"] = f[f"{lib}_recall"] - f[f"faiss_{t}t_recall"]
    it = int(f["iterations"])
    print(f"faiss_bench: {int(f['rows'])} x {int(f['dim'])}, IVF_PQ {int(f['partitions'])} x "
          f"{int(f['sub_vectors'])} x 8 bits, L2; samples {int(f['ivf_sample_rows'])} rows (IVF) and "
          f"{int(f['pq_sample_rows'])} (PQ); FAISS {f['faiss_version']} ({f['faiss_simd']})")
    print(f"  table -> numpy for FAISS {f['read_s']:.2f} s, not counted (the library reads its sample inside "
          f"its training)")
    at_cap = int(f["lance_kmeans_at_cap"])
    print(f"  this library's k-means runs (one-node, from the core's log): {int(f['lance_kmeans_converged'])} "
          f"stopped at the 1e-4 tolerance before the cap of {it} (at iteration "
          f"{f['lance_kmeans_mean_iteration']:.1f} on average), {at_cap if at_cap >= 0 else 'unknown'} ran to "
          f"it; FAISS runs every k-means to its count")
    head = f"  {'':52}{'train s':>9}{'+ build s':>11}{'= whole s':>11}{'IVF loss':>12}{'PQ loss':>12}" \
           f"{'recall@10':>11}{'RSS MiB':>9}"

    def row(label: str, side: str, build_key: str, whole_key: str) -> None:
        print(f"  {label:<52}{f[side + '_train_s']:9.2f}{f[build_key]:11.2f}{f[whole_key]:11.2f}"
              f"{f[side + '_ivf_loss']:12.5g}{f[side + '_pq_loss']:12.5g}{f[side + '_recall']:11.3f}"
              f"{int(f[side + '_rss_mib']):9d}")

    for t, title, lib, label in (
            ("1", "one core (taskset -c 0): FAISS 1 thread; this library one-node", "lance_one_node",
             "this library, one-node train; 1 worker"),
            ("2", "two cores (taskset -c 0,1): FAISS 2 threads; this library 2 one-core workers",
             "lance_dist_x2", f"this library, distributed ({int(f['lance_dist_x2_rounds'])} rounds); 2 workers")):
        print(title)
        print(head)
        row(f"FAISS, {it} iterations each k-means; add", f"faiss_{t}t", f"faiss_{t}t_add_s", f"faiss_{t}t_build_s")
        row("FAISS, its defaults (IVF 10, PQ 25); add", f"faiss_def_{t}t", f"faiss_def_{t}t_add_s",
            f"faiss_def_{t}t_build_s")
        row(label, lib, f"{lib}_build_s", f"{lib}_whole_s")
        print(f"  this library / FAISS ({it} iterations): training {f['train_ratio_' + t]:.2f}x, whole build "
              f"{f['build_ratio_' + t]:.2f}x, IVF loss {f['ivf_loss_ratio_' + t]:.4f}x, PQ loss "
              f"{f['pq_loss_ratio_' + t]:.4f}x, recall {f['recall_diff_' + t]:+.3f}")
        print(f"  this library / FAISS (defaults): training {f['train_ratio_def_' + t]:.2f}x, whole build "
              f"{f['build_ratio_def_' + t]:.2f}x")
    if csv:
        print("# csv")
        for key in order + [k for k in f if k not in order]:
            v = f[key]
            print(f"figure,{key},{v if isinstance(v, str) else format(v, '.6g')}")


def main() -> None:
    mode, rest = sys.argv[1], sys.argv[2:]
    if mode == "read":
        read(rest[0])
    elif mode == "train":
        train(rest[0], rest[1], rest[2:])
    elif mode == "recall":
        lance_recall(rest[0], rest[1])
    elif mode == "loss":
        losses(rest[0], *map(int, rest[1:5]), rest[5:])
    elif mode == "report":
        report(rest[0], "--csv" in rest[1:])
    else:
        sys.exit(f"faiss_side: unknown mode {mode}")


if __name__ == "__main__":
    main()
