"""What pylance says about a dataset, printed as text for tests/c/test_history.c.

The C test runs this with the venv's Python (pylance of the same Lance
release) and compares the output with what the C API gives, line by line.

    history_oracle.py versions URI
        one line per version: "<id> <timestamp in Unix ms>"
    history_oracle.py stats URI
        one line per field: "<field id> <bytes on disk>"
    history_oracle.py field_ids URI
        the ids of every field of the schema, nested ones included, ascending
    history_oracle.py rows URI VERSION
        every row of VERSION, in scan order
    history_oracle.py take URI VERSION COLUMNS INDICES
    history_oracle.py take_rows URI VERSION COLUMNS ROW_IDS
        the rows `take` / `_take_rows` return; COLUMNS is a comma list or "*"
    history_oracle.py update SRC COPY WHERE COLUMN=EXPR...
        copies the dataset at SRC to COPY, updates it there (WHERE "-" = all
        rows), prints "updated <n>" and then every row of the result
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


def columns_arg(text):
    return None if text == "*" else text.split(",")


def numbers_arg(text):
    return [int(x) for x in text.split(",")] if text else []


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
    elif command == "take":
        ds = lance.dataset(uri, version=int(argv[3]))
        print_rows(ds.take(numbers_arg(argv[5]), columns=columns_arg(argv[4])))
    elif command == "take_rows":
        ds = lance.dataset(uri, version=int(argv[3]))
        print_rows(ds._take_rows(numbers_arg(argv[5]), columns=columns_arg(argv[4])))
    elif command == "update":
        copy, where = argv[3], argv[4]
        shutil.copytree(uri, copy)
        ds = lance.dataset(copy)
        updates = dict(arg.split("=", 1) for arg in argv[5:])
        result = ds.update(updates, where=None if where == "-" else where)
        print("updated", result["num_rows_updated"])
        print_rows(lance.dataset(copy).to_table())
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
