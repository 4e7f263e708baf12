"""A distributed index build driven by Ray, with the lance-index tool.

The plan / train / build / commit loop as Ray tasks: the shared model and
every segment's metadata travel through Ray's object store as bytes, as
they would between the machines of a cluster (each task writes them to a
local temporary file for the tool and reads the tool's output back).

    python examples/ray_build.py PATH-TO-lance-index [--rows N] [--workers W]

Run by scripts/ray_demo.sh, which builds the tool and installs Ray first.
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


@ray.remote
def train(tool: str, uri: str, version: int, partitions: int) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "model.bin")
        run_tool(tool, "train", uri, "--column", "vec", "--type", "IVF_PQ", "--partitions", str(partitions),
                 "--sub-vectors", "16", "--version", str(version), "-o", model)
        with open(model, "rb") as f:
            return f.read()


@ray.remote
def build(tool: str, uri: str, version: int, fragments: list, model: bytes) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        model_path, out = os.path.join(tmp, "model.bin"), os.path.join(tmp, "segment.bin")
        with open(model_path, "wb") as f:
            f.write(model)
        run_tool(tool, "build", uri, "--column", "vec", "--type", "IVF_PQ", "--version", str(version),
                 "--fragments", ",".join(map(str, fragments)), "--model", model_path, "-o", out, "--quiet")
        with open(out, "rb") as f:
            return f.read()


@ray.remote
def commit(tool: str, uri: str, job_id: str, *segments: bytes) -> dict:
    # Segments arrive as top-level arguments, so Ray resolves them to bytes.
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, data in enumerate(segments):
            paths.append(os.path.join(tmp, f"segment-{i}.bin"))
            with open(paths[-1], "wb") as f:
                f.write(data)
        return json.loads(run_tool(tool, "commit", uri, "--name", "vec_idx", "--column", "vec", *paths,
                                   "--job-id", job_id))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("tool")
    parser.add_argument("--rows", type=int, default=50000)
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()
    tool = os.path.abspath(args.tool)

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

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    t0 = time.time()
    plan = json.loads(run_tool(tool, "plan", uri, "--groups", str(args.workers)))
    version = plan["dataset_version"]
    model = train.remote(tool, uri, version, 64)
    segments = [build.remote(tool, uri, version, g["fragments"], model) for g in plan["groups"]]
    result = ray.get(commit.remote(tool, uri, "ray-example", *segments))
    print(f"Ray: trained, built {args.workers} segments as Ray tasks and committed them in version "
          f"{result['version']}: {time.time() - t0:.2f} s")
    print(run_tool(tool, "list", uri), end="")

    hits = 0
    for q in range(20):
        row = (q * 7919 + 13) % args.rows
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
