"""The independent answer for tests/api/test_merge_insert.c.

Usage: merge_insert_oracle.py CASE C_URI PY_URI SOURCE_URI INSERTED UPDATED DELETED

C_URI is a dataset test_merge_insert merged the rows of SOURCE_URI into
through lance-c, which counted INSERTED, UPDATED and DELETED rows; PY_URI
is a copy of it taken before the merge.  This script does the same merge
into PY_URI with pylance and exits 0 only when pylance counted the same
rows and both datasets then have the same schema and the same rows
(evolve_oracle.differences()).  Any difference is printed and exits 1.
"""

from __future__ import annotations

import sys

import lance

from evolve_oracle import differences


def merge(case: str, uri: str, source_uri: str) -> dict:
    ds = lance.dataset(uri)
    source = lance.dataset(source_uri).to_table()
    if case == "merge-upsert":
        builder = ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
    elif case == "merge-find-or-create":
        builder = ds.merge_insert("id").when_not_matched_insert_all()
    elif case == "merge-delete":
        builder = ds.merge_insert("id").when_matched_delete()
    elif case == "merge-update-if":
        builder = ds.merge_insert("id").when_matched_update_all("target.id % 2 = 0").when_not_matched_insert_all()
    elif case == "merge-delete-if":
        builder = (
            ds.merge_insert("id")
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .when_not_matched_by_source_delete("id < 100")
        )
    elif case == "merge-by-source-delete":
        builder = ds.merge_insert("id").when_not_matched_by_source_delete()
    else:
        raise SystemExit(f"unknown case {case}")
    return builder.execute(source)


def main() -> int:
    case, c_uri, py_uri, source_uri, *ours = sys.argv[1:]
    counts = merge(case, py_uri, source_uri)
    failures = 0
    theirs = [counts["num_inserted_rows"], counts["num_updated_rows"], counts["num_deleted_rows"]]
    if [int(a) for a in ours] != theirs:
        print(f"{case}: lance-c counted {ours} (inserted, updated, deleted), pylance {theirs}")
        failures += 1
    failures += differences(case, c_uri, py_uri)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
