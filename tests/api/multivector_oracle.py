"""Multivector data and pylance's answers for tests/api/test_scan_search_extras.c.

    multivector_oracle.py make URI
        writes {id: int64, mv: list<fixed_size_list<float32>[4]>} of 300 rows
        in 3 fragments; row i holds 1 + i % 4 deterministic random vectors
    multivector_oracle.py search URI K X1 X2 ...
        the k nearest rows to the multivector query of the given floats (4
        per vector), by pylance; prints "<id> <_distance>" per hit, nearest
        first
"""

import random
import sys

import lance
import pyarrow as pa
from oracle_hits import print_hits

DIM = 4


def main(argv):
    command, uri = argv[1], argv[2]
    if command == "make":
        rng = random.Random(11)
        ids, rows = [], []
        for i in range(300):
            ids.append(i)
            rows.append([[rng.uniform(-1, 1) for _ in range(DIM)] for _ in range(1 + i % 4)])
        mv_type = pa.list_(pa.list_(pa.float32(), DIM))
        table = pa.table({"id": pa.array(ids, pa.int64()), "mv": pa.array(rows, mv_type)})
        lance.write_dataset(table, uri, max_rows_per_file=100)
    elif command == "search":
        k = int(argv[3])
        values = [float(x) for x in argv[4:]]
        query = [values[i:i + DIM] for i in range(0, len(values), DIM)]
        table = lance.dataset(uri).to_table(columns=["id", "_distance"], nearest={"column": "mv", "q": query, "k": k})
        print_hits(table, "_distance")
    else:
        raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    main(sys.argv)
