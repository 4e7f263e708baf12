"""pylance's side of the Java coordinator tests (java/, test_java_coordinator).

The Java tests run this with the venv's Python (pylance of the Lance release
lance-c pins, 14.0.2) and compare its output with the lance-index tool's.

    java_coordinator_oracle.py search URI COLUMN K NPROBES QUERY...
        k-NN through the column's index, probing exactly NPROBES partitions
        (minimum and maximum), for each QUERY (comma-separated floats). For
        each query, in order: the header "id<TAB>_distance", then one line per
        row, nearest first: the id column and the distance formatted as "%g",
        as lance-index search prints them; an empty line ends each answer.
    java_coordinator_oracle.py mixed URI
        writes a dataset {id: int64} whose two fragments have data files of
        two format versions: 3 rows in format 2.0, then an append of 3 rows in
        format 2.1. Lance 14.0.2 sets the manifest feature flag "mixed data
        file versions" (1 << 8) for it. Reads it back and prints
        "rows <n>" and one line per fragment: "<id> <major>.<minor>".
"""

import sys

import lance
import numpy as np
import pyarrow as pa


def search(uri, column, k, nprobes, queries):
    ds = lance.dataset(uri)
    for query in queries:
        search_one(ds, column, query, k, nprobes)
        print()


def search_one(ds, column, query, k, nprobes):
    q = np.array([float(x) for x in query.split(",")], dtype=np.float32)
    table = ds.to_table(
        columns=["id"],
        nearest={
            "column": column,
            "q": q,
            "k": int(k),
            "minimum_nprobes": int(nprobes),
            "maximum_nprobes": int(nprobes),
        },
    )
    print("id\t_distance")
    ids = table.column("id").to_pylist()
    distances = table.column("_distance").to_pylist()
    for i, d in zip(ids, distances):
        # The float32 distance as C's printf("%g", (double)f) prints it.
        print("%d\t%g" % (i, float(np.float32(d))))


def mixed(uri):
    table = pa.table({"id": pa.array([1, 2, 3], pa.int64())})
    lance.write_dataset(table, uri, data_storage_version="2.0")
    lance.write_dataset(table, uri, mode="append", data_storage_version="2.1")
    ds = lance.dataset(uri)
    print("rows %d" % ds.count_rows())
    for f in ds.get_fragments():
        data_file = f.metadata.files[0]
        print("%d %d.%d" % (f.fragment_id, data_file.file_major_version, data_file.file_minor_version))


def main(argv):
    if len(argv) >= 7 and argv[1] == "search":
        search(argv[2], argv[3], argv[4], argv[5], argv[6:])
    elif len(argv) == 3 and argv[1] == "mixed":
        mixed(argv[2])
    else:
        sys.exit("usage: see the docstring of " + argv[0])


if __name__ == "__main__":
    main(sys.argv)
