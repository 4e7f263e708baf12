"""The bytes of a lance-c distributed training, read from Python.

A distributed training (lance.h "Distributed index builds: distributed
training") moves two kinds of bytes: the coordinator's request, sent to
every worker each round, and each worker's statistics, sent back.  A Python
scheduler that moves them (the Ray example does, through Ray's object
store) can look inside with this module: ``decode_request`` gives the
training's parameters, phase, round and, once the IVF phase is over, its
centroids; ``decode_statistics`` gives which request a worker answered, its
fragments and rows.  Both check the magic and the SHA-256 at the end and
raise ``ValueError`` for anything else (truncated, corrupted, another kind
of bytes).  The reduction itself is the library's
(``lance-index train-reduce`` or ``lance_vector_training_reduce``).

Only the standard library is needed.  The layout is this library's
(``src/index/training/request.rs``): little-endian fields after an 8-byte magic,
counts as u64 before arrays, a SHA-256 of everything before it at the end.
"""

from __future__ import annotations

import hashlib
import struct
from array import array
from typing import Any, Dict, List

__all__ = ["decode_request", "decode_statistics", "PHASES", "METRICS", "INDEX_TYPES"]

PHASES = ["ivf_init", "ivf", "pq_init", "pq", "done"]
METRICS = ["l2", "cosine", "dot", "hamming"]
# lance.h's LanceVectorIndexType values.
INDEX_TYPES = {101: "IVF_FLAT", 102: "IVF_SQ", 103: "IVF_PQ", 104: "IVF_HNSW_SQ", 105: "IVF_HNSW_PQ",
               106: "IVF_HNSW_FLAT", 107: "IVF_RQ"}
_REQUEST_MAGIC = b"LCTRAIN3"
_STATS_MAGIC = b"LCTSTAT2"
TREE_STAGES = ["open", "lloyd", "split", "means"]
NODE_STATES = ["pending", "training", "split", "leaf"]


class _Reader:
    def __init__(self, data: bytes, magic: bytes, what: str) -> None:
        if len(data) < len(magic) + 32 or data[: len(magic)] != magic:
            raise ValueError(f"not {what}: wrong magic or too short")
        body, digest = data[:-32], data[-32:]
        if hashlib.sha256(body).digest() != digest:
            raise ValueError(f"not {what}: checksum mismatch (truncated or corrupted)")
        self.body, self.pos, self.what = body, len(magic), what
        self.digest = digest.hex()

    def take(self, fmt: str) -> Any:
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.body):
            raise ValueError(f"not {self.what}: truncated")
        (value,) = struct.unpack_from(fmt, self.body, self.pos)
        self.pos += size
        return value

    def values(self, code: str) -> array:
        count = self.take("<Q")
        out = array(code)
        size = out.itemsize * count
        if self.pos + size > len(self.body):
            raise ValueError(f"not {self.what}: truncated")
        out.frombytes(self.body[self.pos : self.pos + size])
        if struct.pack("=I", 1) != struct.pack("<I", 1):
            out.byteswap()
        self.pos += size
        return out

    def text(self) -> str:
        count = self.take("<Q")
        if self.pos + count > len(self.body):
            raise ValueError(f"not {self.what}: truncated")
        out = self.body[self.pos : self.pos + count].decode("utf-8")
        self.pos += count
        return out

    def finish(self) -> None:
        if self.pos != len(self.body):
            raise ValueError(f"not {self.what}: trailing bytes")


def decode_request(data: bytes) -> Dict[str, Any]:
    """A training request: its plan, where the training is, and its
    fingerprint (the hex SHA-256 the statistics that answer it carry)."""
    r = _Reader(bytes(data), _REQUEST_MAGIC, "a lance-c training request")
    out: Dict[str, Any] = {
        "column": r.text(),
        "metric": r.take("<i"),
        "num_partitions": r.take("<I"),
        "num_sub_vectors": r.take("<I"),
        "num_bits": r.take("<I"),
        "max_iterations": r.take("<I"),
        "sample_rate": r.take("<I"),
        "seed": r.take("<Q"),
        "index_type": r.take("<i"),
    }
    if not 0 <= out["metric"] < len(METRICS):
        raise ValueError("not a lance-c training request: unknown metric")
    out["metric"] = METRICS[out["metric"]]
    if out["index_type"] not in INDEX_TYPES:
        raise ValueError("not a lance-c training request: unknown index type")
    out["index_type"] = INDEX_TYPES[out["index_type"]]
    phase = r.take("<B")
    if phase >= len(PHASES):
        raise ValueError("not a lance-c training request: unknown phase")
    out["phase"] = PHASES[phase]
    for name, fmt in [("round", "<I"), ("dimension", "<Q"), ("dataset_version", "<Q"), ("total_rows", "<Q"),
                      ("ivf_sample_rows", "<Q"), ("pq_sample_rows", "<Q")]:
        out[name] = r.take(fmt)
    out["ivf_centroids"] = r.values("f")  # the final IVF centroids, once the IVF phase is over
    out["ivf_loss"] = r.take("<d")
    out["ivf_iterations"] = r.take("<I")
    problems = []
    for _ in range(r.take("<Q")):
        k, dim = r.take("<Q"), r.take("<Q")
        centroids, sizes = r.values("f"), r.values("Q")
        problems.append({"k": k, "dimension": dim, "centroids": centroids, "sizes": sizes,
                         "base_balance": r.take("<f"), "balance": r.take("<f"), "loss": r.take("<d"),
                         "iterations": r.take("<I"), "done": bool(r.take("<B"))})
    out["kmeans"] = problems  # the IVF problem, one per PQ sub-vector, or one per training tree node
    out["tree"] = None
    if r.take("<B"):
        # More than 256 partitions: the hierarchical IVF training's tree.
        stage, rounds = r.take("<B"), r.take("<I")
        if stage >= len(TREE_STAGES):
            raise ValueError("not a lance-c training request: unknown tree stage")
        nodes = []
        for _ in range(r.take("<Q")):
            state = r.take("<B")
            if state >= len(NODE_STATES):
                raise ValueError("not a lance-c training request: unknown tree node state")
            node = {"state": NODE_STATES[state], "quota": r.take("<I"), "rows": r.take("<Q"), "cut": r.take("<Q"),
                    "stuck": bool(r.take("<B"))}
            node["centroids"], node["children"] = r.values("f"), list(r.values("I"))
            nodes.append(node)
        out["tree"] = {"stage": TREE_STAGES[stage], "kmeans_rounds": rounds, "nodes": nodes}
    r.finish()
    out["fingerprint"] = hashlib.sha256(r.body).hexdigest()
    return out


def decode_statistics(data: bytes) -> Dict[str, Any]:
    """A worker's statistics: the fingerprint of the request they answer,
    the dataset version and rows they were computed on, the worker's
    fragments, and the size of what they carry."""
    r = _Reader(bytes(data), _STATS_MAGIC, "lance-c training statistics")
    r.take("<Q")  # reserved
    request = bytes(r.take("<B") for _ in range(32)).hex()
    out: Dict[str, Any] = {"request": request}
    for name in ["dataset_version", "total_rows", "dimension"]:
        out[name] = r.take("<Q")
    out["fragments"] = list(r.values("I"))
    out["rows"] = r.take("<Q")
    out["sample_rows"] = r.take("<Q")
    keys = r.values("Q")
    vectors = r.values("f")
    out["candidates"] = len(keys)
    out["candidate_values"] = len(vectors)
    problems: List[Dict[str, Any]] = []
    for _ in range(r.take("<Q")):
        sums, counts, losses, radius = r.values("d"), r.values("Q"), r.values("d"), r.values("f")
        problems.append({"clusters": len(counts), "assigned": sum(counts), "loss": sum(losses),
                         "values": len(sums) + len(radius)})
    out["kmeans"] = problems
    out["candidate_slots"] = len(r.values("I"))  # a hierarchical training's: the tree node each is for
    r.finish()
    return out
