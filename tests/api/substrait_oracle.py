"""Substrait filters and pylance's answers for tests/api/test_scan_tuning.c.

The C test runs this with the venv's Python (pylance of the same Lance
release, and the pyarrow it brings).  pyarrow makes the Substrait bytes, as
a user of the C API would get them from an Arrow-based engine; pylance
checks that each Substrait filter and its SQL text select the same rows.

    substrait_oracle.py make URI
        writes a dataset {id: int64, val: int64 (nullable), name: utf8} of
        600 rows in 4 fragments: val = (id * 37) % 1000, null where
        id % 7 == 0; name = "n<id % 5>"
    substrait_oracle.py predicates URI OUT_DIR
        for each predicate below writes OUT_DIR/<name>.substrait (a
        Substrait ExtendedExpression of the predicate over the dataset's
        schema), checks with pylance that filtering with the expression and
        with the SQL text gives the same rows, and prints one line per
        predicate: "<name>\\t<sql>\\t<ids>", the ids (ascending, comma-separated)
        the filter selects
    substrait_oracle.py foreign URI OUT_FILE
        writes a well-formed ExtendedExpression (id < 100) over a schema with
        one column more than the dataset's: Lance must refuse it
    substrait_oracle.py not_boolean URI OUT_FILE
        writes a well-formed ExtendedExpression whose expression is the
        int64 column `val` itself, not a predicate
"""

import os
import sys

import lance
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.substrait as ps

ROWS = 600
ROWS_PER_FILE = 150

ID, VAL, NAME = pc.field("id"), pc.field("val"), pc.field("name")

# (name, pyarrow expression, the same predicate in SQL).  `id` carries the
# BTREE index the C test builds; `val` and `name` have none.
PREDICATES = [
    ("lt_plain", VAL < 100, "val < 100"),
    ("lt_indexed", ID < 100, "id < 100"),
    ("range_indexed", (ID >= 120) & (ID <= 333), "id >= 120 AND id <= 333"),
    ("and_or", ((ID >= 50) & (ID < 400)) & ((VAL > 700) | (NAME == "n3")),
     "(id >= 50 AND id < 400) AND (val > 700 OR name = 'n3')"),
    ("or_mixed", (ID < 20) | (VAL < 30), "id < 20 OR val < 30"),
    ("in_plain", VAL.isin([37, 74, 111, 999, 500, 3]), "val IN (37, 74, 111, 999, 500, 3)"),
    ("in_indexed", ID.isin([3, 141, 277, 450, 599, 1000]), "id IN (3, 141, 277, 450, 599, 1000)"),
    ("in_string", NAME.isin(["n1", "n4"]), "name IN ('n1', 'n4')"),
    ("is_null", VAL.is_null(), "val IS NULL"),
    ("is_not_null_and_indexed", VAL.is_valid() & (ID > 500), "val IS NOT NULL AND id > 500"),
    ("not_indexed", ~(ID < 550), "NOT (id < 550)"),
]


def make(uri):
    ids = list(range(ROWS))
    table = pa.table({
        "id": pa.array(ids, pa.int64()),
        "val": pa.array([None if i % 7 == 0 else (i * 37) % 1000 for i in ids], pa.int64()),
        "name": pa.array([f"n{i % 5}" for i in ids], pa.utf8()),
    })
    lance.write_dataset(table, uri, max_rows_per_file=ROWS_PER_FILE)


def ids_of(ds, filter):
    return sorted(ds.to_table(columns=["id"], filter=filter).column("id").to_pylist())


def predicates(uri, out_dir):
    ds = lance.dataset(uri)
    for name, expr, sql in PREDICATES:
        with open(os.path.join(out_dir, name + ".substrait"), "wb") as f:
            f.write(bytes(expr.to_substrait(ds.schema)))
        by_expr, by_sql = ids_of(ds, expr), ids_of(ds, sql)
        if by_expr != by_sql:
            sys.exit(f"pylance: the Substrait filter and the SQL filter of {name} disagree")
        print(f"{name}\t{sql}\t{','.join(map(str, by_sql))}")


def foreign(uri, out_file):
    schema = lance.dataset(uri).schema.append(pa.field("not_in_dataset", pa.int64()))
    with open(out_file, "wb") as f:
        f.write(bytes((ID < 100).to_substrait(schema)))


def not_boolean(uri, out_file):
    schema = lance.dataset(uri).schema
    with open(out_file, "wb") as f:
        f.write(bytes(ps.serialize_expressions([VAL], ["val"], schema)))


def main(argv):
    command = argv[1]
    if command == "make":
        make(argv[2])
    elif command == "predicates":
        predicates(argv[2], argv[3])
    elif command == "foreign":
        foreign(argv[2], argv[3])
    elif command == "not_boolean":
        not_boolean(argv[2], argv[3])
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main(sys.argv)
