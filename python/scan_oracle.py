"""What pylance's scanner returns, printed as text for tests/c/test_scan_tuning.c.

The C test runs this with the venv's Python (pylance of the same Lance
release) on the dataset it wrote, and compares the output with what the C
API returns for the same settings.

    scan_oracle.py scan URI VERSION OPTIONS_JSON
        OPTIONS_JSON is a JSON object of keyword arguments for
        LanceDataset.scanner() (columns, filter, batch_size,
        strict_batch_size, with_row_id, include_deleted_rows, ...).
        Prints "batches <n1>,<n2>,..." (the row count of every batch, in
        order), then one line per row: the row's values in column order,
        joined by tabs, null as "null".
    scan_oracle.py substrait URI OUT_FILE
        Writes to OUT_FILE the Substrait ExtendedExpression that pyarrow
        makes of (id >= 100) & (id < 300) & (tag == "t3") over the dataset's
        schema, then checks that pylance filtering with those bytes gives
        the rows the SQL "id >= 100 AND id < 300 AND tag = 't3'" gives, and
        prints those rows (ids, one per line).
"""

import json
import sys

import lance
import pyarrow as pa
import pyarrow.compute as pc


def value_text(value):
    return "null" if value is None else str(value)


def scan(uri, version, options):
    ds = lance.dataset(uri, version=int(version))
    reader = ds.scanner(**options).to_reader()
    sizes, rows = [], []
    for batch in reader:
        sizes.append(str(batch.num_rows))
        columns = [batch.column(i).to_pylist() for i in range(batch.num_columns)]
        for r in range(batch.num_rows):
            rows.append("\t".join(value_text(c[r]) for c in columns))
    print("batches " + ",".join(sizes))
    for row in rows:
        print(row)


def substrait(uri, out_file):
    ds = lance.dataset(uri)
    expr = (pc.field("id") >= 100) & (pc.field("id") < 300) & (pc.field("tag") == "t3")
    # pyarrow cannot describe a fixed-size list in Substrait; a stand-in
    # field keeps every position, so the references still match the dataset.
    schema = pa.schema(
        [
            pa.field(f"unused_{i}", pa.int8()) if pa.types.is_fixed_size_list(f.type) else f
            for i, f in enumerate(ds.schema)
        ]
    )
    data = expr.to_substrait(schema)
    with open(out_file, "wb") as f:
        f.write(bytes(data))
    by_expr = ds.to_table(columns=["id"], filter=expr).column("id").to_pylist()
    by_sql = ds.to_table(columns=["id"], filter="id >= 100 AND id < 300 AND tag = 't3'").column("id").to_pylist()
    if by_expr != by_sql:
        sys.exit("pylance: the Substrait expression and the SQL filter disagree")
    for i in by_sql:
        print(i)


def main(argv):
    if argv[1] == "scan":
        scan(argv[2], argv[3], json.loads(argv[4]))
    elif argv[1] == "substrait":
        substrait(argv[2], argv[3])
    else:
        sys.exit(f"unknown command {argv[1]}")


if __name__ == "__main__":
    main(sys.argv)
