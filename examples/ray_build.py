"""A distributed index build driven by Ray, with the lance-index tool.

The plan / train / build / commit loop on Ray: the shared model is trained
by Ray actors together (one per fragment group, each keeping a
`lance-index train-worker` process, and with it its sample, for the whole
training; the driver reduces their statistics in one `lance-index
train-coordinator` process), or by one task (--training one-node; the default, auto,
trains across the workers only when they run on other nodes than the
driver's and the model has at most 256 partitions); the segments are
built by Ray tasks and committed by one.  The requests, the statistics, the
model and every segment's metadata travel through Ray's object store as
bytes, as they would between the machines of a cluster (each task writes
them to a local temporary file for the tool and reads the tool's output
back).

    python examples/ray_build.py PATH-TO-lance-index [--rows N] [--workers W]

So run, it writes a dataset to a temporary directory and starts Ray in
local mode (scripts/ray_demo.sh does that, building the tool first).
Against a running cluster and a dataset already on object storage:

    LANCE_STORAGE_OPTIONS=... python examples/ray_build.py lance-index \
        --address HEAD:6379 --uri s3://bucket/vectors.lance \
        --train-resource head --build-resource worker --index-type IVF_FLAT

The driver runs on a node of the cluster (the coordinator's); it plans
there itself.  Train and commit ask for one unit of --train-resource, each
build for one of --build-resource (custom resources the nodes declare at
`ray start --resources`), the builds spread over the nodes that have it.
The driver's LANCE_STORAGE_OPTIONS reaches every task through the job's
runtime environment (env_vars, which win over what `ray start` had).
Every task reports the IP address of the node it ran on, and the driver
prints one JSON line per task and one for the commit.

With --maintain the build is followed by a maintenance job, as an engine
runs one after loads: the driver plans the index's upkeep with `lance-index
plan-maintenance` (delta segments over fragments no segment covers, merges
of small segments down to --max-segments), each task runs as a Ray task
(`lance-index build` with the shared model for a delta or a rebuild,
`lance-index merge --segment` for a merge of committed segments), and one
task commits them all in one version with `lance-index commit --replace`.
On the dataset it writes, the example first appends rows for the job to
index.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time

import numpy as np
import pyarrow as pa
import ray

import lance


def run_tool(tool: str, *args: str) -> str:
    proc = subprocess.run([tool, *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"lance-index {args[0]} exited with {proc.returncode}: {proc.stderr.strip()}")
    return proc.stdout


def type_args(index_type: str) -> list:
    return ["--type", index_type] + (["--sub-vectors", "16"] if index_type == "IVF_PQ" else [])


# Each task returns what it made and the IP address of the node it ran on.
@ray.remote(num_returns=2)
def train(tool: str, uri: str, version: int, index_type: str, partitions: int):
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "model.bin")
        run_tool(tool, "train", uri, "--column", "vec", *type_args(index_type), "--partitions", str(partitions),
                 "--version", str(version), "-o", model, "--quiet")
        with open(model, "rb") as f:
            return f.read(), ray.util.get_node_ip_address()


@ray.remote
class TrainingWorker:
    """One worker of a distributed training: a `lance-index train-worker`
    process over its fragments, kept for the whole training."""

    def __init__(self, tool: str, uri: str, version: int, fragments: list):
        self.tmp = tempfile.mkdtemp(prefix="lance-train-")
        self.proc = subprocess.Popen([tool, "train-worker", uri, "--version", str(version),
                                      "--fragments", ",".join(map(str, fragments))],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def run(self, request: bytes) -> bytes:
        req, stats = os.path.join(self.tmp, "request.bin"), os.path.join(self.tmp, "stats.bin")
        with open(req, "wb") as f:
            f.write(request)
        self.proc.stdin.write(f"{req} {stats}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if line != "ok\n":
            raise RuntimeError(f"lance-index train-worker: {line.strip() or 'exited'}")
        with open(stats, "rb") as f:
            return f.read()

    def node_ip(self) -> str:
        return ray.util.get_node_ip_address()

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()
        shutil.rmtree(self.tmp)


def train_across(tool: str, uri: str, version: int, index_type: str, partitions: int, groups: list,
                 placement: dict) -> tuple:
    """The shared model trained by one actor per fragment group; the driver
    is the coordinator.  Returns (model bytes, rounds, the actors' IPs)."""
    with tempfile.TemporaryDirectory() as tmp:
        req = os.path.join(tmp, "request.bin")
        info = json.loads(run_tool(tool, "train-start", "--column", "vec", *type_args(index_type), "--partitions",
                                   str(partitions), "--seed", "1", "-o", req))
        workers = [TrainingWorker.options(**placement).remote(tool, uri, version, g["fragments"]) for g in groups]
        # One coordinator process reduces every round (train-reduce would
        # start a process per round).
        coordinator = subprocess.Popen([tool, "train-coordinator", req], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, text=True)
        try:
            while not info["done"]:
                with open(req, "rb") as f:
                    request = f.read()
                paths = []
                for i, stats in enumerate(ray.get([w.run.remote(request) for w in workers])):
                    paths.append(os.path.join(tmp, f"stats-{i}.bin"))
                    with open(paths[-1], "wb") as f:
                        f.write(stats)
                coordinator.stdin.write(" ".join(paths) + "\n")
                coordinator.stdin.flush()
                line = coordinator.stdout.readline()
                if not line.startswith("{"):
                    raise RuntimeError(f"lance-index train-coordinator: {line.strip() or 'exited'}")
                info = json.loads(line)
        finally:
            coordinator.stdin.close()
            coordinator.wait()
        with open(req, "rb") as f:
            model = f.read()
        ips = ray.get([w.node_ip.remote() for w in workers])
        ray.get([w.close.remote() for w in workers])
        for w in workers:
            ray.kill(w)  # frees their resources for the builds now
        return model, info["rounds"], ips


@ray.remote(num_returns=2)
def build(tool: str, uri: str, version: int, index_type: str, fragments: list, model: bytes):
    with tempfile.TemporaryDirectory() as tmp:
        model_path, out = os.path.join(tmp, "model.bin"), os.path.join(tmp, "segment.bin")
        with open(model_path, "wb") as f:
            f.write(model)
        run_tool(tool, "build", uri, "--column", "vec", "--type", index_type, "--version", str(version),
                 "--fragments", ",".join(map(str, fragments)), "--model", model_path, "-o", out, "--quiet")
        with open(out, "rb") as f:
            return f.read(), ray.util.get_node_ip_address()


@ray.remote
def commit(tool: str, uri: str, job_id: str, replace: bool, *segments: bytes) -> dict:
    # Segments arrive as top-level arguments, so Ray resolves them to bytes.
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, data in enumerate(segments):
            paths.append(os.path.join(tmp, f"segment-{i}.bin"))
            with open(paths[-1], "wb") as f:
                f.write(data)
        result = json.loads(run_tool(tool, "commit", uri, "--name", "vec_idx", "--column", "vec", *paths,
                                     "--job-id", job_id, *(["--replace"] if replace else [])))
        result["node_ip"] = ray.util.get_node_ip_address()
        return result


@ray.remote(num_returns=2)
def maintenance_task(tool: str, uri: str, version: int, task: dict, model: bytes):
    """One task of a maintenance plan: a segment built over the task's
    fragments with the shared model (build, rebuild), or the task's committed
    segments merged (merge); returns its metadata and the node's IP."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "segment.bin")
        if task["kind"] == "merge":
            sources = [arg for uuid in task["segment_uuids"] for arg in ("--segment", uuid)]
            run_tool(tool, "merge", uri, "--index", "vec_idx", *sources, "--version", str(version), "-o", out,
                     "--quiet")
        else:
            model_path = os.path.join(tmp, "model.bin")
            with open(model_path, "wb") as f:
                f.write(model)
            run_tool(tool, "build", uri, "--column", "vec", "--name", "vec_idx", "--version", str(version),
                     "--fragments", ",".join(map(str, task["fragment_ids"])), "--model", model_path, "-o", out,
                     "--quiet")
        with open(out, "rb") as f:
            return f.read(), ray.util.get_node_ip_address()


def maintain(tool: str, uri: str, model, max_segments: int, target_rows: int | None, on_build: dict,
             on_commit: dict) -> dict:
    """The maintenance job: plan on the driver, every task a Ray task, one
    commit.  `model` is the shared model the index was built with (its bytes,
    or a Ray reference to them).  Returns the commit's result with the
    segment counts."""
    policy = ["--max-segments", str(max_segments)]
    if target_rows:
        policy += ["--target-rows", str(target_rows)]
    plan = json.loads(run_tool(tool, "plan-maintenance", uri, "--index", "vec_idx", *policy))
    version = plan["dataset_version"]
    done = [maintenance_task.options(**on_build).remote(tool, uri, version, t, model) for t in plan["tasks"]]
    if not done:
        return {"task": "maintain-commit", "version": version, "committed": False,
                "segments_before": plan["segments_before"], "segments_after": plan["segments_before"]}
    result = ray.get(commit.options(**on_commit).remote(tool, uri, "ray-maintenance", True, *[s for s, _ in done]))
    for t, (_, ip) in zip(plan["tasks"], done):
        print(json.dumps({"task": "maintain-" + t["kind"], "fragments": t["fragment_ids"],
                          "segments": len(t.get("segment_uuids", [])), "node_ip": ray.get(ip)}))
    coverage = json.loads(run_tool(tool, "coverage", uri, "--name", "vec_idx", "--json"))
    return {"task": "maintain-commit", **result, "committed": True, "segments_before": plan["segments_before"],
            "segments_after": coverage["num_segments"], "unindexed_fragments": coverage["unindexed_fragments"]}


def on_resource(name: str | None) -> dict:
    return {"resources": {name: 1}} if name else {}


# Above this many partitions the core trains one-node with hierarchical
# k-means, which the distributed rounds (flat k-means) do not match in speed:
# measured at 1,024 partitions, 2 one-core workers took 1.25x the one-node
# time (docs/measurements.md).
DISTRIBUTED_TRAINING_MAX_PARTITIONS = 256


def training_choice(asked: str, partitions: int, build_resource: str | None) -> tuple:
    """Where to train, and why: as asked, or with "auto" the coordinator's
    choice from what it knows.  Distributed training pays only when the
    workers bring cores the coordinator's node does not have: on one node
    the rounds share its cores and only add their overhead (a Ray round trip
    per worker per round), so one-node training
    is faster there; and above DISTRIBUTED_TRAINING_MAX_PARTITIONS."""
    if asked != "auto":
        return asked, "asked for"
    if partitions > DISTRIBUTED_TRAINING_MAX_PARTITIONS:
        return "one-node", f"{partitions} partitions: above {DISTRIBUTED_TRAINING_MAX_PARTITIONS} the core's " \
                           "one-node hierarchical k-means is faster"
    here = ray.get_runtime_context().get_node_id()
    others = [n for n in ray.nodes() if n["Alive"] and n["NodeID"] != here
              and n["Resources"].get(build_resource or "CPU", 0) > 0]
    if not others:
        return "one-node", "the workers would share the coordinator's node and its cores"
    cpus = sum(n["Resources"].get("CPU", 0) for n in others)
    return "distributed", f"{len(others)} other nodes with {cpus:g} CPUs run the workers"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("tool")
    parser.add_argument("--rows", type=int, default=50000, help="rows of the dataset written (not with --uri)")
    parser.add_argument("--workers", type=int, default=4, help="fragment groups, one build task each")
    parser.add_argument("--address", help="join the running cluster at HOST:PORT instead of starting Ray locally")
    parser.add_argument("--uri", help="index this existing dataset (column vec) instead of writing one")
    parser.add_argument("--index-type", default="IVF_PQ", choices=["IVF_PQ", "IVF_FLAT"])
    parser.add_argument("--partitions", type=int, default=64)
    parser.add_argument("--train-resource", help="custom resource that train and commit need one unit of")
    parser.add_argument("--build-resource", help="custom resource that each build needs one unit of")
    parser.add_argument("--training", choices=["auto", "one-node", "distributed"], default="auto",
                        help="where the shared model is trained (default auto: see training_choice)")
    parser.add_argument("--one-node-training", action="store_true", help="the same as --training one-node")
    parser.add_argument("--maintain", action="store_true",
                        help="after the build, run a maintenance job (plan-maintenance, its tasks, one commit)")
    parser.add_argument("--max-segments", type=int, default=2,
                        help="the most segments the maintenance job leaves the index (plan-maintenance's policy)")
    parser.add_argument("--target-rows", type=int,
                        help="the rows a segment should hold (plan-maintenance's policy; default: the library's)")
    args = parser.parse_args()
    tool = os.path.abspath(args.tool)

    work = None
    if args.uri:
        uri = args.uri
    else:
        work = tempfile.mkdtemp(prefix="lance-ray-")
        uri = os.path.join(work, "vectors.lance")
        rng = np.random.default_rng(1)
        dim = 128
        centres = rng.uniform(-10, 10, (64, dim)).astype(np.float32)
        vectors = centres[rng.integers(0, 64, args.rows)] + rng.normal(0, 2, (args.rows, dim)).astype(np.float32)
        lance.write_dataset(pa.table({"id": np.arange(args.rows, dtype=np.int64),
                                      "vec": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), dim)}),
                            uri, max_rows_per_file=max(1, args.rows // 16))
        print(f"dataset: {args.rows} rows x {dim} in 16 fragments at {uri}")

    if args.address:
        # A task inherits the environment `ray start` had on its node; the
        # job's env_vars take precedence, so the driver's storage options
        # reach every task wherever it runs.
        options = os.environ.get("LANCE_STORAGE_OPTIONS")
        ray.init(address=args.address, log_to_driver=False,
                 runtime_env={"env_vars": {"LANCE_STORAGE_OPTIONS": options}} if options else None)
    else:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    t0 = time.time()
    plan = json.loads(run_tool(tool, "plan", uri, "--groups", str(args.workers)))
    version = plan["dataset_version"]
    on_train = on_resource(args.train_resource)
    on_build = on_resource(args.build_resource)
    if args.build_resource:
        on_build["scheduling_strategy"] = "SPREAD"
    choice, why = training_choice("one-node" if args.one_node_training else args.training, args.partitions,
                                  args.build_resource)
    print(json.dumps({"task": "training-choice", "training": choice, "why": why}))
    if choice == "one-node":
        model, train_ip = train.options(**on_train).remote(tool, uri, version, args.index_type, args.partitions)
        train_ips = [train_ip]
    else:
        model, rounds, train_ips = train_across(tool, uri, version, args.index_type, args.partitions,
                                                plan["groups"], on_build)
        print(json.dumps({"task": "train", "workers": len(plan["groups"]), "rounds": rounds}))
    built = [build.options(**on_build).remote(tool, uri, version, args.index_type, g["fragments"], model)
             for g in plan["groups"]]
    result = ray.get(commit.options(**on_train).remote(tool, uri, "ray-example", False, *[seg for seg, _ in built]))
    for ip in train_ips:
        print(json.dumps({"task": "train", "node_ip": ray.get(ip) if isinstance(ip, ray.ObjectRef) else ip}))
    for g, (_, ip) in zip(plan["groups"], built):
        print(json.dumps({"task": "build", "fragments": g["fragments"], "node_ip": ray.get(ip)}))
    print(json.dumps({"task": "commit", **result}))
    print(f"Ray: trained, built {len(built)} segments as Ray tasks and committed them in version "
          f"{result['version']}: {time.time() - t0:.2f} s")
    if args.maintain:
        if work is not None:
            # Rows loaded after the build: fragments no segment covers.
            added = max(2, args.rows // 8)
            more = centres[rng.integers(0, 64, added)] + rng.normal(0, 2, (added, dim)).astype(np.float32)
            lance.write_dataset(pa.table({"id": np.arange(args.rows, args.rows + added, dtype=np.int64),
                                          "vec": pa.FixedSizeListArray.from_arrays(pa.array(more.reshape(-1)), dim)}),
                                uri, mode="append", max_rows_per_file=(added + 1) // 2)
            vectors = np.concatenate([vectors, more])
            print(f"appended {added} rows in 2 fragments")
        t0 = time.time()
        outcome = maintain(tool, uri, model, args.max_segments, args.target_rows, on_build, on_train)
        print(json.dumps(outcome))
        print(f"Ray: maintenance job, {outcome['segments_before']} -> {outcome['segments_after']} segments: "
              f"{time.time() - t0:.2f} s")
    if work is None:
        ray.shutdown()
        return
    print(run_tool(tool, "list", uri), end="")

    hits = 0
    for q in range(20):
        row = (q * 7919 + 13) % len(vectors)
        out = run_tool(tool, "search", uri, "--column", "vec", "--query", ",".join(f"{x:.7g}" for x in vectors[row]),
                       "--k", "10", "--nprobes", "16", "--refine", "5")
        got = [int(line.split("\t")[0]) for line in out.strip().split("\n")[1:]]
        d = ((vectors - vectors[row]) ** 2).sum(axis=1)
        truth = set(int(i) for i in np.argsort(d, kind="stable")[:10])
        hits += len(truth & set(got))
    print(f"recall@10 over 20 queries (nprobes 16, refine 5): {hits / 200:.2f}")
    ray.shutdown()
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
