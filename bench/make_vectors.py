"""Writes the benchmarks' vector table: ROWS x DIM clustered float32 vectors
(256 centres uniform in [-10, 10], normal noise of sd 2, from a fixed seed)
with an int64 "id", in 16 fragments of row groups of 8,192 rows.

    python bench/make_vectors.py URI ROWS DIM

Written in batches of 65,536 rows, so the table's size is not bounded by
memory."""

import sys

import lance
import numpy as np
import pyarrow as pa


def main() -> None:
    uri, rows, dim = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = np.random.default_rng(11)
    centres = rng.uniform(-10, 10, (256, dim)).astype(np.float32)

    def batches():
        step = 65536
        for lo in range(0, rows, step):
            n = min(step, rows - lo)
            v = centres[rng.integers(0, 256, n)] + rng.normal(0, 2, (n, dim)).astype(np.float32)
            yield pa.record_batch([pa.array(np.arange(lo, lo + n, dtype=np.int64)),
                                   pa.FixedSizeListArray.from_arrays(pa.array(v.reshape(-1)), dim)],
                                  names=["id", "vec"])

    schema = pa.schema([("id", pa.int64()), ("vec", pa.list_(pa.float32(), dim))])
    lance.write_dataset(pa.RecordBatchReader.from_batches(schema, batches()), uri,
                        max_rows_per_file=(rows + 15) // 16, max_rows_per_group=8192)


if __name__ == "__main__":
    main()
