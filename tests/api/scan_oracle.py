"""What pylance's scanner returns, printed as text for tests/api/test_scan_tuning.c.

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

Substrait filters have their own oracle, substrait_oracle.py, beside this one.
"""

import json
import sys

import lance


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


def main(argv):
    if argv[1] == "scan":
        scan(argv[2], argv[3], json.loads(argv[4]))
    else:
        sys.exit(f"unknown command {argv[1]}")


if __name__ == "__main__":
    main(sys.argv)
