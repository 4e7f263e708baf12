"""The independent answer for tests/c/test_evolve.c.

Usage: evolve_oracle.py CASE C_URI PY_URI [ARGS...]

C_URI is a dataset test_evolve changed through lance-c; PY_URI is a copy of
it taken before the change.  This script applies the same change to PY_URI
with pylance and exits 0 only when both datasets then have the same schema
(names, types, nullability, in order) and the same rows (sorted by id).
The merge cases also compare the row counts lance-c reported (ARGS) with
pylance's.  Any difference is printed and exits 1.

CASE commit-fragments is different: C_URI holds data files lance_write_fragments
left uncommitted; this script commits them with pylance (an Append of
fragments built from the files' own footers) and checks that the dataset
then holds the rows of PY_URI, a dataset lance-c wrote with the same stream.
"""

from __future__ import annotations

import json
import os
import sys

import pyarrow as pa

import lance
from lance.fragment import DataFile, FragmentMetadata


def canonical(uri: str) -> tuple[list, list]:
    ds = lance.dataset(uri)
    schema = [(f.name, str(f.type), f.nullable) for f in ds.schema]
    rows = sorted(ds.to_table().to_pylist(), key=lambda r: r["id"])
    return schema, rows


def merge_source(src_uri: str) -> pa.Table:
    return lance.dataset(src_uri).to_table()


def int64_reader(name: str, rows: int, mult: int, batch: int) -> pa.RecordBatchReader:
    schema = pa.schema([pa.field(name, pa.int64(), nullable=False)])
    batches = [
        pa.record_batch([pa.array([i * mult for i in range(s, min(s + batch, rows))], pa.int64())], schema=schema)
        for s in range(0, rows, batch)
    ]
    return pa.RecordBatchReader.from_batches(schema, batches)


def apply(case: str, uri: str, args: list[str]) -> dict | None:
    ds = lance.dataset(uri)
    if case == "merge-upsert":
        return ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(merge_source(args[0]))
    if case == "merge-find-or-create":
        return ds.merge_insert("id").when_not_matched_insert_all().execute(merge_source(args[0]))
    if case == "merge-delete":
        return ds.merge_insert("id").when_matched_delete().execute(merge_source(args[0]))
    if case == "merge-update-if":
        return (
            ds.merge_insert("id")
            .when_matched_update_all("target.id % 2 = 0")
            .when_not_matched_insert_all()
            .execute(merge_source(args[0]))
        )
    if case == "merge-delete-if":
        return (
            ds.merge_insert("id")
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .when_not_matched_by_source_delete("id < 100")
            .execute(merge_source(args[0]))
        )
    if case == "merge-by-source-delete":
        return (
            ds.merge_insert("id")
            .when_not_matched_by_source_delete()
            .execute(merge_source(args[0]))
        )
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
    return None


def commit_fragments(files_uri: str, expected_uri: str) -> int:
    """Commits the data files under files_uri/data that no version lists."""
    ds = lance.dataset(files_uri)
    listed = {f.path for frag in ds.get_fragments() for f in frag.metadata.files}
    data_dir = os.path.join(files_uri, "data")
    new_files = sorted(f for f in os.listdir(data_dir) if f not in listed)
    # The files were written against this dataset's schema: they hold the
    # same fields, in the same columns, as its committed files.
    template = ds.get_fragments()[0].metadata.files[0]
    fragments = []
    next_id = max((frag.fragment_id for frag in ds.get_fragments()), default=-1) + 1
    for name in new_files:
        reader = lance.file.LanceFileReader(os.path.join(data_dir, name))
        meta = reader.metadata()
        major, minor = meta.major_version, meta.minor_version
        files = [DataFile(name, list(template.fields), list(template.column_indices), major, minor)]
        fragments.append(FragmentMetadata(next_id, files, meta.num_rows))
        next_id += 1
    before = ds.count_rows()
    op = lance.LanceOperation.Append(fragments)
    lance.LanceDataset.commit(files_uri, op, read_version=ds.version)
    after = lance.dataset(files_uri)
    added = after.to_table().to_pylist()[before:]
    expected = lance.dataset(expected_uri).to_table().to_pylist()
    ok = len(new_files) > 0 and sorted(added, key=lambda r: r["id"]) == sorted(expected, key=lambda r: r["id"])
    if not ok:
        print(f"commit-fragments: {len(new_files)} new files, {len(added)} rows added, {len(expected)} expected")
    return 0 if ok else 1


def main() -> int:
    case, c_uri, py_uri, *args = sys.argv[1:]
    if case == "commit-fragments":
        return commit_fragments(c_uri, py_uri)
    counts = apply(case, py_uri, args)
    failures = 0
    if counts is not None:
        theirs = [counts["num_inserted_rows"], counts["num_updated_rows"], counts["num_deleted_rows"]]
        ours = [int(a) for a in args[1:4]]
        if ours != theirs:
            print(f"{case}: lance-c counted {ours} (inserted, updated, deleted), pylance {theirs}")
            failures += 1
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
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
