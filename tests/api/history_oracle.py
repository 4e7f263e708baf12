"""What pylance says about a dataset, printed as text for tests/api/test_history.c.

The C test runs this with the venv's Python (pylance of the same Lance
release) and compares the output with what the C API gives, line by line.
take_oracle.py and dataset_update_oracle.py, beside this one, print rows
with the helpers below.

    history_oracle.py versions URI
        one line per version: "<id> <timestamp in Unix ms>"
    history_oracle.py stats URI
        one line per field: "<field id> <bytes on disk>"
    history_oracle.py field_ids URI
        the ids of every field of the schema, nested ones included, ascending
    history_oracle.py rows URI VERSION
        every row of VERSION, in scan order
    history_oracle.py restore SRC COPY VERSION
        copies the dataset at SRC to COPY, restores VERSION there, prints
        "version <n>" (the version the restore committed) and then every row
        of the result

A row is one line of "name=value" fields in column order, joined by tabs;
floats use 9 significant digits, lists are comma-separated, null is "null".
"""

import shutil
import sys

import lance


def value_text(value):
    if value is None:
        return "null"
    if isinstance(value, float):
        return format(value, ".9g")
    if isinstance(value, list):
        return ",".join(value_text(v) for v in value)
    return str(value)


def print_rows(table):
    names = table.column_names
    for row in table.to_pylist():
        print("\t".join(f"{name}={value_text(row[name])}" for name in names))


def main(argv):
    command, uri = argv[1], argv[2]
    if command == "versions":
        # The private list keeps the manifest's nanoseconds; the public one
        # rounds them into a local datetime.
        for v in lance.dataset(uri)._ds.versions():
            print(v["version"], v["timestamp"] // 1_000_000)
    elif command == "stats":
        for field in lance.dataset(uri).stats.data_stats().fields:
            print(field.id, field.bytes_on_disk)
    elif command == "field_ids":
        def walk(fields):
            for field in fields:
                yield field.id()
                yield from walk(field.children())

        for field_id in sorted(walk(lance.dataset(uri).lance_schema.fields())):
            print(field_id)
    elif command == "rows":
        print_rows(lance.dataset(uri, version=int(argv[3])).to_table())
    elif command == "restore":
        copy, version = argv[3], int(argv[4])
        shutil.copytree(uri, copy)
        lance.dataset(copy, version=version).restore()
        latest = lance.dataset(copy)
        print("version", latest.version)
        print_rows(latest.to_table())
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main(sys.argv)
