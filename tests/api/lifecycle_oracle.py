"""pylance's view of a dataset, and pylance as another writer, for
tests/api/test_lifecycle.c.

    lifecycle_oracle.py state URI VERSION QUERIES FILTER...
    lifecycle_oracle.py append URI SOURCE_URI ROWS_PER_FILE
    lifecycle_oracle.py compact URI TARGET_ROWS

state: reads version VERSION of URI and prints, one item a line, what the
C test prints from lance-c's answers at that version:

    version V
    fragments A,B,...                 the version's fragments, in order
    index NAME TYPE                   every user index, by name
    segment UUID A,B,...              its segments (by UUID), their fragments
    coverage NAME indexed ... unindexed ... stale ...
    rows N                            the live rows
    filter K indexed=I: ID,...        each FILTER's ids, ascending; I = 1
                                      when its plan uses a scalar index
    knn Q: ID,...                     the exact 10 nearest live rows to
                                      query Q (squared L2 in float64 over
                                      the float32 vectors; ties by smaller id)

QUERIES is the query vectors, ';' between vectors and ',' between values.

append: appends the rows of the dataset at SOURCE_URI to URI as pylance
commits a load, ROWS_PER_FILE rows per fragment; prints the new version.

compact: pylance's compact_files with defer_index_remap=True (the indices
are not rewritten; a fragment-reuse index records the rewrite) and
TARGET_ROWS rows per fragment; prints the metrics, the new version and
how many fragment-reuse indices it then has.
"""

from __future__ import annotations

import sys

import lance
import numpy as np


def ids_text(ids) -> str:
    return ",".join(str(i) for i in ids)


def state(uri: str, version: int, queries: str, filters: list) -> int:
    ds = lance.dataset(uri, version=version)
    present = [f.fragment_id for f in ds.get_fragments()]
    print(f"version {ds.version}")
    print(f"fragments {ids_text(present)}")
    user = sorted(
        (d for d in ds.describe_indices() if not d.name.startswith("__")),  # system indices aside
        key=lambda d: d.name,
    )
    for d in user:
        print(f"index {d.name} {d.index_type}")
        covered = set()
        for s in sorted(d.segments, key=lambda s: s.uuid):
            frags = sorted(s.fragment_ids)
            covered.update(frags)
            print(f"segment {s.uuid} {ids_text(frags)}")
        indexed = [f for f in present if f in covered]
        unindexed = [f for f in present if f not in covered]
        stale = sorted(covered.difference(present))
        print(
            f"coverage {d.name} indexed {ids_text(indexed)} unindexed {ids_text(unindexed)} "
            f"stale {ids_text(stale)}"
        )
    table = ds.to_table(columns=["id", "vec", "tag"])
    print(f"rows {table.num_rows}")
    for k, sql in enumerate(filters):
        indexed = int("ScalarIndexQuery" in ds.scanner(columns=["id"], filter=sql).explain_plan())
        ids = sorted(ds.to_table(columns=["id"], filter=sql).column("id").to_pylist())
        print(f"filter {k} indexed={indexed}: {ids_text(ids)}")
    ids = table.column("id").to_numpy()
    dim = table.schema.field("vec").type.list_size
    vectors = table.column("vec").combine_chunks().flatten().to_numpy().reshape(-1, dim)
    vectors = vectors.astype(np.float64)
    for q, text in enumerate(queries.split(";")):
        query = np.array([float(x) for x in text.split(",")], dtype=np.float32).astype(np.float64)
        distance = ((vectors - query) ** 2).sum(axis=1)
        order = np.lexsort((ids, distance))[:10]
        print(f"knn {q}: {ids_text(ids[order])}")
    return 0


def main(argv: list) -> int:
    command = argv[1]
    if command == "state":
        return state(argv[2], int(argv[3]), argv[4], argv[5:])
    if command == "append":
        rows = lance.dataset(argv[3]).to_table()
        ds = lance.write_dataset(rows, argv[2], mode="append", max_rows_per_file=int(argv[4]))
        print(ds.version)
        return 0
    if command == "compact":
        ds = lance.dataset(argv[2])
        metrics = ds.optimize.compact_files(
            defer_index_remap=True, target_rows_per_fragment=int(argv[3])
        )
        after = lance.dataset(argv[2])
        reuse = [d for d in after.describe_indices() if d.index_type == "FragmentReuse"]
        print(
            f"removed {metrics.fragments_removed} added {metrics.fragments_added} "
            f"version {after.version} reuse_indices {len(reuse)}"
        )
        return 0
    raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
