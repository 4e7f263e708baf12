#!/usr/bin/env python3
"""The map check: lance.h's sections are the map of the tree.

It derives the sections (the /* ==== ... ==== */ title blocks) and the
functions each declares from include/lance/lance.h, and fails (exit 1, one
line per disagreement) when a part of the map drifts from the header:

  1. the header's table of contents lists every section in order, each with
     its functions in order, and nothing else; a function of this library's
     own (one tests/conformance/upstream_interface.c does not list) carries
     the mark [own] there, and upstream's functions carry none;
  2. src/api/mod.rs lists one module for each section that declares
     functions, in the header's order, each module's first doc line
     (//! lance.h section "...") names the sections mod.rs gives it, and every
     function is defined in the module of its section;
  3. the section tables of tests/README.md and docs/architecture.md name the
     header's sections, in order, with mod.rs's modules;
  4. every file those documents (and docs/contributing.md and
     docs/compatibility.md) name in backticks exists;
  5. every function is referenced by a test (tests/ or tools/, comments and
     the compile-time interface checks aside): the report counts the
     functions their own section's tests reach, and only a function no test
     references at all fails;
  6. the wings under src/api (src/lib.rs lists them bottom-up): each wing's
     mod.rs writes the wings it imports ("Import rule: this wing imports `a`
     and `b` only", or "nothing of the crate outside itself"), all of them
     below it; its files import no other wing and never `api`; inside a wing
     a module imports only modules its mod.rs lists above it; and
     docs/architecture.md names every wing module;
  7. this library's own interface is frozen: every function lance.h declares
     that tests/conformance/upstream_interface.c does not list (upstream's) is
     in tests/conformance/own_interface.c's OWN_FUNCTIONS, which names nothing
     upstream's or undeclared; and every Lance struct the header defines that
     upstream_interface.c's UPSTREAM_STRUCTS_CHECKED does not list has its
     size asserted there (with its fields);
  8. include/lance/lance.hpp follows lance.h's sections: its section markers
     (a line "// ==== <lance.h section title> ====") name lance.h's sections,
     each once, in lance.h's order; and every lance.h function the file calls
     (comments and strings aside) is called under the marker of the section
     that declares it, none before the first marker.  So a wrapper sits
     under its C function's section, and one that calls the functions of two
     sections is two definitions (IndexSegmentBuilder's
     own_token_for_progress() is the example).
  9. lance.h reads as a reference: no comment block (/* ... */) is longer
     than BLOCK_LINES lines, the table of contents aside (it is generated);
     a longer block's rationale belongs in docs/core-references.md, or the
     block splits into blocks with a title each.
 10. lance.h's blocks have titles and its big sections sub-banners: every
     comment block (a comment of more than one line that starts its line,
     the table of contents aside; a note after a declaration is no block)
     of more than SHORT_BLOCK_LINES text lines (lines that hold text: not
     the "/*" or "*/" lines, nor the empty " *" lines) opens with a title
     line, its first text line: at most TITLE_CHARS characters, one
     sentence or noun phrase, followed by an empty comment line (" *") or
     by the block's end; a shorter block is its own title and needs no
     separate title line; in a section that declares more
     than SUB_BANNER_FUNCTIONS functions, no function comes before the
     section's first sub-banner (a line "/* ---- <sub-title> ---- */",
     which groups the functions after it; the table of contents lists each
     group under its section); and every sub-banner groups a function.

Usage:
  check_map.py [--root DIR] [--header FILE] [--hpp FILE] [--api DIR] [--src DIR]
  check_map.py --toc [--header FILE]   print the table of contents that
                                       belongs at the top of lance.h
  check_map.py --planted-drift         plant drifts in copies and check that
                                       this program reports them
--root is the source tree (default: this program's parent directory);
--header, --hpp, --api and --src replace include/lance/lance.h,
include/lance/lance.hpp, src/api/ and the src/ whose wings are checked
(src/lib.rs and the wing folders) in it.
scripts/check_map.sh runs this program with the same arguments.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# Functions a section declares that another section's module defines: each
# with its reason.
DEFINED_ELSEWHERE = {
    "lance_scanner_set_blob_handling":
        ("scan", "a scanner setting, kept with the scanner's other settings"),
}
# Functions no test references, each with its reason (none today).
UNTESTED = {}
# Files that name every function only to freeze its type at compile time:
# a reference there exercises nothing.
TYPE_FREEZES = {
    "tests/conformance/own_interface.c",
    "tests/conformance/upstream_interface.c",
    "tests/conformance/upstream_hpp.cpp",
}
TOC_WIDTH = 100
# The most lines a comment block of lance.h may hold (check 9).
BLOCK_LINES = 40
# The longest title line of a block of lance.h (check 10).
TITLE_CHARS = 90
# A block of lance.h of at most this many text lines is its own title
# (check 10).
SHORT_BLOCK_LINES = 3
# A section that declares more functions than this groups them under
# sub-banners (check 10).
SUB_BANNER_FUNCTIONS = 16
SUB_BANNER = re.compile(r"^/\* ---- (\S.*?) ---- \*/$")
# The table of contents' mark of a function of this library's own.
OWN_MARK = "[own]"
DECL = re.compile(r"^[A-Za-z_][A-Za-z0-9_ *]*[ *](lance_[a-z0-9_]+)\(")  # as api_functions.sh
USAGE = ("usage: check_map.py [--toc] [--root DIR] [--header FILE] [--hpp FILE] [--api DIR] [--src DIR]"
         " | check_map.py --planted-drift")


def name_of(title):
    """A section's name: its title without a closing parenthesis ("(RFC E1)")."""
    return re.sub(r"\s*\([^()]*\)\s*$", "", title).strip()


def header_map(header, hlines):
    """The header's sections, [[title, [functions]]] in order, and their
    sub-banners, {title: [[sub-title, line number, [functions]]]}: the
    functions a section declares before its first sub-banner are in no
    group."""
    sections, groups = [], {}
    for i, line in enumerate(hlines):
        if re.match(r"^/\* =+$", line) and i + 1 < len(hlines):
            m = re.match(r"^ \* (\S.*)$", hlines[i + 1])
            if not m or m.group(1).startswith("="):
                sys.exit("%s:%d: a section block without a title line" % (header, i + 2))
            sections.append([m.group(1).strip(), []])
            groups[sections[-1][0]] = []
            continue
        m = SUB_BANNER.match(line)
        if m:
            if not sections:
                sys.exit("%s:%d: a sub-banner before the first section" % (header, i + 1))
            groups[sections[-1][0]].append([m.group(1), i + 1, []])
            continue
        m = DECL.match(line)
        if m:
            if not sections:
                sys.exit("%s:%d: %s is declared before the first section" % (header, i + 1, m.group(1)))
            sections[-1][1].append(m.group(1))
            if groups[sections[-1][0]]:
                groups[sections[-1][0]][-1][2].append(m.group(1))
    return sections, groups


def upstream_functions_of(root):
    """Upstream lance-c's functions: the ones upstream_interface.c checks."""
    return x_entries(os.path.join(root, "tests/conformance/upstream_interface.c"),
                     {"UPSTREAM_FUNCTIONS_CHECKED", "UPSTREAM_DATA_CACHE_FUNCTIONS_CHECKED"}, 1)


def toc_lines(first, names, upstream, indent):
    """`first` followed by `names`, a function not in `upstream` marked as
    this library's own, wrapped at TOC_WIDTH into lines of the table of
    contents; a wrapped line starts with `indent`."""
    words = [f if f in upstream else "%s %s" % (f, OWN_MARK) for f in names]
    lines, line = [], first
    for j, w in enumerate(words):
        piece = w + ("," if j + 1 < len(words) else "")
        sep = "" if line.endswith(": ") else " "
        if len(line) + len(sep) + len(piece) <= TOC_WIDTH:
            line += sep + piece
        else:
            lines.append(line.rstrip())
            line = indent + piece
    return lines + [line.rstrip() if not words else line]


def render_toc(sections, groups, upstream):
    """The table of contents: each section with the functions it declares
    before its first sub-banner, then each sub-banner's group on a line of
    its own; a function not in `upstream` is marked as this library's own."""
    out = ["/*",
           " * Contents: each section below, in order, with the functions it declares",
           " * (scripts/check_map.sh --toc prints this list; the map check fails when it",
           " * disagrees with the declarations).",
           " * %s marks a function of this library's own; the others are upstream lance-c's." % OWN_MARK,
           " *"]
    for title, fs in sections:
        grouped = [f for _, _, g in groups[title] for f in g]
        if not fs:
            out.append(" *   %s: (types only)" % title)
        else:
            out += toc_lines(" *   %s: " % title, [f for f in fs if f not in grouped], upstream, " *       ")
        for sub, _, g in groups[title]:
            out += toc_lines(" *       -- %s: " % sub, g, upstream, " *          ")
    out.append(" */")
    return "\n".join(out)


def comments(hlines):
    """Yields (line index, lines) of each /* ... */ comment of a header."""
    text = "\n".join(hlines)
    for m in re.finditer(r"/\*.*?\*/", text, re.S):
        first = text.count("\n", 0, m.start())
        yield first, hlines[first:first + m.group(0).count("\n") + 1]


def is_toc(lines):
    """Whether a comment's lines are the table of contents (generated)."""
    return len(lines) > 1 and bool(re.match(r"^ \* Contents\b", lines[1]))


def block_text(lines):
    """The text of each line of a comment block, without the comment marks
    ("" for a line that holds none).  A rule of = or - is no text."""
    text = []
    for k, line in enumerate(lines):
        t = re.sub(r"^\s*/\*\*?" if k == 0 else r"^\s*\*(?!/)", "", line)
        t = re.sub(r"\*/\s*$", "", t).strip()
        text.append("" if re.match(r"^[=-]*$", t) else t)
    return text


def is_short(lines):
    """Whether a comment block has at most SHORT_BLOCK_LINES lines of text,
    so that it is its own title."""
    return sum(1 for t in block_text(lines) if t) <= SHORT_BLOCK_LINES


def title_problem(lines):
    """(the index of the line at fault, why) when a comment block does not
    open with a title line, else None."""
    text = block_text(lines)
    k = next((k for k, t in enumerate(text) if t), None)
    if k is None:
        return 0, "the block holds no text"
    if k + 1 < len(text) and text[k + 1]:
        return k, "its first sentence runs on into the next line (a title line is followed by \" *\" or the end)"
    if len(text[k]) > TITLE_CHARS:
        return k, "its title line has %d characters (at most %d)" % (len(text[k]), TITLE_CHARS)
    if re.search(r"[.:;!?]  \S", text[k]):
        return k, "its title line holds more than one sentence"
    return None


def tables(path):
    """Yields (header cells, [(line number, cells)]) for each table of a markdown file."""
    rows, head = [], None
    for n, line in enumerate(open(path).read().split("\n") + [""], 1):
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if head is None:
                head = cells
            elif not all(re.match(r"^:?-+:?$", c) for c in cells):
                rows.append((n, cells))
        elif head is not None:
            yield head, rows
            rows, head = [], None


def code_of(path, text):
    """A test file's text without its comments."""
    if path.endswith((".c", ".h", ".cpp", ".hpp", ".java")):
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        return re.sub(r"//[^\n]*", " ", text)
    if path.endswith((".py", ".sh")):
        return re.sub(r"(?m)#[^\n]*", " ", text)
    return text


def rust_code(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def x_entries(path, macros, pos):
    """The names in the X-macro lists `macros` defines in a file: of each
    entry X(a, b, ...), its argument `pos` (0 = a), with its line."""
    found, inside = {}, False
    for n, line in enumerate(open(path), 1):
        if not inside:
            m = re.match(r"^#define (\w+)\(X\)", line)
            inside = bool(m and m.group(1) in macros)
            continue
        for entry in re.findall(r"\bX\(([^()]*(?:\([^()]*\)[^()]*)*)\)", line):
            words = [w.strip() for w in entry.split(",")]
            if len(words) > pos and re.match(r"^\w+$", words[pos]):
                found.setdefault(words[pos], n)
        inside = line.rstrip("\n").endswith("\\")
    return found


class MapCheck:
    """One run of the check over a tree; each check_* method adds the
    disagreements it finds to self.problems."""

    def __init__(self, root, header, hpp, api_dir, src_dir):
        self.root, self.header, self.hpp, self.api_dir, self.src_dir = root, header, hpp, api_dir, src_dir
        self.hlines = open(header).read().split("\n")
        self.sections, self.groups = header_map(header, self.hlines)
        self.names = [name_of(t) for t, _ in self.sections]
        self.index_of = {n: i for i, n in enumerate(self.names)}
        self.section_of = {f: name_of(t) for t, fs in self.sections for f in fs}
        self.with_functions = [name_of(t) for t, fs in self.sections if fs]
        self.upstream_functions = upstream_functions_of(root)
        self.problems = []
        self.report = []

    def bad(self, msg):
        self.problems.append(msg)

    def rel(self, path):
        r = os.path.relpath(path, self.root)
        return os.path.abspath(path) if r.startswith("..") else r

    # ---- 1. the table of contents ---------------------------------------
    def check_toc(self):
        bad, hlines, sections, section_of = self.bad, self.hlines, self.sections, self.section_of
        start = next((i for i, l in enumerate(hlines) if re.match(r"^ \* Contents\b", l)), None)
        if start is None:
            bad("%s has no table of contents (a comment line ' * Contents'); print one with "
                "scripts/check_map.sh --toc" % self.rel(self.header))
            return
        toc = []  # [title, [names]]
        marked = {}  # name -> whether it carries OWN_MARK
        i = start + 1
        while i < len(hlines) and not hlines[i].startswith(" */"):
            line = hlines[i]
            m = re.match(r"^ \*   (\S.*?):(?: (lance_.*|\(types only\)))?$", line)
            g = re.match(r"^ \*       -- \S.*?:(?: (lance_.*))?$", line)
            c = re.match(r"^ \*       +(lance_.*)$", line)
            if m:
                toc.append([m.group(1), []])
                rest = m.group(2) or ""
            elif (g or c) and toc:
                rest = (g or c).group(1) or ""
            else:
                i += 1
                continue
            for w in re.split(r",\s*", rest.strip().rstrip(",")):
                if w.startswith("lance_"):
                    name = w.split()[0]
                    toc[-1][1].append(name)
                    marked.setdefault(name, w[len(name):].strip() == OWN_MARK)
            i += 1
        toc_problems = len(self.problems)
        toc_titles = [t for t, _ in toc]
        titles = [t for t, _ in sections]
        for t in titles:
            if t not in toc_titles:
                bad("table of contents: section \"%s\" is missing" % t)
        for t in toc_titles:
            if t not in titles:
                bad("table of contents: \"%s\" is not a section title of the header" % t)
        if [t for t in toc_titles if t in titles] != [t for t in titles if t in toc_titles]:
            bad("table of contents: the sections are not in the header's order")
        toc_section = {}
        for t, fs in toc:
            for f in fs:
                if t not in titles:
                    toc_section.setdefault(f, None)
                    continue
                toc_section.setdefault(f, name_of(t))
        for t, fs in sections:
            for f in fs:
                if f not in toc_section:
                    bad("table of contents: %s is declared in section \"%s\" but has no place in the "
                        "table of contents" % (f, name_of(t)))
                elif toc_section[f] not in (None, name_of(t)):
                    bad("table of contents: %s is listed under \"%s\" but declared in \"%s\""
                        % (f, toc_section[f], name_of(t)))
        for f in toc_section:
            if f not in section_of:
                bad("table of contents: %s is listed but not declared" % f)
        for t, fs in toc:
            declared = dict(sections).get(t)
            if declared is not None and set(fs) == set(declared) and fs != declared:
                bad("table of contents: the functions of \"%s\" are not in the header's order" % name_of(t))
        for f, own_mark in marked.items():
            if f not in section_of:
                continue
            if own_mark and f in self.upstream_functions:
                bad("table of contents: %s is marked %s, but it is upstream's (upstream_interface.c lists it)"
                    % (f, OWN_MARK))
            elif not own_mark and f not in self.upstream_functions:
                bad("table of contents: %s is this library's own (upstream_interface.c does not list it) but "
                    "lacks the mark %s" % (f, OWN_MARK))
        if len(self.problems) == toc_problems and "\n".join(hlines[start - 1:i + 1]) != render_toc(
                sections, self.groups, self.upstream_functions):
            bad("table of contents: the right names, laid out differently from "
                "scripts/check_map.sh --toc")

    # ---- 2. src/api/mod.rs and each module's doc line -------------------
    def check_modules(self):
        bad, rel, index_of, names = self.bad, self.rel, self.index_of, self.names
        mod_rs = self.mod_rs = os.path.join(self.api_dir, "mod.rs")
        modules = self.modules = []  # [module, [section names]]
        for n, line in enumerate(open(mod_rs), 1):
            m = re.match(r"^mod (\w+);\s*(?://\s*(.*))?$", line.rstrip("\n"))
            if m:
                claimed = [name_of(s) for s in (m.group(2) or "").split(";") if s.strip()]
                if not claimed:
                    bad("%s:%d: module %s names no lance.h section in its comment" % (rel(mod_rs), n, m.group(1)))
                for s in claimed:
                    if s not in index_of:
                        bad("%s:%d: module %s names section \"%s\", which lance.h does not have"
                            % (rel(mod_rs), n, m.group(1), s))
                modules.append([m.group(1), claimed])
        module_of = self.module_of = {}
        for mod, claimed in modules:
            for s in claimed:
                if s in module_of:
                    bad("%s: section \"%s\" is given to both %s and %s" % (rel(mod_rs), s, module_of[s], mod))
                module_of.setdefault(s, mod)
        for s in self.with_functions:
            if s not in module_of:
                bad("%s: no module for section \"%s\"" % (rel(mod_rs), s))
        placed = [(index_of[s], mod) for mod, claimed in modules for s in claimed if s in index_of]
        for k, (at, mod) in enumerate(placed):
            later = [m for a, m in placed[:k] if a > at]
            if later:
                bad("%s: module %s (section \"%s\") is listed after %s, whose sections come later in the header"
                    % (rel(mod_rs), mod, names[at], ", ".join(dict.fromkeys(later))))
        defined_in = {}
        for mod, claimed in modules:
            path = os.path.join(self.api_dir, mod + ".rs")
            if not os.path.exists(path):
                bad("%s lists module %s, but %s does not exist" % (rel(mod_rs), mod, rel(path)))
                continue
            text = open(path).read()
            lines = text.split("\n")
            first = lines[0]
            if first.count('"') % 2 and len(lines) > 1:
                first += " " + lines[1].lstrip("/! ")
            m = re.match(r'^//! lance\.h sections? ("[^"]*"(?:(?:,| and) "[^"]*")*)', first)
            if not m:
                bad("%s: the first line is not //! lance.h section \"...\"" % rel(path))
            else:
                doc = re.findall(r'"([^"]*)"', m.group(1))
                for s in doc:
                    if s not in index_of:
                        bad("%s: the doc line names section \"%s\", which lance.h does not have" % (rel(path), s))
                if [s for s in doc] != claimed and all(s in index_of for s in doc):
                    bad("%s: the doc line names %s, mod.rs names %s"
                        % (rel(path), ", ".join('"%s"' % s for s in doc), ", ".join('"%s"' % s for s in claimed)))
            for f in re.findall(r'extern "C" fn (lance_[a-z0-9_]+)', text):
                defined_in[f] = mod
        for f, s in self.section_of.items():
            mod = defined_in.get(f)
            want = module_of.get(s)
            if mod is None or want is None or mod == want:
                continue  # undefined functions are test_architecture's to report
            if DEFINED_ELSEWHERE.get(f, (None,))[0] == mod:
                continue
            bad("%s is declared in section \"%s\" (module %s) but defined in src/api/%s.rs"
                % (f, s, want, mod))
        for f in DEFINED_ELSEWHERE:
            if f not in self.section_of:
                bad("check_map.py: DEFINED_ELSEWHERE names %s, which lance.h does not declare" % f)

    # ---- 3. the section tables of the documents -------------------------
    def check_doc_tables(self):
        bad, index_of, module_of = self.bad, self.index_of, self.module_of
        for doc in ("tests/README.md", "docs/architecture.md"):
            path = os.path.join(self.root, doc)
            seen, rows_at = [], []
            for head, rows in tables(path):
                if head[0].replace("`", "") != "lance.h section":
                    continue
                for n, cells in rows:
                    mods = re.findall(r"`(?:src/)?(?:api/)?(\w+)\.rs`", cells[1]) if len(cells) > 1 else []
                    row = []
                    for s in (name_of(x) for x in cells[0].split(";")):
                        if s not in index_of:
                            bad("%s:%d: names section \"%s\", which lance.h does not have" % (doc, n, s))
                            continue
                        seen.append(s)
                        row.append(index_of[s])
                        want = module_of.get(s)
                        if want and mods != [want]:
                            bad("%s:%d: section \"%s\" is src/api/%s.rs (mod.rs), not %s"
                                % (doc, n, s, want, ", ".join(mods) or "no module"))
                    if row:
                        rows_at.append((min(row), n))
            for s in self.with_functions:
                if s not in seen:
                    bad("%s: its section table lacks \"%s\"" % (doc, s))
            for (a, _), (b, n) in zip(rows_at, rows_at[1:]):
                if b < a:
                    bad("%s:%d: the section table leaves the header's order here (\"%s\" comes before)"
                        % (doc, n, self.names[b]))

    # ---- 4. the files the documents name --------------------------------
    def check_doc_files(self):
        root = self.root
        PATHLIKE = re.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_./-]*$")
        EXT = re.compile(r"\.(c|h|rs|py|sh|cpp|hpp|md|txt|toml|xml|json|java|supp)$")

        def is_dir_cell(cell):
            m = re.match(r"^`?([A-Za-z0-9_./-]+/?)`?$", cell)
            return m.group(1).rstrip("/") if m and os.path.isdir(os.path.join(root, m.group(1))) else None

        self.named = 0
        for doc in ("tests/README.md", "docs/architecture.md", "docs/contributing.md", "docs/compatibility.md"):
            path = os.path.join(root, doc)
            if not os.path.exists(path):
                self.bad("%s does not exist" % doc)
                continue
            head = None
            for n, line in enumerate(open(path), 1):
                bases = []
                if line.startswith("|"):
                    cells = [c.strip() for c in line.strip().strip("|").split("|")]
                    if head is None:
                        head = cells
                    d = is_dir_cell(cells[0])
                    if d:
                        bases.append(d)
                else:
                    head = None
                for tok in re.findall(r"`([^`]+)`", line):
                    tok = tok.split("#", 1)[0]
                    if not PATHLIKE.match(tok) or tok.startswith(".") or ("/" not in tok and not EXT.search(tok)):
                        continue
                    cands = list(bases)
                    if line.startswith("|") and head:
                        cells = [c.strip() for c in line.strip().strip("|").split("|")]
                        for k, c in enumerate(cells):
                            if "`%s`" % tok in c and k < len(head):
                                d = is_dir_cell(head[k])
                                if d:
                                    cands.insert(0, d)
                    cands += ["", os.path.dirname(doc), "include/lance", "src"]
                    self.named += 1
                    if not any(os.path.exists(os.path.join(root, b, tok)) for b in cands):
                        self.bad("%s:%d: names `%s`, which does not exist" % (doc, n, tok))

    # ---- 5. every function referenced by a test -------------------------
    def check_tests(self):
        refs = {}  # function -> [files]
        for top in ("tests", "tools"):
            for dirpath, _, files in os.walk(os.path.join(self.root, top)):
                for f in sorted(files):
                    p = os.path.join(dirpath, f)
                    r = self.rel(p)
                    if r in TYPE_FREEZES or not f.endswith((".c", ".h", ".cpp", ".hpp", ".py", ".sh", ".java")):
                        continue
                    for w in set(re.findall(r"\blance_[a-z0-9_]+\b", code_of(f, open(p, errors="replace").read()))):
                        refs.setdefault(w, []).append(r)
        self.untested, self.own_count, self.elsewhere = [], 0, []
        for title, fs in self.sections:
            s = name_of(title)
            mod = self.module_of.get(s)
            own = re.compile(r"^tests/api/test_%s(_\w+)?\.c$" % mod) if mod else None
            for f in fs:
                files = refs.get(f, [])
                if not files:
                    if f in UNTESTED:
                        self.report.append("%s: no test (allowed: %s)" % (f, UNTESTED[f]))
                    else:
                        self.untested.append(f)
                        self.bad("%s is referenced by no test (section \"%s\"): test it in tests/api/test_%s.c"
                                 % (f, s, mod or "<section>"))
                elif own and any(own.match(x) for x in files):
                    self.own_count += 1
                else:
                    self.elsewhere.append("%s (%s)" % (f, ", ".join(sorted(files))))
        for f in UNTESTED:
            if f in refs or f not in self.section_of:
                self.bad("check_map.py: UNTESTED names %s, which is %s"
                         % (f, "tested" if f in refs else "not declared"))

    # ---- 6. the wings and their import rules ----------------------------
    def check_wings(self):
        bad, rel, src_dir = self.bad, self.rel, self.src_dir
        lib_rs = os.path.join(src_dir, "lib.rs")
        wings = self.wings = [m for m in re.findall(r"(?m)^mod ([a-z_]+);", open(lib_rs).read()) if m != "api"]
        self.wing_modules = 0
        arch_text = open(os.path.join(self.root, "docs/architecture.md")).read()
        for at, wing in enumerate(wings):
            wdir = os.path.join(src_dir, wing)
            mod_path = os.path.join(wdir, "mod.rs")
            if not os.path.exists(mod_path):
                bad("%s declares wing %s, but %s does not exist" % (rel(lib_rs), wing, rel(mod_path)))
                continue
            mod_text = open(mod_path).read()
            rule = re.search(r"Import rule: this wing imports (.*?)(?:\.|$)", " ".join(
                l[3:].strip() for l in mod_text.splitlines() if l.startswith("//!")))
            if not rule:
                bad("%s: no import rule (\"Import rule: this wing imports ...\")" % rel(mod_path))
                continue
            allowed = set(re.findall(r"`([a-z_]+)`", rule.group(1)))
            if not allowed and "nothing" not in rule.group(1):
                bad("%s: the import rule names no wing and does not say \"nothing\"" % rel(mod_path))
            for a in sorted(allowed):
                if a not in wings[:at]:
                    bad("%s: the import rule names `%s`, which is %s" % (
                        rel(mod_path), a, "not a wing" if a not in wings else "not below %s in src/lib.rs" % wing))
            order = re.findall(r"(?m)^pub mod ([a-z_]+);", mod_text)
            for pos, m in enumerate(order):
                self.wing_modules += 1
                files = [os.path.join(wdir, m + ".rs")] if os.path.exists(os.path.join(wdir, m + ".rs")) else []
                sub = os.path.join(wdir, m)
                if os.path.isdir(sub):
                    files += [os.path.join(dp, f) for dp, _, fs in os.walk(sub) for f in sorted(fs)
                              if f.endswith(".rs")]
                if not files:
                    bad("%s lists module %s, which has no file" % (rel(mod_path), m))
                if ("%s/%s.rs" % (wing, m)) not in arch_text and ("%s/%s/" % (wing, m)) not in arch_text:
                    bad("docs/architecture.md does not name %s/%s.rs (a module of wing %s)" % (wing, m, wing))
                for f in files:
                    for n, line in enumerate(rust_code(open(f).read()).splitlines(), 1):
                        for other, inner in re.findall(r"crate::([a-z_]+)::([a-z_]+)", line):
                            if other == wing:
                                if inner in order and order.index(inner) > pos:
                                    bad("%s:%d: imports %s::%s, which %s lists after %s" % (
                                        rel(f), n, wing, inner, rel(mod_path), m))
                            elif other == "api" or (other in wings and other not in allowed):
                                bad("%s:%d: imports `%s`, which the import rule of %s does not allow" % (
                                    rel(f), n, other, rel(mod_path)))

    # ---- 7. this library's own interface, frozen ------------------------
    def check_own_interface(self):
        bad, rel, section_of = self.bad, self.rel, self.section_of
        upstream_c = os.path.join(self.root, "tests/conformance/upstream_interface.c")
        own_c = self.own_c = os.path.join(self.root, "tests/conformance/own_interface.c")
        upstream_functions = self.upstream_functions
        upstream_structs = x_entries(upstream_c, {"UPSTREAM_STRUCTS_CHECKED"}, 0)
        own_functions = x_entries(own_c, {"OWN_FUNCTIONS"}, 1)
        own_text = open(own_c).read()
        if not upstream_functions or not own_functions or not upstream_structs:
            bad("check_map.py: found no X(...) list in %s or %s (the lists' macro names changed?)"
                % (rel(upstream_c), rel(own_c)))
        own_declared = self.own_declared = [f for f in section_of if f not in upstream_functions]
        for f in own_declared:
            if f not in own_functions:
                bad("%s is this library's own function (upstream_interface.c does not list it) and %s does not "
                    "freeze it: add it to OWN_FUNCTIONS (docs/contributing.md)" % (f, rel(own_c)))
        for f, n in sorted(own_functions.items()):
            if f in upstream_functions:
                bad("%s:%d: %s is upstream's (upstream_interface.c checks it), not this library's own"
                    % (rel(own_c), n, f))
            elif f not in section_of:
                bad("%s:%d: %s is frozen there but lance.h does not declare it" % (rel(own_c), n, f))
        # Every struct the header defines that is not upstream's is frozen
        # too: its size asserted in own_interface.c (beside its fields'
        # offsets and types).
        own_structs, anonymous = [], False
        for line in self.hlines:
            m = re.match(r"^(?:typedef )?struct (Lance\w+) *\{", line)
            if m:
                own_structs.append(m.group(1))
            elif re.match(r"^typedef struct *\{", line):
                anonymous = True
            elif anonymous and re.match(r"^\} *(Lance\w+) *;", line):
                own_structs.append(re.match(r"^\} *(Lance\w+) *;", line).group(1))
                anonymous = False
        own_structs = self.own_structs = [t for t in own_structs if t not in upstream_structs]
        for t in own_structs:
            if not re.search(r"sizeof\(%s\) == \d+" % t, own_text):
                bad("struct %s is this library's own (upstream_interface.c does not list it) and %s does not "
                    "freeze it: assert its size and its fields' offsets and types there" % (t, rel(own_c)))

    # ---- 8. lance.hpp follows lance.h's sections -------------------------
    def check_hpp(self):
        bad, hpp = self.bad, self.rel(self.hpp)
        titles = [t for t, _ in self.sections]
        title_of = {f: t for t, fs in self.sections for f in fs}
        text = open(self.hpp).read()
        markers = [(n, m.group(1)) for n, m in ((n, re.match(r"^// ==== (.+) ====$", line))
                                                for n, line in enumerate(text.split("\n"), 1)) if m]
        first_at, last = {}, None
        for n, t in markers:
            if t not in titles:
                bad("%s:%d: the marker names \"%s\", which is not a lance.h section title" % (hpp, n, t))
            elif t in first_at:
                bad("%s:%d: a second marker of \"%s\" (the first is at line %d)" % (hpp, n, t, first_at[t]))
            else:
                first_at[t] = n
                if last and titles.index(t) < titles.index(last[1]):
                    bad("%s:%d: the marker of \"%s\" comes after that of \"%s\" (line %d), which lance.h puts "
                        "after it" % (hpp, n, t, last[1], last[0]))
                else:
                    last = (n, t)
        # The calls, comments and string literals blanked (lines kept).
        code = re.sub(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'",
                      lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
        self.hpp_calls = 0
        for m in re.finditer(r"\b(lance_[a-z0-9_]+)\s*\(", code):
            f = m.group(1)
            if f not in title_of:
                continue
            self.hpp_calls += 1
            n = code.count("\n", 0, m.start()) + 1
            under = [t for at, t in markers if at < n]
            if not under:
                bad("%s:%d: %s is called before the first section marker: its wrapper goes under "
                    "\"// ==== %s ====\"" % (hpp, n, f, title_of[f]))
            elif under[-1] in titles and under[-1] != title_of[f]:
                bad("%s:%d: %s is called under the marker of \"%s\", but lance.h declares it in \"%s\""
                    % (hpp, n, f, under[-1], title_of[f]))
        self.hpp_markers = len(markers)

    # ---- 9. the length of lance.h's comment blocks ------------------------
    def check_block_lengths(self):
        self.blocks = 0
        for first, lines in comments(self.hlines):
            self.blocks += 1
            if len(lines) > BLOCK_LINES and not is_toc(lines):
                self.bad("%s:%d: a comment block of %d lines (at most %d, the table of contents aside): move its "
                         "rationale to docs/core-references.md, or split it into titled blocks"
                         % (self.rel(self.header), first + 1, len(lines), BLOCK_LINES))

    # ---- 10. titles and sub-banners ----------------------------------------
    def check_titles(self):
        bad, header, hlines = self.bad, self.rel(self.header), self.hlines
        self.titled = 0
        for first, lines in comments(hlines):
            # A one-line comment, or a note after a declaration, is no block;
            # a short block is its own title.
            if len(lines) == 1 or not hlines[first].lstrip().startswith("/*") or is_toc(lines):
                continue
            if is_short(lines):
                continue
            self.titled += 1
            problem = title_problem(lines)
            if problem:
                bad("%s:%d: a comment block without a title line: %s" % (header, first + problem[0] + 1, problem[1]))
        declared_at = {}
        for n, line in enumerate(hlines, 1):
            m = DECL.match(line)
            if m:
                declared_at.setdefault(m.group(1), n)
        self.sub_banners = 0
        for title, fs in self.sections:
            groups = self.groups[title]
            self.sub_banners += len(groups)
            if len(fs) > SUB_BANNER_FUNCTIONS:
                grouped = {f for _, _, g in groups for f in g}
                for f in fs:
                    if f not in grouped:
                        bad("%s:%d: %s comes before the first sub-banner of \"%s\" (a section of %d functions: "
                            "more than %d are grouped under /* ---- <sub-title> ---- */ lines)"
                            % (header, declared_at[f], f, name_of(title), len(fs), SUB_BANNER_FUNCTIONS))
            for sub, n, g in groups:
                if not g:
                    bad("%s:%d: the sub-banner \"%s\" groups no function" % (header, n, sub))

    def run(self):
        """Runs every check, prints the report; returns the exit status."""
        self.check_toc()
        self.check_modules()
        self.check_doc_tables()
        self.check_doc_files()
        self.check_tests()
        self.check_wings()
        self.check_own_interface()
        self.check_hpp()
        self.check_block_lengths()
        self.check_titles()
        total = len(self.section_of)
        print("wings: %d wings, %d modules, each importing only what its wing's mod.rs allows"
              % (len(self.wings), self.wing_modules))
        print("map: %d sections (%d with functions), %d functions; %d modules in %s; %d file names checked in "
              "the docs" % (len(self.sections), len(self.with_functions), total, len(self.modules),
                            self.rel(self.mod_rs), self.named))
        print("own interface: %d own functions and %d own structs, each to be frozen in %s"
              % (len(self.own_declared), len(self.own_structs), self.rel(self.own_c)))
        print("tests: %d of %d functions referenced by their own section's tests; %d only by other tests; %d by none"
              % (self.own_count, total, len(self.elsewhere), len(self.untested)))
        print("lance.hpp: %d section markers, %d calls of lance.h functions, each to be under its section's "
              "marker" % (self.hpp_markers, self.hpp_calls))
        print("lance.h: %d comment blocks, each to be at most %d lines but the table of contents; %d blocks of more "
              "than %d text lines, each to open with a title line; %d sub-banners, each to group functions"
              % (self.blocks, BLOCK_LINES, self.titled, SHORT_BLOCK_LINES, self.sub_banners))
        for e in self.elsewhere:
            print("  only elsewhere: " + e)
        for r in self.report:
            print("  " + r)
        if self.problems:
            print("FAIL: the map disagrees with lance.h in %d place(s):" % len(self.problems))
            for p in self.problems:
                print("  " + p)
            return 1
        print("map: the table of contents, src/api/mod.rs, the modules' doc lines, tests/README.md, "
              "docs/architecture.md, own_interface.c and lance.hpp agree with lance.h, whose blocks have titles and "
              "whose big sections have sub-banners")
        return 0


# ---- the planted drift ---------------------------------------------------
# The lines the report on the planted drifts must hold (and the report on
# the unplanted copies must not).
PLANTED_REPORT = [
    "lance_planted_drift_probe is declared in section",
    "but lacks the mark %s" % OWN_MARK,
    "names section \"Planted bogus section\"",
    "lance_planted_drift_probe is referenced by no test",
    "lance_planted_drift_probe is this library's own function",
    "struct LancePlantedDriftOptions is this library's own",
    "imports `index`, which the import rule of",
    "lance_dataset_count_rows is called under the marker of",
    "the marker names \"Planted bogus wrapper section\"",
    "the marker of \"Errors and memory\" comes after that of \"Process budget\"",
    "a comment block of %d lines" % (BLOCK_LINES + 1),
    "a comment block without a title line: its first sentence runs on",
    "comes before the first sub-banner of",
    "the sub-banner \"Planted empty group\" groups no function",
]


def plant(tmp):
    """Plants the drifts in the copies under tmp."""
    # Drift 1: a function declared in the last section, with no line in the
    # table of contents (and so called by no test, and frozen nowhere), a
    # struct of this library's own that own_interface.c does not freeze, and
    # the table of contents' first own function without its mark.
    path = tmp + "/lance.h"
    text = open(path).read()
    first_own = re.search(r"\b(lance_\w+) " + re.escape(OWN_MARK), text)
    assert first_own, "lance.h: the table of contents marks no function " + OWN_MARK
    text = text[:first_own.end(1)] + text[first_own.end():]
    tail = "#ifdef __cplusplus\n} /* extern \"C\" */"
    assert text.count(tail) == 1, "lance.h: the closing extern \"C\" block was not found"
    text = text.replace(tail, "typedef struct LancePlantedDriftOptions {\n    uint32_t reserved;\n"
                              "} LancePlantedDriftOptions;\n\n"
                              "int32_t lance_planted_drift_probe(void);\n\n" + tail)
    # Drift 5: a comment block one line over the budget.
    text = text.replace(tail, "/*\n * A planted block over the budget.\n" + " *\n" * (BLOCK_LINES - 2) + " */\n\n" + tail)
    # Drift 6: a block longer than SHORT_BLOCK_LINES text lines whose first
    # sentence runs on, a sub-banner that groups nothing, and the first
    # sub-banner of the first section that needs them taken out.
    text = text.replace(tail, "/*\n * A planted block whose first sentence runs on\n * into its second line.\n"
                              + " * One more line of text.\n" * (SHORT_BLOCK_LINES - 1) + " */\n\n"
                              "/* ---- Planted empty group ---- */\n\n" + tail)
    lines = text.split("\n")
    sections, groups = header_map(path, lines)
    big = [t for t, fs in sections if len(fs) > SUB_BANNER_FUNCTIONS and groups[t]]
    assert big, "lance.h: no section of more than %d functions has a sub-banner" % SUB_BANNER_FUNCTIONS
    del lines[groups[big[0]][0][1] - 1]
    text = "\n".join(lines)
    open(path, "w").write(text)
    # Drift 2: a module's doc line names a section the header does not have.
    for name in sorted(os.listdir(tmp + "/api")):
        path = tmp + "/api/" + name
        text = open(path).read()
        if name != "mod.rs" and text.startswith('//! lance.h section "'):
            open(path, "w").write(re.sub(r'"[^"]*"', '"Planted bogus section"', text, count=1))
            break
    else:
        sys.exit("src/api: no module starts with //! lance.h section \"...\"")
    # Drift 3: an upward import, from the C boundary into the index machinery.
    path = tmp + "/src/boundary/ffi.rs"
    open(path, "a").write("\n#[allow(unused_imports)]\nuse crate::index::catalog as planted_upward_import;\n")
    # Drift 4: in lance.hpp, a wrapper under the last marker that calls a
    # function of "Datasets"; the first two markers swapped; and the third
    # marker's title one lance.h does not have.
    path = tmp + "/lance.hpp"
    text = open(path).read()
    tail = "}  // namespace lance"
    assert text.count(tail) == 1, "lance.hpp: the end of namespace lance was not found"
    text = text.replace(tail, "inline uint64_t planted_drift_rows(const LanceDataset* dataset) {\n"
                              "    return lance_dataset_count_rows(dataset);\n}\n\n" + tail)
    markers = list(re.finditer(r"(?m)^// ==== (.+) ====$", text))
    assert [m.group(1) for m in markers[:2]] == ["Errors and memory", "Process budget"], \
        "lance.hpp: the first two markers are not those of \"Errors and memory\" and \"Process budget\""
    spans = [(m.start(1), m.end(1)) for m in markers[:3]]
    for (a, b), title in reversed(list(zip(spans, ["Process budget", "Errors and memory",
                                                   "Planted bogus wrapper section"]))):
        text = text[:a] + title + text[b:]
    open(path, "w").write(text)


def planted_drift():
    """Runs the check on copies without and with planted drifts; the verdict
    is planted_drift.sh's, as for the other checks."""
    root = os.path.dirname(HERE)
    tmp = tempfile.mkdtemp()
    try:
        shutil.copy(os.path.join(root, "include/lance/lance.h"), tmp + "/lance.h")
        shutil.copy(os.path.join(root, "include/lance/lance.hpp"), tmp + "/lance.hpp")
        shutil.copytree(os.path.join(root, "src/api"), tmp + "/api")
        shutil.copytree(os.path.join(root, "src"), tmp + "/src")
        check = [sys.executable, os.path.abspath(__file__), "--root", root, "--header", tmp + "/lance.h",
                 "--hpp", tmp + "/lance.hpp", "--api", tmp + "/api", "--src", tmp + "/src"]
        with open(tmp + "/before", "w") as out:
            subprocess.run(check, stdout=out)
        plant(tmp)
        with open(tmp + "/after", "w") as out:
            status = subprocess.run(check, stdout=out).returncode
        sys.stdout.flush()
        verdict = subprocess.run(["bash", "-c", 'source "$0" && planted_verdict "$@"',
                                  os.path.join(HERE, "planted_drift.sh"), tmp + "/before", tmp + "/after",
                                  str(status)] + PLANTED_REPORT)
        return 1 if verdict.returncode else 0
    finally:
        shutil.rmtree(tmp)


def main(argv):
    if argv[:1] == ["--planted-drift"]:
        return planted_drift()
    args = list(argv)
    opts = {"--root": os.path.dirname(HERE), "--header": None, "--hpp": None, "--api": None, "--src": None}
    print_toc = False
    while args:
        a = args.pop(0)
        if a == "--toc":
            print_toc = True
        elif a in opts and args:
            opts[a] = args.pop(0)
        else:
            sys.exit(USAGE)
    root = opts["--root"]
    header = opts["--header"] or os.path.join(root, "include/lance/lance.h")
    if print_toc:
        sections, groups = header_map(header, open(header).read().split("\n"))
        print(render_toc(sections, groups, upstream_functions_of(root)))
        return 0
    return MapCheck(root, header, opts["--hpp"] or os.path.join(root, "include/lance/lance.hpp"),
                    opts["--api"] or os.path.join(root, "src/api"), opts["--src"] or os.path.join(root, "src")).run()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
