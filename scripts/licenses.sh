#!/usr/bin/env bash
# The licences of the third-party code in lance-c's libraries, from
# Cargo.lock: every crate the library links (the normal dependencies of the
# default features, for this host's target), with its version and the licence
# expression its package declares.  `cargo metadata --offline --locked` reads
# the lock file and the crates already in the cargo registry: no build, no
# download (a build or `cargo fetch --locked` fills the registry).
#
#   scripts/licenses.sh [--output FILE]          writes THIRD-PARTY-LICENSES.md
#   scripts/licenses.sh --check [--output FILE]  fails (exit 1) on a licence
#       outside ALLOWED below, naming the crate, and on an inventory that no
#       longer matches Cargo.lock; writes nothing (ctest: test_licenses)
#   scripts/licenses.sh --texts DIR [--output FILE]  copies each crate's
#       licence files into DIR/<crate>-<version>/ (DIR must not exist;
#       scripts/package.sh makes the package's share/doc/lance-c/licenses/
#       with it); fails as --check does, and writes no inventory
#   scripts/licenses.sh --print-metadata         cargo metadata's JSON, as read
# --metadata FILE reads that JSON from FILE instead of running cargo (the test
# feeds a doctored copy).  CARGO names the cargo to run (default: cargo on
# PATH, else ~/.cargo/bin/cargo).
#
# Left out of the inventory: the dev-dependencies, the build dependencies and
# the procedural macros, with what only they pull in: they run while the
# library is compiled and are not part of it.
#
# A crate's licence files are the files of its published source (in the
# cargo registry) named LICENSE*, LICENCE*, COPYING*, NOTICE*, COPYRIGHT* or
# UNLICENSE*, at its top and in its folders (where it bundles other code, a
# C library for example, with that code's own), but not in its tests,
# examples, benchmarks, documentation, assets or programs, which the library
# does not contain; and the file its package names as `license-file`.  Every mode
# fails naming a crate that has none, unless NO_LICENSE_FILE below lists it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# SPDX identifiers a dependency may be used under: the permissive licences
# found in the tree, and MPL-2.0 (file-level copyleft; its crates are used as
# published, unmodified).  A crate passes when its expression can be satisfied
# with these: one branch of an OR, every part of an AND.  A new identifier
# fails the check until someone decides and adds it here.
ALLOWED=(0BSD Apache-2.0 BSD-2-Clause BSD-3-Clause BSL-1.0 CC0-1.0 ISC MIT MIT-0 MPL-2.0 Unicode-3.0 Unlicense
         Zlib)
# Exceptions allowed after WITH.
ALLOWED_EXCEPTIONS=(LLVM-exception)
# Crates whose published source holds no licence file, each read and
# accepted by name: --texts records for each, in place of the files, the
# licence expression, the repository and the authors its package declares
# (DECLARED-LICENSE.txt; the texts are in that repository).  A crate missing
# from this list and without a licence file fails every mode until someone
# reads its repository and adds it here.  The Lance crates (lance, lance-*,
# fsst) are published without the LICENSE of their repository, Apache-2.0,
# the licence lance-c itself ships in share/doc/lance-c/LICENSE.
NO_LICENSE_FILE=(base64-simd flatbuffers fsst geo geo-traits geoarrow-array geoarrow-expr-geo geoarrow-schema
                 geodatafusion i_overlay lance lance-arrow lance-arrow-scalar lance-arrow-stats lance-bitpacking
                 lance-core lance-datafusion lance-encoding lance-file lance-geo lance-index lance-index-core
                 lance-io lance-jsonb lance-linalg lance-namespace lance-namespace-reqwest-client lance-select
                 lance-table lance-tokenizer object_store_opendal pbjson pbjson-types rstar vsimd)

mode="write"
metadata=""
output=$root/THIRD-PARTY-LICENSES.md
texts=""
usage() {
  echo "usage: scripts/licenses.sh [--check | --texts DIR | --print-metadata] [--metadata FILE] [--output FILE]" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case $1 in
    --check) mode=check; shift ;;
    --texts) [ $# -ge 2 ] || usage; mode=texts; texts=$2; shift 2 ;;
    --print-metadata) mode=print; shift ;;
    --metadata) [ $# -ge 2 ] || usage; metadata=$2; shift 2 ;;
    --output) [ $# -ge 2 ] || usage; output=$2; shift 2 ;;
    *) usage ;;
  esac
done

cargo=${CARGO:-$(command -v cargo || echo "$HOME/.cargo/bin/cargo")}
target=$("$cargo" -vV 2>/dev/null | sed -n 's/^host: //p') || true
target=${target:-$(uname -m)-unknown-linux-gnu}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -z "$metadata" ]; then
  metadata=$work/metadata.json
  # --filter-platform: the registry holds the crates of this target only (a
  # build fetches no others), and only they are linked here.
  "$cargo" metadata --format-version 1 --offline --locked --filter-platform "$target" \
    --manifest-path "$root/Cargo.toml" >"$metadata" 2>"$work/cargo.err" ||
    { cat "$work/cargo.err" >&2
      echo "licenses: cargo metadata failed ($cargo): it reads Cargo.lock and the crates in the cargo registry, offline; a build or \`cargo fetch --locked\` puts them there" >&2
      exit 1; }
fi
[ -r "$metadata" ] || { echo "licenses: cannot read $metadata" >&2; exit 1; }
if [ "$mode" = print ]; then
  cat "$metadata"
  exit 0
fi

python3 - "$mode" "$metadata" "$output" "$target" "${ALLOWED[*]}" "${ALLOWED_EXCEPTIONS[*]}" \
  "${NO_LICENSE_FILE[*]}" "$texts" <<'PY'
import difflib, json, os, re, shutil, sys, textwrap

mode, metadata_path, output, target, allowed, allowed_exceptions, no_licence_file, texts = sys.argv[1:]
allowed = set(allowed.split())
allowed_exceptions = set(allowed_exceptions.split())
no_licence_file = set(no_licence_file.split())
out_name = os.path.basename(output)


def fail_usage(msg):
    print(f"licenses: {msg}", file=sys.stderr)
    sys.exit(1)


class BadExpression(Exception):
    pass


def evaluate(expression):
    """(passes, identifiers not allowed) for an SPDX expression.  "/" is the
    old spelling of OR that some crates still use."""
    tokens = re.findall(r"\(|\)|[^\s()]+", expression.replace("/", " OR "))
    pos = 0
    refused = []

    def peek():
        return tokens[pos] if pos < len(tokens) else None

    def take():
        nonlocal pos
        if pos >= len(tokens):
            raise BadExpression("ends early")
        pos += 1
        return tokens[pos - 1]

    def either():
        ok = both()
        while (peek() or "").upper() == "OR":
            take()
            ok = both() or ok
        return ok

    def both():
        ok = atom()
        while (peek() or "").upper() == "AND":
            take()
            ok = atom() and ok
        return ok

    def atom():
        token = take()
        if token == "(":
            ok = either()
            if take() != ")":
                raise BadExpression("unbalanced parentheses")
            return ok
        if token == ")" or token.upper() in ("AND", "OR", "WITH"):
            raise BadExpression(f"unexpected '{token}'")
        ok, name = token in allowed, token
        if (peek() or "").upper() == "WITH":
            take()
            exception = take()
            ok, name = ok and exception in allowed_exceptions, f"{token} WITH {exception}"
        if not ok:
            refused.append(name)
        return ok

    ok = either()
    if pos != len(tokens):
        raise BadExpression(f"unexpected '{tokens[pos]}'")
    return ok, refused


with open(metadata_path) as f:
    try:
        meta = json.load(f)
    except ValueError as e:
        fail_usage(f"{metadata_path} is not cargo metadata's JSON: {e}")
resolve = meta.get("resolve") or fail_usage(f"{metadata_path} has no dependency graph (resolve)")
packages = {p["id"]: p for p in meta["packages"]}
nodes = {n["id"]: n for n in resolve["nodes"]}
root = resolve["root"]


def proc_macro(pid):
    return any("proc-macro" in t["kind"] for t in packages[pid]["targets"])


def builds_c(pid):
    """The crate's build script can compile C or assembly: it builds with the
    cc or cmake crate."""
    for dep in nodes[pid]["deps"]:
        if any(k["kind"] == "build" for k in dep["dep_kinds"]) and packages[dep["pkg"]]["name"] in ("cc", "cmake"):
            return True
    return False


# The crates linked into the library: reached from lance-c through normal
# dependencies, not through (or into) a procedural macro.
linked, stack = set(), [root]
while stack:
    pid = stack.pop()
    if pid in linked:
        continue
    linked.add(pid)
    if pid != root and proc_macro(pid):
        continue
    for dep in nodes[pid]["deps"]:
        if any(k["kind"] is None for k in dep["dep_kinds"]):
            stack.append(dep["pkg"])
linked = {pid for pid in linked if pid != root and not proc_macro(pid)}
build_only = len(nodes) - 1 - len(linked)


def version_key(version):
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"[.+-]", version)]


crates = sorted((packages[pid] for pid in linked), key=lambda p: (p["name"], version_key(p["version"])))

problems = []
by_identifier = {}
for p in crates:
    expression = p.get("license")
    who = f"{p['name']} {p['version']}"
    if not expression:
        problems.append(f"{who}: declares no licence expression (license-file: {p.get('license_file') or 'none'}); "
                        f"read its licence and decide")
        continue
    try:
        ok, refused = evaluate(expression)
    except BadExpression as e:
        problems.append(f"{who}: cannot read the licence expression '{expression}' ({e})")
        continue
    if not ok:
        problems.append(f"{who}: '{expression}': {', '.join(dict.fromkeys(refused))} not in the allow list "
                        f"(ALLOWED in scripts/licenses.sh)")
    # The licences it names (an exception after WITH is not one).
    named = re.sub(r"\s+WITH\s+[^\s()]+", "", expression, flags=re.IGNORECASE)
    for identifier in dict.fromkeys(re.findall(r"[^\s()/]+", named)):
        if identifier.upper() not in ("AND", "OR"):
            by_identifier[identifier] = by_identifier.get(identifier, 0) + 1

# Each crate's licence files, as paths relative to its published source.
LICENCE_NAME = re.compile(r"(licen[cs]e|copying|notice|copyright|unlicense)([-._].*)?", re.IGNORECASE)
NOT_SHIPPED = {"tests", "test", "testdata", "examples", "example", "benches", "bench", "docs", "doc", "assets",
               "programs", "contrib", "fuzz"}


def licence_files(p):
    source = os.path.dirname(p["manifest_path"])
    found = []
    for top, dirs, files in os.walk(source):
        dirs[:] = sorted(d for d in dirs if d.lower() not in NOT_SHIPPED)
        for name in sorted(files):
            # "license_header.txt" and the like are templates, not licences.
            if LICENCE_NAME.fullmatch(name) and "header" not in name.lower() and \
                    os.path.isfile(os.path.join(top, name)):
                found.append(os.path.relpath(os.path.join(top, name), source))
    # A license-file outside the package's folder is published at its top.
    declared = p.get("license_file")
    for candidate in ([os.path.normpath(declared), os.path.basename(declared)] if declared else []):
        if not candidate.startswith("..") and os.path.isfile(os.path.join(source, candidate)):
            if candidate not in found:
                found.append(candidate)
            break
    return source, found


licence_files_of = {}
for p in crates:
    who = f"{p['name']} {p['version']}"
    source, found = licence_files(p)
    if not os.path.isdir(source):
        problems.append(f"{who}: its source is not in the cargo registry: a build or `cargo fetch --locked` "
                        f"puts it there")
    elif not found and p["name"] not in no_licence_file:
        problems.append(f"{who}: its published source holds no licence file: read the licence in its "
                        f"repository ({p.get('repository') or 'none declared'}) and, if it is the declared "
                        f"'{p.get('license')}', add the crate to NO_LICENSE_FILE in scripts/licenses.sh")
    licence_files_of[p["id"]] = (source, found)

features = ", ".join(f for f in nodes[root].get("features", []) if f != "default") or "none"
mpl = [f"{p['name']} {p['version']}" for p in crates if "MPL-2.0" in (p.get("license") or "")]
paragraphs = [
    f"lance-c is licensed under the Apache License 2.0 (`LICENSE`, `NOTICE`). The libraries it "
    f"ships, `liblance_c.so` and `liblance_c.a`, contain the code of the {len(crates)} crates below, as "
    f"`Cargo.lock` pins them for lance-c {packages[root]['version']}: the dependencies of the default "
    f"features ({features}) on `{target}`. The {build_only} crates that run only while the library "
    f"is compiled (build scripts and their dependencies, procedural macros) are not part of it and "
    f"are not listed.",
    "Each licence is the SPDX expression the crate's package declares (`/` is an old spelling of "
    "`OR`). The package holds each crate's licence, copyright and notice files as its published "
    "source has them, in `share/doc/lance-c/licenses/<crate>-<version>/` (`scripts/licenses.sh "
    "--texts`), or, for a crate published without any, the licence, repository and authors its "
    "package declares. A crate "
    "marked **C** can compile C or assembly in its build script (it builds with the `cc` or `cmake` "
    "crate), so the libraries also hold that code, under the crate's licence: aws-lc, ring, BLAKE3, "
    "zstd and lz4 among them.",
]
if mpl:
    paragraphs.append(f"MPL-2.0 (a file-level copyleft) covers {', '.join(mpl)}: they are used as published, "
                      f"unmodified, and their source code is the published crate of the version named.")
paragraphs.append("Generated by `scripts/licenses.sh` from `cargo metadata`; do not edit. "
                  "`scripts/licenses.sh --check` (ctest: `test_licenses`) fails when this file no longer "
                  "matches `Cargo.lock` or a licence is outside the script's allow list.")
lines = ["# Third-party licences", ""]
for paragraph in paragraphs:
    lines += textwrap.wrap(paragraph, 96, break_long_words=False, break_on_hyphens=False) + [""]
lines += ["| licence | crates whose expression names it |", "|---|---|"]
lines += [f"| {i} | {n} |" for i, n in sorted(by_identifier.items(), key=lambda kv: (-kv[1], kv[0]))]
lines += ["", "| crate | version | licence | C |", "|---|---|---|---|"]
lines += [f"| {p['name']} | {p['version']} | {p.get('license') or '(none)'} | {'**C**' if builds_c(p['id']) else ''} |"
          for p in crates]
text = "\n".join(lines) + "\n"

# --texts too: the package's inventory and its licence folders name the same crates.
if mode in ("check", "texts"):
    try:
        with open(output) as f:
            current = f.read()
    except OSError as e:
        current = None
        problems.append(f"{out_name}: cannot be read ({e.strerror}): run scripts/licenses.sh")
    if current is not None and current != text:
        diff = list(difflib.unified_diff(current.splitlines(), text.splitlines(), out_name, "Cargo.lock", n=0,
                                         lineterm=""))
        problems.append(f"{out_name} does not match Cargo.lock: run scripts/licenses.sh and commit the result\n"
                        + "\n".join(diff[:24]) + ("\n..." if len(diff) > 24 else ""))
elif mode == "write":
    with open(output, "w") as f:
        f.write(text)

for problem in problems:
    print(f"licenses: {problem}", file=sys.stderr)
if problems:
    sys.exit(1)

if mode == "texts":
    try:
        os.makedirs(texts)
    except OSError as e:
        fail_usage(f"--texts {texts}: cannot make it ({e.strerror}); name a folder that does not exist")
    copied, declared_only = 0, []
    for p in crates:
        source, found = licence_files_of[p["id"]]
        folder = os.path.join(texts, f"{p['name']}-{p['version']}")
        os.makedirs(folder)
        for relative in found:
            os.makedirs(os.path.dirname(os.path.join(folder, relative)), exist_ok=True)
            shutil.copyfile(os.path.join(source, relative), os.path.join(folder, relative))
            copied += 1
        if found:
            continue
        declared_only.append(p["name"])
        expression = p.get("license") or "(none declared)"
        note = [f"{p['name']} {p['version']} is published without a licence file. Its package declares:", "",
                f"  license:    {expression}",
                f"  repository: {p.get('repository') or '(none declared)'}",
                f"  authors:    {', '.join(p.get('authors') or []) or '(none declared)'}", "",
                "The licence's text and the copyright notices are in that repository."]
        if re.search(r"\bApache-2\.0\b", expression):
            note.append("The text of the Apache License 2.0 is share/doc/lance-c/LICENSE in this package.")
        with open(os.path.join(folder, "DECLARED-LICENSE.txt"), "w") as f:
            f.write("\n".join(note) + "\n")
    readme = (f"The licence, copyright and notice files of the {len(crates)} crates whose code lance-c's libraries "
              f"contain (THIRD-PARTY-LICENSES.md lists them), one folder per crate, <crate>-<version>/, with "
              f"the files as the crate's published source has them: its own at the top, those of code it "
              f"bundles (a C library, for example) under their paths. A crate published without any has "
              f"DECLARED-LICENSE.txt instead: the licence, repository and authors its package declares. "
              f"Made by scripts/licenses.sh --texts.")
    with open(os.path.join(texts, "README.txt"), "w") as f:
        f.write("\n".join(textwrap.wrap(readme, 78, break_long_words=False, break_on_hyphens=False)) + "\n")
    stale = sorted(no_licence_file - {p["name"] for p in crates if not licence_files_of[p["id"]][1]})
    if stale:
        print(f"licenses: NO_LICENSE_FILE names crates that are not linked or now have a licence file: "
              f"{', '.join(stale)}", file=sys.stderr)
    print(f"licenses: {len(crates)} crates: {copied} licence files copied into {texts}; "
          f"{len(declared_only)} published without one, their declarations written: {', '.join(declared_only)}")
    sys.exit(0)
done = "checked" if mode == "check" else "written"
print(f"licenses: {len(crates)} crates, every licence allowed; {out_name} {done}")
PY
