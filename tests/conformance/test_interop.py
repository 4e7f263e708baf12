"""Round trips between lance-c and pylance of the same Lance version.

Run by ctest: test_interop.py PATH-TO-lance-index.  The C side is the
lance-index tool (built on lance.h); the Python side is pylance.

1. C workers build IVF_FLAT segments from a shared model; pylance commits
   them; k-NN through pylance and through lance-index both equal brute force.
2. pylance builds IVF_FLAT segments over fragment groups with shared
   centroids; lance-c commits them (refused as independently trained unless
   allowed: they carry no lance-c model fingerprint); k-NN through
   lance-index equals brute force.
3. C workers build BTREE segments; pylance commits them; a filter through
   pylance finds exactly the rows.
4. A distributed training driven from Python over lance-index train-worker
   processes, its requests and statistics read with
   python/lance_c_training.py (fingerprints, fragments, rows, refusals).
Every check is on exact ids and exact fragment sets.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import pyarrow as pa

import lance

# The product's segment codec, python/lance_c_segments.py.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import lance_c_segments as codec  # noqa: E402
import lance_c_training as training  # noqa: E402

ROWS, DIM, FRAGS, K = 16000, 32, 16, 10
TOOL = sys.argv[1] if len(sys.argv) > 1 else "lance-index"
failures = 0


def check(cond: bool, what: str) -> None:
    global failures
    if not cond:
        failures += 1
        print(f"check failed: {what}", file=sys.stderr)


def tool(*args: str, expect: int = 0) -> str:
    proc = subprocess.run([TOOL, *args], capture_output=True, text=True)
    check(proc.returncode == expect, f"lance-index {' '.join(args[:2])}: exit {proc.returncode}, expected {expect}: {proc.stderr.strip()}")
    return proc.stdout


def make_dataset(uri: str) -> np.ndarray:
    rng = np.random.default_rng(7)
    centres = rng.uniform(-10, 10, size=(16, DIM)).astype(np.float32)
    vectors = centres[rng.integers(0, 16, ROWS)] + rng.normal(0, 0.5, (ROWS, DIM)).astype(np.float32)
    table = pa.table(
        {
            "id": pa.array(np.arange(ROWS, dtype=np.int64)),
            "vec": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), DIM),
            "tag": pa.array([f"t{i % 7}" for i in range(ROWS)]),
        }
    )
    lance.write_dataset(table, uri, max_rows_per_file=ROWS // FRAGS)
    return vectors


def brute_force(vectors: np.ndarray, q: np.ndarray) -> list:
    d = ((vectors - q) ** 2).sum(axis=1)
    return [int(i) for i in np.lexsort((np.arange(len(d)), d))[:K]]


def query_rows():
    return [123, 4690, 9257, 15001]


def python_knn(ds, q) -> list:
    t = ds.to_table(columns=["id", "_distance"], nearest={"column": "vec", "q": q, "k": K, "nprobes": 16})
    return t.column("id").to_pylist()


def tool_knn(uri: str, q) -> list:
    out = tool("search", uri, "--column", "vec", "--query", ",".join(f"{x:.7g}" for x in q), "--k", str(K), "--nprobes", "16")
    return [int(line.split("\t")[0]) for line in out.strip().split("\n")[1:]]


def check_knn_exact(uri: str, vectors: np.ndarray, what: str) -> None:
    """k-NN of each query row through pylance and through lance-index: both the brute-force top 10."""
    ds = lance.dataset(uri)
    for row in query_rows():
        q = vectors[row]
        truth = brute_force(vectors, q)
        check(python_knn(ds, q) == truth, f"pylance k-NN{what}, row {row}")
        check(tool_knn(uri, q) == truth, f"lance-index k-NN{what}, row {row}")


def same_segment(a, b) -> bool:
    """Equal in every field; created_at to the millisecond the manifest keeps."""
    def ms(t):
        return None if t is None else t.replace(microsecond=t.microsecond // 1000 * 1000)
    return a.__dict__ | {"created_at": ms(a.created_at), "fragment_ids": sorted(a.fragment_ids)} == b.__dict__ | {
        "created_at": ms(b.created_at), "fragment_ids": sorted(b.fragment_ids)}


def segment_fragments(ds, name: str) -> list:
    return sorted(sorted(int(f) for f in seg["fragment_ids"]) for seg in ds.list_indices() if seg["name"] == name)


def planned_groups(uri: str) -> list:
    plan = json.loads(tool("plan", uri, "--groups", "4"))
    groups = [g["fragments"] for g in plan["groups"]]
    check(sorted(f for g in groups for f in g) == list(range(FRAGS)), "the plan covers every fragment once")
    return groups


def test_c_segments_python_commit(work: str) -> None:
    uri = os.path.join(work, "c_to_py.lance")
    vectors = make_dataset(uri)
    groups = planned_groups(uri)
    model = os.path.join(work, "model.bin")
    tool("train", uri, "--column", "vec", "--type", "IVF_FLAT", "--partitions", "16", "-o", model)
    segments = []
    for i, g in enumerate(groups):
        out = os.path.join(work, f"c{i}.bin")
        tool("build", uri, "--column", "vec", "--type", "IVF_FLAT", "--fragments", ",".join(map(str, g)),
             "--model", model, "-o", out, "--quiet")
        with open(out, "rb") as f:
            data = f.read()
        segments.append(codec.decode(data))
        check(codec.encode(segments[-1]) == data, f"C segment {i}: decode then encode gives the same bytes")
    check([sorted(s.fragment_ids) for s in segments] == [sorted(g) for g in groups], "decoded fragment sets")
    ds = lance.dataset(uri)
    check(ds.version == 1, "nothing committed by the workers")
    ds = ds.commit_existing_index_segments("vec_idx", "vec", segments)
    ds = lance.dataset(uri)
    check(ds.version == 2, f"one new version (got {ds.version})")
    check(segment_fragments(ds, "vec_idx") == sorted(sorted(g) for g in groups), "committed fragment sets")
    check_knn_exact(uri, vectors, "")


def test_python_segments_c_commit(work: str) -> None:
    uri = os.path.join(work, "py_to_c.lance")
    vectors = make_dataset(uri)
    groups = planned_groups(uri)
    ds = lance.dataset(uri)
    centroids = vectors[[i * 997 for i in range(16)]].copy()
    files = []
    for i, g in enumerate(groups):
        idx = ds.create_index_uncommitted(
            "vec", "IVF_FLAT", name="vec_idx", num_partitions=16, ivf_centroids=centroids, fragment_ids=g
        )
        check(sorted(idx.fragment_ids) == sorted(g), f"pylance segment {i} fragments")
        data = codec.encode(idx)
        check(same_segment(codec.decode(data), idx), f"encode/decode round trip of segment {i}")
        path = os.path.join(work, f"py{i}.bin")
        with open(path, "wb") as f:
            f.write(data)
        files.append(path)
    check(lance.dataset(uri).version == 1, "nothing committed by pylance")
    # No lance-c model fingerprint: refused unless explicitly allowed (exit 25:
    # LANCE_ERR_MODEL_MISMATCH = 1005, exit status 20 + (code - 1000)).
    tool("commit", uri, "--name", "vec_idx", "--column", "vec", *files, expect=25)
    out = tool("commit", uri, "--name", "vec_idx", "--column", "vec", *files, "--allow-independent-models")
    check(json.loads(out) == {"version": 2, "already_committed": False}, f"commit result {out.strip()}")
    listed = json.loads(tool("list", uri, "--json"))
    check(sorted(sorted(e["fragment_ids"]) for e in listed) == sorted(sorted(g) for g in groups), "listed fragment sets")
    check(sorted(e["uuid"] for e in listed) == sorted(codec.decode(open(p, "rb").read()).uuid for p in files), "listed uuids")
    check_knn_exact(uri, vectors, " over pylance's segments")


def test_btree_c_to_python(work: str) -> None:
    uri = os.path.join(work, "btree.lance")
    make_dataset(uri)
    segments = []
    for i, g in enumerate([list(range(0, 8)), list(range(8, 16))]):
        out = os.path.join(work, f"b{i}.bin")
        tool("build", uri, "--column", "id", "--scalar", "BTREE", "--fragments", ",".join(map(str, g)), "-o", out, "--quiet")
        with open(out, "rb") as f:
            segments.append(codec.decode(f.read()))
    ds = lance.dataset(uri).commit_existing_index_segments("id_idx", "id", segments)
    ds = lance.dataset(uri)
    check(ds.version == 2, "BTREE: one new version")
    check(segment_fragments(ds, "id_idx") == [list(range(0, 8)), list(range(8, 16))], "BTREE committed fragment sets")
    for wanted in [0, 4321, 15999]:
        t = ds.to_table(columns=["id"], filter=f"id = {wanted}")
        check(t.column("id").to_pylist() == [wanted], f"BTREE filter id = {wanted}")
    t = ds.to_table(columns=["id"], filter="id >= 7990 AND id < 8010")
    check(sorted(t.column("id").to_pylist()) == list(range(7990, 8010)), "BTREE range across segments")
    plan = ds.scanner(columns=["id"], filter="id = 4321").explain_plan()
    check("ScalarIndexQuery" in plan or "MaterializeIndex" in plan or "id_idx" in plan, f"the filter uses the index: {plan}")


def training_rounds(work: str, uri: str, groups: list, req: str, info: dict):
    """Drives a training started by `train-start` (its JSON `info`, its
    request in `req`): one `train-worker` per fragment group, and for each
    round yields the decoded request, the statistics files and their
    decoded statistics before `train-reduce` reduces them into `req`."""
    workers = [subprocess.Popen([TOOL, "train-worker", uri, "--fragments", ",".join(map(str, g))],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for g in groups]
    while not info["done"]:
        with open(req, "rb") as f:
            request = training.decode_request(f.read())
        check(request["phase"] == info["phase"] and request["round"] == info["rounds"],
              f"the request's phase and round as the tool printed: {request['phase']} {request['round']}")
        paths = []
        for i, w in enumerate(workers):
            paths.append(os.path.join(work, f"stats-{i}.bin"))
            w.stdin.write(f"{req} {paths[-1]}\n")
            w.stdin.flush()
            check(w.stdout.readline() == "ok\n", "a worker answered")
        stats = []
        for p in paths:
            with open(p, "rb") as f:
                stats.append(training.decode_statistics(f.read()))
        yield request, paths, stats
        info = json.loads(tool("train-reduce", req, *paths, "-o", req))
    for w in workers:
        w.stdin.close()
        check(w.wait() == 0, "a worker ended with its input")


def test_training_bytes(work: str) -> None:
    """A distributed training driven from Python with the tool, its bytes
    read with python/lance_c_training.py: the request's plan and phase, the
    statistics naming the request they answer, their fragments covering
    the dataset once, the finished model's centroids, refusals."""
    uri = os.path.join(work, "training.lance")
    make_dataset(uri)
    groups = planned_groups(uri)
    req = os.path.join(work, "req.bin")
    info = json.loads(tool("train-start", "--column", "vec", "--type", "IVF_PQ", "--partitions", "8",
                           "--sub-vectors", "4", "--seed", "9", "-o", req))
    seen = set()
    for request, paths, stats in training_rounds(work, uri, groups, req, info):
        check(request["column"] == "vec" and request["metric"] == "l2" and request["num_partitions"] == 8
              and request["index_type"] == "IVF_PQ",
              f"the request's plan: {request['column']} {request['metric']} {request['num_partitions']} "
              f"{request['index_type']}")
        check(all(s["request"] == request["fingerprint"] for s in stats), "the statistics answer this request")
        frags = sorted(x for s in stats for x in s["fragments"])
        check(frags == sorted(x for g in groups for x in g), "the workers' fragments cover the dataset once")
        check(sum(s["rows"] for s in stats) == stats[0]["total_rows"], "the workers' rows add up to the dataset's")
        if request["phase"] not in seen:
            seen.add(request["phase"])
            with open(paths[0], "rb") as f:
                raw = bytearray(f.read())
            raw[len(raw) // 2] ^= 1
            try:
                training.decode_statistics(bytes(raw))
                check(False, "corrupted statistics are refused")
            except ValueError as e:
                check("checksum" in str(e), f"corrupted statistics: {e}")
    check(seen == {"ivf_init", "ivf", "pq_init", "pq"}, f"every phase ran: {sorted(seen)}")
    with open(req, "rb") as f:
        model = f.read()
    try:
        training.decode_request(model)
        check(False, "a model is not a request")
    except ValueError as e:
        check("magic" in str(e), f"a model is not a request: {e}")
    tool("build", uri, "--column", "vec", "--fragments", ",".join(map(str, groups[0])), "--model", req,
         "-o", os.path.join(work, "tseg.bin"), "--quiet")


def test_training_tree_bytes(work: str) -> None:
    """A training of more than 256 partitions, its requests decoded: the
    hierarchy's tree in every IVF round (children after their parent, one
    centroid per child, no more leaves than partitions, one k-means problem
    per training node), every stage run, candidates (naming their node) in
    the open rounds and none in the k-means and means rounds."""
    uri = os.path.join(work, "tree.lance")
    make_dataset(uri)
    groups = planned_groups(uri)
    req = os.path.join(work, "tree-req.bin")
    info = json.loads(tool("train-start", "--column", "vec", "--type", "IVF_FLAT", "--partitions", "300",
                           "--seed", "3", "-o", req))
    stages, leaves = set(), 0
    for request, _, stats in training_rounds(work, uri, groups, req, info):
        tree = request["tree"]
        check((tree is not None) == (request["phase"] in ("ivf_init", "ivf")), "a tree in the IVF phases only")
        if tree is None:
            continue
        stages.add(tree["stage"])
        nodes = tree["nodes"]
        for i, node in enumerate(nodes):
            check(all(i < c < len(nodes) for c in node["children"]), f"node {i}'s children come after it")
            split = node["state"] == "split"
            check(len(node["centroids"]) == (len(node["children"]) * DIM if split else 0),
                  f"node {i} has one centroid per child")
        leaves = sum(n["state"] == "leaf" for n in nodes)
        check(leaves <= 300, f"{leaves} leaves for 300 partitions")
        training_nodes = sum(n["state"] == "training" for n in nodes)
        check(len(request["kmeans"]) == training_nodes, "one k-means problem per training node")
        check(all(1 <= p["k"] <= 16 for p in request["kmeans"]), "a node's k-means has at most 16 centroids")
        slots = sum(s["candidate_slots"] for s in stats)
        if tree["stage"] != "split":  # (a split round has them only above the tree's last level)
            check((slots > 0) == (tree["stage"] == "open"), f"candidates in the {tree['stage']} round: {slots}")
    check(stages == {"open", "lloyd", "split", "means"}, f"every stage ran: {sorted(stages)}")
    check(leaves == 300, f"the last tree has a leaf per partition: {leaves}")


def main() -> int:
    print(f"pylance {lance.__version__}, pyarrow {pa.__version__}")
    with tempfile.TemporaryDirectory(prefix="lance-c-interop-") as work:
        for test in (test_c_segments_python_commit, test_python_segments_c_commit, test_btree_c_to_python,
                     test_training_bytes, test_training_tree_bytes):
            before = failures
            test(work)
            print(f"{'ok  ' if failures == before else 'FAIL'} {test.__name__}")
    print(f"test_interop: {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
