#!/usr/bin/env python3
"""Where a cargo build's time goes, from the report of `cargo build --timings`.

    bench/build_timings.py REPORT.html [--features] [--top N]

Prints, as Markdown tables: the build's wall time, its units and their summed
time; the N longest crates (unit seconds: a crate's build script and library
are added up); and with --features, for each default feature of Cargo.toml
the crates that only it brings into the graph (from `cargo tree`, which reads
Cargo.lock and needs no build) with their summed unit seconds.

A clean build's report, as docs/building.md "Build time" measured it:

    export CARGO_TARGET_DIR=$(mktemp -d) RUSTFLAGS="-C target-cpu=x86-64-v3"
    cargo build --profile quick --timings
    bench/build_timings.py $CARGO_TARGET_DIR/cargo-timings/cargo-timing.html --features
"""
import argparse
import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def units(report):
    text = Path(report).read_text()
    match = re.search(r"const UNIT_DATA = (\[.*?\]);\n", text, re.S)
    if not match:
        sys.exit(f"build_timings: no UNIT_DATA in {report}: not a cargo --timings report")
    total = re.search(r"<td>Total time:</td><td>([0-9.]+)s", text)
    return json.loads(match.group(1)), float(total.group(1)) if total else None


def default_features():
    manifest = (ROOT / "Cargo.toml").read_text()
    match = re.search(r'^default = \[(.*?)\]', manifest, re.M)
    return re.findall(r'"([^"]+)"', match.group(1)) if match else []


def graph(features):
    """The set of crates (name) a build with exactly these features compiles."""
    args = ["cargo", "tree", "-e", "normal,build", "--prefix", "none", "-f", "{p}",
            "--manifest-path", str(ROOT / "Cargo.toml"), "--no-default-features"]
    if features:
        args += ["--features", ",".join(features)]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--features", action="store_true")
    opts = parser.parse_args()

    data, wall = units(opts.report)
    per_crate = defaultdict(float)
    for unit in data:
        per_crate[unit["name"].replace("_", "-")] += unit["duration"]
    summed = sum(u["duration"] for u in data)
    print("| build | figure |\n|---|---|")
    if wall is not None:
        print(f"| wall time | {wall:.0f} s ({wall / 60:.1f} min) |")
    print(f"| units | {len(data)} |")
    print(f"| unit time, summed | {summed:.0f} s |")

    print(f"\n| crate (top {opts.top}) | unit seconds | share |\n|---|---|---|")
    for name, seconds in sorted(per_crate.items(), key=lambda kv: -kv[1])[:opts.top]:
        print(f"| `{name}` | {seconds:.0f} | {100 * seconds / summed:.1f}% |")

    if opts.features:
        features = default_features()
        everything = graph(features)
        print("\n| feature | crates only it brings | their unit seconds |\n|---|---|---|")
        for feature in features:
            rest = graph([f for f in features if f != feature])
            own = sorted(everything - rest)
            seconds = sum(per_crate.get(name.replace("_", "-"), 0.0) for name in own)
            shown = ", ".join(own[:6]) + (f" and {len(own) - 6} more" if len(own) > 6 else "")
            print(f"| `{feature}` | {len(own)}: {shown} | {seconds:.0f} |")


if __name__ == "__main__":
    main()
