"""The dataset of tests/api/test_scalar_types.c and pylance's answers for it.

The C test builds NGRAM, ZONEMAP, BLOOMFILTER, RTREE and MINHASHLSH indices
through lance-c and asks pylance (of the same Lance release) for the truth.

    scalar_types_oracle.py make URI
        writes 1600 rows in 8 fragments of 200:
          id    int64    the row number r
          ts    int64    r * 10 + 3 (sorted: ZONEMAP)
          key   utf8     "key-%06d" % (r * 7919 % 100003), unique (BLOOMFILTER)
          text  utf8     3 to 10 words of a small vocabulary (NGRAM)
          doc   utf8     near duplicates (MINHASHLSH): row r belongs to group
                         r % 100; the 16 rows of a group are one text of 40
                         words each with one word of its own
          geom  geoarrow.point, x = (r * 37 % 1000) / 1000,
                y = (r * 91 % 1000) / 1000 (RTREE)
          vec   fixed_size_list<float32>[4]
    scalar_types_oracle.py query URI VERSION FILTER...
        for each SQL filter, two lines: the ids it selects without any scalar
        index (ascending, comma-separated), then "index" when pylance's plan
        at VERSION answers it through a scalar index and returns the same
        ids, "scan" when it does not use one, "differs" when it uses one and
        returns other ids
    scalar_types_oracle.py minhash URI VERSION LIMIT ROW...
        for each row, one line: pylance's MinHashQuery over "doc" with that
        row's own text and the limit, as "id/distance" tokens ordered by
        distance, then id (distances with 9 significant digits)
    scalar_types_oracle.py segments URI TYPE COLUMN NAME PARAMS OUTDIR GROUP...
        builds one uncommitted segment per GROUP (comma-separated fragment
        ids) with create_index_uncommitted, TYPE and PARAMS (a JSON object,
        or "null") as an IndexConfig, and writes each segment's metadata
        bytes (python/lance_c_segments.py) to OUTDIR/py-COLUMN-<i>.bin; prints
        the paths, one per line
"""

import json
import os
import random
import sys

import lance
import pyarrow as pa
from lance.indices import IndexConfig
from lance.query import MinHashQuery

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import lance_c_segments as codec  # noqa: E402

ROWS = 1600
FRAGMENTS = 8
DOC_GROUPS = 100
DOC_WORDS = 40
VOCABULARY = [f"w{i}" for i in range(400)]
WORDS = ("lance columnar format vector search index fast query data file arrow table row fragment "
         "score text phrase quick brown fox umbrella zephyr quartz jackal").split()


def doc(r: int) -> str:
    group, member = r % DOC_GROUPS, r // DOC_GROUPS
    rng = random.Random(group)
    words = [rng.choice(VOCABULARY) for _ in range(DOC_WORDS)]
    words[(member * 2 + 1) % DOC_WORDS] = f"m{group}x{member}"
    return " ".join(words)


def text(r: int) -> str:
    rng = random.Random(10007 + r)
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 10)))


def make(uri: str) -> None:
    ids = list(range(ROWS))
    points = pa.StructArray.from_arrays([pa.array([((i * 37) % 1000) / 1000 for i in ids]),
                                         pa.array([((i * 91) % 1000) / 1000 for i in ids])], names=["x", "y"])
    geom = pa.field("geom", points.type, metadata={b"ARROW:extension:name": b"geoarrow.point",
                                                   b"ARROW:extension:metadata": b"{}"})
    vectors = pa.FixedSizeListArray.from_arrays(
        pa.array([float((i * 13 + j * 7) % 17) for i in ids for j in range(4)], pa.float32()), 4)
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("ts", pa.int64()), pa.field("key", pa.utf8()),
                        pa.field("text", pa.utf8()), pa.field("doc", pa.utf8()), geom,
                        pa.field("vec", vectors.type)])
    table = pa.Table.from_arrays(
        [pa.array(ids, pa.int64()), pa.array([i * 10 + 3 for i in ids], pa.int64()),
         pa.array([f"key-{(i * 7919) % 100003:06d}" for i in ids]), pa.array([text(i) for i in ids]),
         pa.array([doc(i) for i in ids]), points, vectors], schema=schema)
    lance.write_dataset(table, uri, max_rows_per_file=ROWS // FRAGMENTS)


def ids_of(ds, sql: str, use_scalar_index: bool) -> list:
    scanner = ds.scanner(columns=["id"], filter=sql, use_scalar_index=use_scalar_index)
    return sorted(scanner.to_table().column("id").to_pylist())


def query(uri: str, version: int, filters: list) -> None:
    ds = lance.dataset(uri, version=version)
    for sql in filters:
        truth = ids_of(ds, sql, False)
        print(",".join(map(str, truth)))
        if "ScalarIndexQuery" not in ds.scanner(columns=["id"], filter=sql).explain_plan():
            print("scan")
        else:
            print("index" if ids_of(ds, sql, True) == truth else "differs")


def minhash(uri: str, version: int, limit: int, rows: list) -> None:
    ds = lance.dataset(uri, version=version)
    for r in rows:
        own = ds.to_table(columns=["doc"], filter=f"id = {r}").column("doc")[0].as_py()
        hits = ds.to_table(columns=["id", "_distance"], nearest=MinHashQuery(own, "doc"), limit=limit).to_pylist()
        ordered = sorted((h["_distance"], h["id"]) for h in hits)
        print(" ".join(f"{i}/{format(d, '.9g')}" for d, i in ordered))


def segments(uri: str, index_type: str, column: str, name: str, params: str, out_dir: str, groups: list) -> None:
    ds = lance.dataset(uri)
    config = IndexConfig(index_type=index_type, parameters=json.loads(params) or {})
    for i, group in enumerate(groups):
        fragments = [int(f) for f in group.split(",")]
        # replace: the index may exist already; nothing is committed either way.
        segment = ds.create_index_uncommitted(column, config, name=name, fragment_ids=fragments, replace=True)
        path = os.path.join(out_dir, f"py-{column}-{i}.bin")
        with open(path, "wb") as f:
            f.write(codec.encode(segment))
        print(path)


def main(argv: list) -> None:
    command = argv[1] if len(argv) > 1 else ""
    if command == "make" and len(argv) == 3:
        make(argv[2])
    elif command == "query" and len(argv) >= 5:
        query(argv[2], int(argv[3]), argv[4:])
    elif command == "minhash" and len(argv) >= 6:
        minhash(argv[2], int(argv[3]), int(argv[4]), [int(r) for r in argv[5:]])
    elif command == "segments" and len(argv) >= 9:
        segments(argv[2], argv[3], argv[4], argv[5], argv[6], argv[7], argv[8:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
