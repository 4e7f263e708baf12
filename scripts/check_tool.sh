#!/usr/bin/env bash
# The lance-index tool's command check: the commands are the Command rows
# the files tools/lance_index_*.c define (`const Command x = {"name", ...}`),
# and this script fails (exit 1, one line per disagreement) when something
# that lists them drifts:
#   1. the table `commands` in tools/lance_index.c (which main dispatches
#      on and `lance-index help` prints) holds every row once, and no other;
#   2. tools/lance_index.h declares every row (extern const Command ...) and
#      its first comment names each file's commands, "file.c (a, b, c)",
#      exactly those the file defines;
#   3. the overview block of docs/lance-index.md (its first indented code
#      block) has a `lance-index NAME` line for every command, and names no
#      command the table lacks;
#   4. no command's option table (its `static const Option ...[]`, the
#      VECTOR_OPTIONS-style macros expanded) holds more options than
#      MAX_OPTIONS in tools/lance_index.h; the report prints the largest.
#      (OPTIONS_FIT fails the build on the same, and main refuses to run.)
# It reads files only: no build, python3 alone.
#
# Usage:
#   check_tool.sh [--root DIR]      the check (default root: this script's
#                                   parent directory)
#   check_tool.sh --planted-drift   plant drifts in a copy and check that
#                                   this script reports them
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

if [[ "${1:-}" == "--planted-drift" ]]; then
    root=$(dirname "$here")
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    mkdir -p "$tmp/docs"
    cp -r "$root/tools" "$tmp/tools"
    cp "$root/docs/lance-index.md" "$tmp/docs/"
    bash "$here/check_tool.sh" --root "$tmp" > "$tmp/before" || true
    # Drift 1: a command defined in a file but in no list (the table, the
    # header's declarations and comment, the manual).  Drift 2: the manual
    # loses train-coordinator's line.  Drift 3: MAX_OPTIONS below what
    # build takes.
    python3 - "$tmp" <<'PY'
import re, sys
tmp = sys.argv[1]
path = tmp + "/tools/lance_index_rounds.c"
open(path, "a").write('\nstatic const Option planted_options[] = {{NULL, 0}};\n'
                      'const Command planted_command = {\n    "planted-probe", NULL, "", "", "", planted_options, 0};\n')
path = tmp + "/docs/lance-index.md"
lines = open(path).read().split("\n")
kept = [l for l in lines if not l.startswith("    lance-index train-coordinator")]
assert len(kept) == len(lines) - 1, "docs/lance-index.md: no train-coordinator line to remove"
open(path, "w").write("\n".join(kept))
path = tmp + "/tools/lance_index.h"
text = open(path).read()
text, n = re.subn(r"enum \{ MAX_OPTIONS = \d+ \};", "enum { MAX_OPTIONS = 8 };", text)
assert n == 1, "tools/lance_index.h: no MAX_OPTIONS to lower"
open(path, "w").write(text)
PY
    status=0
    bash "$here/check_tool.sh" --root "$tmp" > "$tmp/after" || status=$?
    # shellcheck source=SCRIPTDIR/planted_drift.sh
    source "$here/planted_drift.sh"
    planted_verdict "$tmp/before" "$tmp/after" "$status" \
            "planted-probe (planted_command, tools/lance_index_rounds.c) is not in the table" \
            "tools/lance_index.h does not declare planted_command" \
            "the comment of tools/lance_index.h does not name planted-probe" \
            "docs/lance-index.md: its overview block has no line for planted-probe" \
            "docs/lance-index.md: its overview block has no line for train-coordinator" \
            "build takes 24 options, more than MAX_OPTIONS (8)" || exit 1
    exit 0
fi

exec python3 - "$here" "$@" <<'PY'
import glob
import os
import re
import sys

here = sys.argv[1]
args = sys.argv[2:]
root = os.path.dirname(here)
while args:
    a = args.pop(0)
    if a == "--root" and args:
        root = args.pop(0)
    else:
        sys.exit("usage: check_tool.sh [--root DIR] | check_tool.sh --planted-drift")
tools = os.path.join(root, "tools")
header = os.path.join(tools, "lance_index.h")
main_c = os.path.join(tools, "lance_index.c")
manual = os.path.join(root, "docs", "lance-index.md")

problems = []


def bad(msg):
    problems.append(msg)


def rel(path):
    return os.path.relpath(path, root)


def code(text):
    """C text without its comments."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


# ---- the commands the files define --------------------------------------
defined = []  # (variable, name, file)
files = sorted(glob.glob(os.path.join(tools, "lance_index_*.c")))
for path in files:
    for var, name in re.findall(r'(?m)^const Command (\w+) = \{\s*"([^"]*)"', code(open(path).read())):
        defined.append((var, name, os.path.basename(path)))
if not defined:
    sys.exit("check_tool.sh: no `const Command x = {\"name\", ...}` in %s/lance_index_*.c" % rel(tools))
name_of = {var: name for var, name, _ in defined}
seen = {}
for var, name, f in defined:
    if name in seen:
        bad("the command name %s is defined twice (%s and %s)" % (name, seen[name], var))
    seen[name] = var

# ---- 1. the table ---------------------------------------------------------
main_text = code(open(main_c).read())
m = re.search(r"static const Command\s*\*\s*const commands\[\]\s*=\s*\{(.*?)\};", main_text, re.S)
if not m:
    bad("%s: no table `static const Command* const commands[] = {...};`" % rel(main_c))
    table = []
else:
    table = re.findall(r"&\s*(\w+)", m.group(1))
for var, name, f in defined:
    n = table.count(var)
    if n == 0:
        bad("%s (%s, tools/%s) is not in the table of %s: main cannot run it and help does not list it"
            % (name, var, f, rel(main_c)))
    elif n > 1:
        bad("%s (%s) is in the table of %s %d times" % (name, var, rel(main_c), n))
for var in table:
    if var not in name_of:
        bad("the table of %s holds %s, which no tools/lance_index_*.c defines" % (rel(main_c), var))

# ---- 2. the header: its declarations and its comment ---------------------
header_text = open(header).read()
declared = []
for decl in re.findall(r"extern const Command\s+([^;]*);", code(header_text)):
    declared += [w.strip() for w in decl.split(",") if w.strip()]
for var, name, f in defined:
    if var not in declared:
        bad("%s does not declare %s (extern const Command ...)" % (rel(header), var))
for var in declared:
    if var not in name_of:
        bad("%s declares %s, which no tools/lance_index_*.c defines" % (rel(header), var))
first_comment = re.match(r"\s*/\*(.*?)\*/", header_text, re.S)
comment = re.sub(r"\s*\n\s*\*\s?", " ", first_comment.group(1)) if first_comment else ""
listed = {}  # file -> [names]
for f, names in re.findall(r"(lance_index_\w+\.c) \(([^)]*)\)", comment):
    listed[f] = [w.strip() for w in re.split(r",|\band\b", names) if w.strip()]
for var, name, f in defined:
    if f not in listed:
        bad("the comment of %s does not name tools/%s, which defines %s" % (rel(header), f, name))
    elif name not in listed[f]:
        bad("the comment of %s does not name %s among the commands of %s" % (rel(header), name, f))
for f, names in listed.items():
    for name in names:
        if (name, f) not in [(n, g) for _, n, g in defined]:
            bad("the comment of %s names %s as a command of %s, which does not define it" % (rel(header), name, f))

# ---- 3. the manual's overview block --------------------------------------
block, started = [], False
for line in open(manual).read().split("\n"):
    if line.startswith("    "):
        started = True
        block.append(line)
    elif started and line.strip():
        break
in_block = {}
for line in block:
    m = re.match(r"^\s+lance-index ([a-z][a-z0-9-]*)\b", line)
    if m:
        in_block[m.group(1)] = in_block.get(m.group(1), 0) + 1
for var, name, f in defined:
    if name not in in_block:
        bad("%s: its overview block has no line for %s (`lance-index %s ...`)" % (rel(manual), name, name))
for name in in_block:
    if name not in seen:
        bad("%s: its overview block names `lance-index %s`, which is no command" % (rel(manual), name))

# ---- 4. the option tables fit MAX_OPTIONS ---------------------------------
m = re.search(r"enum\s*\{\s*MAX_OPTIONS\s*=\s*(\d+)\s*\}", code(header_text))
if not m:
    bad("%s: no `enum { MAX_OPTIONS = N };`" % rel(header))
max_options = int(m.group(1)) if m else 0
macros = {}
for path in [header] + files:
    for name, body in re.findall(r"(?m)^#define (\w+)[ \t]+((?:[^\n]*\\\n)*[^\n]*)", code(open(path).read())):
        macros[name] = body.replace("\\\n", " ")
largest = (0, "")
for path in files:
    text = code(open(path).read())
    tables = dict(re.findall(r"static const Option (\w+)\[\]\s*=\s*\{(.*?)\};", text, re.S))
    for var, name, f in defined:
        if f != os.path.basename(path):
            continue
        row = re.search(r"const Command %s = \{(.*?)\};" % var, text, re.S)
        opts = [t for t in re.findall(r"\b(\w+_options)\b", row.group(1)) if t in tables] if row else []
        if not opts:
            bad("%s: found no option table for %s" % (rel(path), name))
            continue
        body = tables[opts[0]]
        for _ in range(4):  # macros within macros
            body = re.sub(r"\b([A-Z_]+_OPTIONS)\b", lambda k: macros.get(k.group(1), k.group(1)), body)
        count = len(re.findall(r'\{\s*"', body))
        largest = max(largest, (count, name))
        if count > max_options:
            bad("%s takes %d options, more than MAX_OPTIONS (%d) in %s" % (name, count, max_options, rel(header)))

print("tool: %d commands defined in %d files, checked against the table of %s, %s and the overview of %s"
      % (len(defined), len(files), rel(main_c), rel(header), rel(manual)))
print("options: %s takes the most, %d; MAX_OPTIONS is %d" % (largest[1], largest[0], max_options))
if problems:
    print("FAIL: the tool's command lists disagree in %d place(s):" % len(problems))
    for p in problems:
        print("  " + p)
    sys.exit(1)
print("tool: the table, tools/lance_index.h and docs/lance-index.md agree with the commands defined")
PY
