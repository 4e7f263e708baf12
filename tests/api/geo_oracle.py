"""A geospatial dataset and pylance's answers for tests/api/test_scan_tuning.c.

    geo_oracle.py make URI
        writes {id: int64, geom: geoarrow.point (x, y: float64)} of 600 rows
        in 2 fragments, x = ((id * 37) % 1000) / 1000, y = ((id * 91) % 1000)
        / 1000, and builds an RTREE index "geom_idx" on geom
    geo_oracle.py query URI FILTER
        prints the ids (ascending, comma-separated) pylance selects with the
        SQL filter, then "index" or "scan": whether its plan answered the
        filter from the RTREE index
"""

import sys

import lance
import pyarrow as pa

ROWS = 600


def make(uri: str) -> None:
    ids = list(range(ROWS))
    xs = [((i * 37) % 1000) / 1000 for i in ids]
    ys = [((i * 91) % 1000) / 1000 for i in ids]
    points = pa.StructArray.from_arrays([pa.array(xs), pa.array(ys)], names=["x", "y"])
    geom = pa.field("geom", points.type, metadata={b"ARROW:extension:name": b"geoarrow.point",
                                                   b"ARROW:extension:metadata": b"{}"})
    schema = pa.schema([pa.field("id", pa.int64()), geom])
    table = pa.Table.from_arrays([pa.array(ids, pa.int64()), points], schema=schema)
    ds = lance.write_dataset(table, uri, max_rows_per_file=ROWS // 2)
    ds.create_scalar_index("geom", "RTREE", name="geom_idx")


def query(uri: str, sql: str) -> None:
    scanner = lance.dataset(uri).scanner(columns=["id"], filter=sql)
    ids = sorted(scanner.to_table().column("id").to_pylist())
    print(",".join(map(str, ids)))
    print("index" if "ScalarIndexQuery" in scanner.explain_plan() else "scan")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "make":
        make(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "query":
        query(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
