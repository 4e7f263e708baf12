"""pylance's optimize of a copy, the answer for tests/api/test_optimize.c.

    optimize_oracle.py optimize C_URI PY_URI MODE FILTER

C_URI is a dataset test_optimize optimized through lance-c
(lance_dataset_optimize_indices()); PY_URI is a copy of it taken just
before.  This script optimizes PY_URI with pylance's
optimize.optimize_indices() in the same MODE:

    default      no arguments (the core's defaults)
    merge:N      num_indices_to_merge=N
    names:A+B    index_names=["A", "B"]
    retrain      retrain=True

and exits 1, printing each difference, unless both datasets then have the
same latest version and every index the same segments (the fragment sets
they cover).  On success it prints the ids of PY_URI's rows that match the
SQL filter FILTER, ascending, one line, comma-separated: the rows the C
test's filtered scan through lance-c must return.
"""

from __future__ import annotations

import sys

import lance


def options(mode: str) -> dict:
    if mode == "default":
        return {}
    if mode.startswith("merge:"):
        return {"num_indices_to_merge": int(mode[len("merge:"):])}
    if mode.startswith("names:"):
        return {"index_names": mode[len("names:"):].split("+")}
    if mode == "retrain":
        return {"retrain": True}
    raise SystemExit(f"unknown mode {mode!r}")


def segments(ds: lance.LanceDataset) -> dict:
    """Each index's segments as the sorted list of their fragment sets."""
    return {
        d.name: sorted(sorted(s.fragment_ids) for s in d.segments)
        for d in ds.describe_indices()
    }


def main(argv: list) -> int:
    command, c_uri, py_uri, mode, sql = argv[1:6]
    if command != "optimize":
        raise SystemExit(f"unknown command {command!r}")
    lance.dataset(py_uri).optimize.optimize_indices(**options(mode))
    ours, theirs = lance.dataset(c_uri), lance.dataset(py_uri)
    failures = 0
    if ours.version != theirs.version:
        print(f"{mode}: lance-c left version {ours.version}, pylance {theirs.version}", file=sys.stderr)
        failures += 1
    if segments(ours) != segments(theirs):
        print(f"{mode}: segments: lance-c {segments(ours)}, pylance {segments(theirs)}", file=sys.stderr)
        failures += 1
    if failures:
        return 1
    ids = sorted(theirs.to_table(columns=["id"], filter=sql).column("id").to_pylist())
    print(",".join(str(i) for i in ids))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
