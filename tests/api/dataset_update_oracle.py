"""pylance's update of a copy, printed as text for tests/api/test_dataset_update.c.

The C test runs this with the venv's Python (pylance of the same Lance
release) and compares the output with the count lance_dataset_update()
reports and the rows it leaves, line by line, in history_oracle.py's row
format.

    dataset_update_oracle.py update SRC COPY WHERE COLUMN=EXPR...
        copies the dataset at SRC to COPY, updates it there (WHERE "-" = all
        rows), prints "updated <n>" and then every row of the result
"""

import shutil
import sys

import lance

from history_oracle import print_rows


def main(argv):
    command, uri, copy, where = argv[1:5]
    if command != "update":
        raise SystemExit(f"unknown command {command!r}")
    shutil.copytree(uri, copy)
    ds = lance.dataset(copy)
    updates = dict(arg.split("=", 1) for arg in argv[5:])
    result = ds.update(updates, where=None if where == "-" else where)
    print("updated", result["num_rows_updated"])
    print_rows(lance.dataset(copy).to_table())


if __name__ == "__main__":
    main(sys.argv)
