"""Writes the Blob v2 dataset tests/api/test_blob.c (and tests/cpp/test_blob_wrapper.cpp) read, with pylance.

    blob_oracle.py write DIR

Writes DIR/blobs.lance: 3 fragments of 4 rows, columns id (int64), blob (a
Blob v2 column: inline, packed and dedicated values, a NULL and an empty
value) and raw (plain large_binary), then deletes the row with id 1 so row
positions and row ids differ.  Every non-null value is also written to
DIR/expected/<id>.bin with the bytes handed to pylance.

Prints one line per live row in scan order: "<id> <_rowid> <size>", or
"<id> <_rowid> null" for a null value.
"""

import os
import random
import sys

import lance
import pyarrow as pa
from lance.blob import Blob, blob_array, blob_field

INLINE_MAX = 64  # up to this many bytes stay in the data file
DEDICATED_MIN = 200_000  # from this size a value gets a file of its own


def values():
    rng = random.Random(8)

    def noise(n):
        return bytes(rng.getrandbits(8) for _ in range(n))

    return [
        b"hello, blob",  # inline
        noise(40),  # inline (deleted below)
        None,  # null
        Blob.empty(),  # valid, 0 bytes
        noise(100),  # packed
        noise(5000),  # packed
        noise(300_000),  # dedicated
        b"x" * 7,  # inline
        noise(1),  # inline
        noise(250_001),  # dedicated
        noise(65),  # packed, just over the inline threshold
        noise(64),  # inline, at the threshold
    ]


def write(out_dir):
    vals = values()
    schema = pa.schema(
        [
            pa.field("id", pa.int64()),
            blob_field("blob", inline_size_threshold=INLINE_MAX, dedicated_size_threshold=DEDICATED_MIN),
            pa.field("raw", pa.large_binary()),
        ]
    )
    table = pa.table(
        {
            "id": pa.array(range(len(vals)), pa.int64()),
            "blob": blob_array(vals),
            "raw": pa.array([b"raw%d" % i for i in range(len(vals))], pa.large_binary()),
        },
        schema=schema,
    )
    uri = os.path.join(out_dir, "blobs.lance")
    # Blob v2 needs file format 2.2 or later in Lance 14.0.2.
    ds = lance.write_dataset(table, uri, data_storage_version="2.2", max_rows_per_file=4)
    ds.delete("id = 1")
    expected = os.path.join(out_dir, "expected")
    os.makedirs(expected, exist_ok=True)
    for i, v in enumerate(vals):
        if v is None:
            continue
        data = v.data if isinstance(v, Blob) else v
        with open(os.path.join(expected, f"{i}.bin"), "wb") as f:
            f.write(data or b"")
    ds = lance.dataset(uri)
    rows = ds.to_table(columns=["id"], with_row_id=True)
    for rid, row_id in zip(rows["id"].to_pylist(), rows["_rowid"].to_pylist()):
        v = vals[rid]
        size = "null" if v is None else str(len((v.data or b"") if isinstance(v, Blob) else v))
        print(rid, row_id, size)


def main(argv):
    if len(argv) != 3 or argv[1] != "write":
        sys.exit(__doc__)
    write(argv[2])


if __name__ == "__main__":
    main(sys.argv)
