"""What pylance's take returns, printed as text for tests/api/test_take.c.

The C test runs this with the venv's Python (pylance of the same Lance
release) and compares the output with the rows lance_dataset_take() /
lance_dataset_take_rows() return, line by line, in history_oracle.py's row
format.

    take_oracle.py take URI VERSION COLUMNS INDICES
    take_oracle.py take_rows URI VERSION COLUMNS ROW_IDS
        the rows `take` / `_take_rows` return; COLUMNS is a comma list or
        "*", INDICES and ROW_IDS comma lists (empty = none)
"""

import sys

import lance

from history_oracle import print_rows


def main(argv):
    command, uri, version, columns, numbers = argv[1:6]
    ds = lance.dataset(uri, version=int(version))
    wanted = None if columns == "*" else columns.split(",")
    ids = [int(x) for x in numbers.split(",")] if numbers else []
    if command == "take":
        print_rows(ds.take(ids, columns=wanted))
    elif command == "take_rows":
        print_rows(ds._take_rows(ids, columns=wanted))
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main(sys.argv)
