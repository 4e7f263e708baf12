"""The independent answer for lance_write_fragments in tests/api/test_write.c.

Usage: write_oracle.py commit-fragments FILES_URI EXPECTED_URI

FILES_URI holds data files lance_write_fragments left uncommitted; this
script commits them with pylance (an Append of fragments built from the
files' own footers) and exits 0 only when the dataset then holds, in its
new fragments, exactly the rows of EXPECTED_URI, a dataset lance-c wrote
with the same stream.  Any difference is printed and exits 1.
"""

from __future__ import annotations

import os
import sys

import lance
from lance.fragment import DataFile, FragmentMetadata


def commit_fragments(files_uri: str, expected_uri: str) -> int:
    """Commits the data files under files_uri/data that no version lists."""
    ds = lance.dataset(files_uri)
    listed = {f.path for frag in ds.get_fragments() for f in frag.metadata.files}
    data_dir = os.path.join(files_uri, "data")
    new_files = sorted(f for f in os.listdir(data_dir) if f not in listed)
    # The files were written against this dataset's schema: they hold the
    # same fields, in the same columns, as its committed files.
    template = ds.get_fragments()[0].metadata.files[0]
    fragments = []
    next_id = max((frag.fragment_id for frag in ds.get_fragments()), default=-1) + 1
    for name in new_files:
        reader = lance.file.LanceFileReader(os.path.join(data_dir, name))
        meta = reader.metadata()
        major, minor = meta.major_version, meta.minor_version
        files = [DataFile(name, list(template.fields), list(template.column_indices), major, minor)]
        fragments.append(FragmentMetadata(next_id, files, meta.num_rows))
        next_id += 1
    before = ds.count_rows()
    op = lance.LanceOperation.Append(fragments)
    lance.LanceDataset.commit(files_uri, op, read_version=ds.version)
    after = lance.dataset(files_uri)
    added = after.to_table().to_pylist()[before:]
    expected = lance.dataset(expected_uri).to_table().to_pylist()
    ok = len(new_files) > 0 and sorted(added, key=lambda r: r["id"]) == sorted(expected, key=lambda r: r["id"])
    if not ok:
        print(f"commit-fragments: {len(new_files)} new files, {len(added)} rows added, {len(expected)} expected")
    return 0 if ok else 1


def main() -> int:
    case, files_uri, expected_uri = sys.argv[1:4]
    if case != "commit-fragments":
        raise SystemExit(f"unknown case {case}")
    return commit_fragments(files_uri, expected_uri)


if __name__ == "__main__":
    sys.exit(main())
