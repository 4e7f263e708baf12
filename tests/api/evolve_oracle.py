"""The independent answer for tests/api/test_evolve.c.

Usage: evolve_oracle.py CASE C_URI PY_URI

C_URI is a dataset test_evolve changed through lance-c; PY_URI is a copy of
it taken before the change.  This script applies the same change to PY_URI
with pylance and exits 0 only when both datasets then have the same schema
(names, types, nullability, in order) and the same rows (sorted by id).
Any difference is printed and exits 1.

merge_insert_oracle.py, beside this one, compares its datasets with
differences() below.
"""

from __future__ import annotations

import json
import sys

import pyarrow as pa

import lance


def canonical(uri: str) -> tuple[list, list]:
    ds = lance.dataset(uri)
    schema = [(f.name, str(f.type), f.nullable) for f in ds.schema]
    rows = sorted(ds.to_table().to_pylist(), key=lambda r: r["id"])
    return schema, rows


def differences(case: str, c_uri: str, py_uri: str) -> int:
    """Prints how the two datasets differ; returns the number of differences."""
    failures = 0
    c_schema, c_rows = canonical(c_uri)
    p_schema, p_rows = canonical(py_uri)
    if c_schema != p_schema:
        print(f"{case}: schemas differ:\n  lance-c {c_schema}\n  pylance {p_schema}")
        failures += 1
    if c_rows != p_rows:
        diff = next((i for i, (a, b) in enumerate(zip(c_rows, p_rows)) if a != b), min(len(c_rows), len(p_rows)))
        print(f"{case}: rows differ ({len(c_rows)} vs {len(p_rows)}); first difference at sorted row {diff}:")
        print("  lance-c", json.dumps(c_rows[diff] if diff < len(c_rows) else None, default=str))
        print("  pylance", json.dumps(p_rows[diff] if diff < len(p_rows) else None, default=str))
        failures += 1
    return failures


def int64_reader(name: str, rows: int, mult: int, batch: int) -> pa.RecordBatchReader:
    schema = pa.schema([pa.field(name, pa.int64(), nullable=False)])
    batches = [
        pa.record_batch([pa.array([i * mult for i in range(s, min(s + batch, rows))], pa.int64())], schema=schema)
        for s in range(0, rows, batch)
    ]
    return pa.RecordBatchReader.from_batches(schema, batches)


def apply(case: str, uri: str) -> None:
    ds = lance.dataset(uri)
    if case == "drop":
        ds.drop_columns(["tag"])
    elif case == "alter":
        ds.alter_columns({"path": "tag", "name": "label"}, {"path": "id", "nullable": True})
    elif case == "alter-cast":
        ds.alter_columns({"path": "id", "data_type": pa.int32()})
    elif case == "add-sql":
        ds.add_columns({"double_id": "id * 2", "next_id": "id + 1"})
    elif case == "add-nulls":
        ds.add_columns(pa.schema([pa.field("n", pa.float64()), pa.field("s", pa.string())]))
    elif case == "add-stream":
        ds.add_columns(int64_reader("x", ds.count_rows(), 3, 128))
    else:
        raise SystemExit(f"unknown case {case}")


def main() -> int:
    case, c_uri, py_uri = sys.argv[1:4]
    apply(case, py_uri)
    return 1 if differences(case, c_uri, py_uri) else 0


if __name__ == "__main__":
    sys.exit(main())
