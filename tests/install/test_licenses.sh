#!/usr/bin/env bash
# The licence check of what ships (scripts/licenses.sh), and the licence
# files it collects for the package (--texts): the tree passes, and
# doctored copies of cargo metadata's JSON show what it refuses and what it
# lets through.  Reads Cargo.lock and the cargo registry, builds nothing.
#   tests/install/test_licenses.sh SOURCE_DIR
set -euo pipefail
src=$(cd "${1:?usage: test_licenses.sh SOURCE_DIR}" && pwd)
licenses=$src/scripts/licenses.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# expect STATUS TEXT COMMAND...: COMMAND exits with STATUS and its output
# holds TEXT (empty: anything).
expect() {
  local want=$1 text=$2 status=0
  shift 2
  "$@" >"$work/out" 2>&1 || status=$?
  if [ "$status" -ne "$want" ] || { [ -n "$text" ] && ! grep -qF -- "$text" "$work/out"; }; then
    echo "FAIL: $* exited $status (expected $want${text:+, with: $text}); its output:" >&2
    cat "$work/out" >&2
    exit 1
  fi
}

# The tree as it is: every licence allowed, the inventory current.
expect 0 "every licence allowed; THIRD-PARTY-LICENSES.md checked" "$licenses" --check

"$licenses" --print-metadata >"$work/metadata.json"
# doctor FIELD=VALUE SELECTOR OUT: a copy of the metadata in which the crates
# SELECTOR picks get license VALUE (null: none, with license_file LICENSE.custom).
# SELECTOR is a crate name, or proc-macro (the first procedural macro).  Prints
# "name version" of the crate changed.
doctor() {
  python3 - "$work/metadata.json" "$1" "$2" "$3" <<'PY'
import json, sys
path, expression, selector, out = sys.argv[1:]
meta = json.load(open(path))
if selector == "proc-macro":
    chosen = [p for p in meta["packages"] if any("proc-macro" in t["kind"] for t in p["targets"])][:1]
else:
    chosen = [p for p in meta["packages"] if p["name"] == selector]
if not chosen:
    sys.exit(f"FAIL: no crate {selector} in cargo metadata")
for p in chosen:
    p["license"] = None if expression == "null" else expression
    if expression == "null":
        p["license_file"] = "LICENSE.custom"
json.dump(meta, open(out, "w"))
print(chosen[0]["name"], chosen[0]["version"])
PY
}

# A disallowed licence deep in the graph (zstd-sys: lance -> ... -> zstd ->
# zstd-safe -> zstd-sys, a C library): named with the identifier at fault.
crate=$(doctor "BSD-3-Clause AND GPL-2.0-only" zstd-sys "$work/and.json")
expect 1 "licenses: $crate: 'BSD-3-Clause AND GPL-2.0-only': GPL-2.0-only not in the allow list" \
  "$licenses" --check --metadata "$work/and.json"
crate=$(doctor "GPL-3.0-only" zstd-sys "$work/alone.json")
expect 1 "licenses: $crate: 'GPL-3.0-only': GPL-3.0-only not in the allow list" "$licenses" --check --metadata "$work/alone.json"
crate=$(doctor "GPL-2.0-only WITH Classpath-exception-2.0 OR LGPL-2.1-only" zstd-sys "$work/with.json")
expect 1 "licenses: $crate: 'GPL-2.0-only WITH Classpath-exception-2.0 OR LGPL-2.1-only': GPL-2.0-only WITH Classpath-exception-2.0, LGPL-2.1-only not in the allow list" \
  "$licenses" --check --metadata "$work/with.json"
crate=$(doctor "Apache-2.0 WITH Some-exception" zstd-sys "$work/exception.json")
expect 1 "licenses: $crate: 'Apache-2.0 WITH Some-exception': Apache-2.0 WITH Some-exception not in the allow list" \
  "$licenses" --check --metadata "$work/exception.json"
crate=$(doctor null zstd-sys "$work/none.json")
expect 1 "licenses: $crate: declares no licence expression (license-file: LICENSE.custom)" \
  "$licenses" --check --metadata "$work/none.json"
crate=$(doctor "MIT AND (Apache-2.0" zstd-sys "$work/broken.json")
expect 1 "licenses: $crate: cannot read the licence expression 'MIT AND (Apache-2.0'" \
  "$licenses" --check --metadata "$work/broken.json"

# One allowed branch of an OR is enough, in either spelling: the inventory
# written from such metadata checks clean and lists the expression as declared.
for expression in "GPL-2.0-only OR BSD-3-Clause" "(GPL-3.0-only AND MIT) OR (Zlib AND ISC)" "GPL-3.0/MIT"; do
  crate=$(doctor "$expression" zstd-sys "$work/or.json")
  expect 0 "THIRD-PARTY-LICENSES.md written" "$licenses" --metadata "$work/or.json" \
    --output "$work/THIRD-PARTY-LICENSES.md"
  grep -qF "| ${crate% *} | ${crate#* } | $expression |" "$work/THIRD-PARTY-LICENSES.md" ||
    { echo "FAIL: the inventory does not list $crate under '$expression'" >&2; exit 1; }
  expect 0 "every licence allowed" "$licenses" --check --metadata "$work/or.json" \
    --output "$work/THIRD-PARTY-LICENSES.md"
done

# What only runs while compiling is neither checked nor listed: lance-c's
# build dependency and a procedural macro under a disallowed licence leave
# the tree's inventory current.
doctor "GPL-3.0-only" cc "$work/build-dep.json" >/dev/null
expect 0 "THIRD-PARTY-LICENSES.md checked" "$licenses" --check --metadata "$work/build-dep.json"
doctor "GPL-3.0-only" proc-macro "$work/proc-macro.json" >/dev/null
expect 0 "THIRD-PARTY-LICENSES.md checked" "$licenses" --check --metadata "$work/proc-macro.json"

# An allowed licence that differs from the inventory: the inventory is stale.
doctor "MIT" zstd-sys "$work/stale.json" >/dev/null
expect 1 "THIRD-PARTY-LICENSES.md does not match Cargo.lock: run scripts/licenses.sh" \
  "$licenses" --check --metadata "$work/stale.json"
expect 1 "THIRD-PARTY-LICENSES.md does not match Cargo.lock" \
  "$licenses" --texts "$work/stale-texts" --metadata "$work/stale.json"

# The licence files (--texts, what the package holds): a folder per crate,
# with the files of its published source, those of the C library it bundles
# included, or, for a crate published without any (NO_LICENSE_FILE), its
# declared licence.
expect 0 "licence files copied into $work/texts" "$licenses" --texts "$work/texts"
crates=$(grep -c '^| [^ ]* | [0-9][^ ]* | .* |$' "$src/THIRD-PARTY-LICENSES.md")
[ "$(find "$work/texts" -mindepth 1 -maxdepth 1 -type d | wc -l)" = "$crates" ] ||
  { echo "FAIL: --texts did not write one folder for each of the $crates crates" >&2; exit 1; }
zstd=$(ls -d "$work"/texts/zstd-sys-*)
[ -s "$zstd/LICENSE" ] && [ -s "$zstd/zstd/LICENSE" ] ||
  { echo "FAIL: $zstd lacks zstd-sys's LICENSE or the bundled zstd's zstd/LICENSE" >&2; exit 1; }
lance=$(ls -d "$work"/texts/lance-[0-9]*)
grep -qx "  license:    Apache-2.0" "$lance/DECLARED-LICENSE.txt" ||
  { echo "FAIL: $lance/DECLARED-LICENSE.txt does not hold lance's declared licence" >&2; exit 1; }
expect 1 "name a folder that does not exist" "$licenses" --texts "$work/texts"

# A crate whose published source holds no licence file, and one whose source
# is not in the registry, fail every mode, naming the crate.
# relocate DIR CRATE OUT: a copy of the metadata with CRATE's source in DIR;
# prints "name version" of the crate.
relocate() {
  python3 - "$work/metadata.json" "$1" "$2" "$3" <<'PY'
import json, os, sys
path, folder, name, out = sys.argv[1:]
meta = json.load(open(path))
chosen = [p for p in meta["packages"] if p["name"] == name]
for p in chosen:
    p["manifest_path"] = os.path.join(folder, "Cargo.toml")
json.dump(meta, open(out, "w"))
print(chosen[0]["name"], chosen[0]["version"])
PY
}
mkdir "$work/bare"
crate=$(relocate "$work/bare" zstd-sys "$work/bare.json")
expect 1 "licenses: $crate: its published source holds no licence file" \
  "$licenses" --check --metadata "$work/bare.json"
crate=$(relocate "$work/absent" zstd-sys "$work/absent.json")
expect 1 "licenses: $crate: its source is not in the cargo registry" \
  "$licenses" --texts "$work/absent-texts" --metadata "$work/absent.json"
[ ! -e "$work/absent-texts" ] || { echo "FAIL: --texts wrote a folder although it failed" >&2; exit 1; }
echo "licences: the tree passes; disallowed, missing and unreadable licences fail naming the crate; OR, build-time crates and staleness as stated; each crate's licence files or its declaration collected, a crate without either fails"
