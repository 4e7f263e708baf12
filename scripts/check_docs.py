#!/usr/bin/env python3
"""The doc check: every name the documentation gives exists in the tree.

It reads README.md, CHANGELOG.md, docs/*.md, tests/README.md and
bench/README.md, and fails (exit 1, one line `file:line: name: why` per
problem) on:

  1. Names.  A function or macro `lance_*` / `LANCE_*`, or a type
     `Lance[A-Z]*`, that include/lance/lance.h and include/lance/lance.hpp do
     not declare; a C++ name `lance::X` (a type, or a function written with
     its parentheses) or `lance::X::y` that lance.hpp does not declare; and a
     member `Class::y` of a class or struct of lance.hpp (`Dataset::c_handle`)
     that lance.hpp does not declare, unless the paragraph pins the core (see
     2.), whose Rust types share some of these names.  Anywhere in the text,
     outside URLs.  A name that is not the library's passes when the tree
     defines it otherwise:
       lower case `lance_x`: a CMake target or function (`lance_c_links`,
         `lance_c_add_test`), a crate of Cargo.lock (`lance_index`, `lance_c`)
         or the stem of a file of the tree (`lance_c_segments`);
       upper case `LANCE_X`: a CMake variable (set() or option() in a
         CMakeLists.txt or cmake/ file), or an environment variable that a
         script or source reads (`$X`, `${X...}`, `ENV{X}` or the string
         "X", which getenv(), std::env::var and os.environ take);
         `-DLANCE_C_X` must be a CMake variable;
       `LanceX`: the stem of a file (`LanceCTests`).
     A name ending in `_` (`lance_vector_training_*`, `LANCE_ERR_*`) is a
     prefix: some name of the same kind must start with it.  A name directly
     followed by an extension (`lance_c_segments.py`) is a file: rule 2.
  2. Paths.  A path in backticks or a code block, or a relative link target,
     that does not exist.  Placeholders (`test_<section>.c`) and globs
     (`tools/lance_index*.c`) are patterns; a trailing `/` asks for a folder;
     a path without an extension also matches a file of that stem
     (`common/training_rounds`).  Which paths are the tree's:
       - its first part is an entry of the root (`src/...`, `scripts/...`,
         `CMakeLists.txt`): resolved from the root;
       - a bare file name with a source extension (`reduce.rs`): some file of
         the tree has that name;
       - its first part is the name of a folder of the tree (`api/scan.rs`,
         `index/training/`): some path of the tree ends with it;
       - anything else is another project's and is skipped: URLs, `~/`, `$X/`
         and absolute paths, the build trees (`build/`, `build-release/`,
         `target/` and cargo's `quick/` and `release/` in it, `dist/`), the
         install tree (`lib/`, `bin/`, `share/`), a dataset's layout
         (`_indices/`) and a crate's sources named from the crate
         (`lance/src/index.rs`, `lance-io-14.0.2/src/...`).
     A path of the first three kinds that does not resolve is still skipped
     when its paragraph (or its table row and the table's header) pins
     another project's source by a version or a crate (`lance 14.0.2`,
     `lance-index 14.0.2`, "`lance-index` crate", `object_store 0.14.2`):
     docs/core-references.md and the other pages cite the core's `src/...`
     that way.  So is a bare file name in a compile line (`cc app.c ...`: the
     user's program), and FOREIGN_FILES.
  3. Options, in backticks or a code block:
       `lance-index COMMAND --opt`: the command's option table
         (tools/lance_index_*.c, the *_OPTIONS macros expanded) or what every
         command takes (--help, --storage-option); a lower-case COMMAND that
         is no command is a problem too.  A span may start with the command
         and an option (`build --model FILE`);
       `scripts/x.sh --flag`, `bench/x.py --flag` and the like: the script's
         case labels, comparisons and quoted strings (a Python script with
         argparse: its add_argument() names); a script that hands "$@" on to
         another program of the tree takes that program's options as well,
         and one that hands it to a program outside the tree (scripts/test.sh:
         ctest) is not checked;
       `lance_worker --train`, `bench_ffi --oneshot-train` (the programs of
         examples/ and bench/): the quoted options in the program's source,
         with --storage-option (common/storage_options.c);
       an option alone (`--seed`): some command, script or program of the
         tree must take it (EXTERNAL_OPTIONS lists the linker's); in
         docs/lance-index.md, a lance-index command or a script the page
         runs (examples/ray_build.py's `--train-resource`).
     Options are attributed by position only: prose ("`build` takes
     `--seed`") is held to rule "an option alone".

CHANGELOG.md: only its first section (the release being prepared) is read:
older sections record names that were true then and have since been renamed or
removed, on purpose.  In the section read, the first column of a table headed
"removed ..." or "renamed ..." (the old names) is not checked, and
REMOVED_IN_CHANGELOG lists what its text says was removed or moved (empty it
at a release).

Names deliberately not this tree's are in ALLOWED, each with its reason (and
options in EXTERNAL_OPTIONS, files in FOREIGN_FILES); an entry of these lists
that no document needs any more is printed as a note, not a failure.

Usage:
  check_docs.py [--root DIR] [--docs DIR]   the check; --docs reads the
                                            documents from a copy laid out as
                                            the tree (the names are still
                                            checked against --root)
  check_docs.py --planted-drift             copy the documents, plant a false
                                            function name, path and tool
                                            option, and check that exactly
                                            those three are reported
It reads files only: no build, python3 alone.
"""
import fnmatch
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

DOCS = ["README.md", "CHANGELOG.md", "docs/*.md", "tests/README.md", "bench/README.md"]

# Names the documents give that are deliberately not this tree's, with why.
ALLOWED = {
    "LANCE_AIMD_": "the Lance core's throttle settings as environment variables "
                   "(docs/object-storage.md), read by the core, not by this tree",
    "LANCE_AIMD_MAX_RETRIES": "the same, one of them by name",
    "lance_aimd_max_retries": "a storage option key of the Lance core's throttle layer "
                              "(docs/object-storage.md), which the core reads",
    "lance_aimd_min_backoff_ms": "the same",
    "lance_aimd_max_backoff_ms": "the same",
}
# Options the documents give alone (`--gc-sections`) that are no program's of the tree, with why.
EXTERNAL_OPTIONS = {
    "--whole-archive": "the linker's (how an engine must not link the static archive)",
    "--gc-sections": "the linker's (how an engine links it)",
}
# Files the documents name that are not the tree's, with why.
FOREIGN_FILES = {
    "rust-toolchain.toml": "a file docs/measurements.md says was tried and left out",
}
# What the section of CHANGELOG.md that is read says was removed or moved.
REMOVED_IN_CHANGELOG = {
    "src/floor/": "the helper layer's folder before it became the wings",
}

# ---- small helpers ----------------------------------------------------------
SOURCE_EXT = ("c", "h", "cpp", "hpp", "rs", "py", "sh", "md", "toml", "txt", "cmake", "in", "json",
              "java", "xml", "supp", "lock", "pc")
BUILD_TREE = re.compile(r"^(build(-.*)?|target|dist|\.git|__pycache__)$")
OTHER_TREES = {"quick", "release", "lib", "bin", "share", "_indices"}  # cargo's, the install's, a dataset's
CORE_PIN = re.compile(r"\b(?:lance|lance-[a-z]+|object_store)[ -]\d+\.\d+\.\d+"
                      r"|`?\b(?:lance-[a-z]+|object_store)`? crate")


def c_code(text):
    """C or C++ text without its comments (string contents kept)."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def shell_code(text):
    """A shell or Python script without its comment lines."""
    return "\n".join(l for l in text.split("\n") if not l.lstrip().startswith("#"))


def top_level(code):
    """A shell script's lines outside its functions' bodies (where "$@" is the function's)."""
    out, indent = [], None
    for line in code.split("\n"):
        m = re.match(r"^(\s*)(?:function\s+)?[\w-]+\s*\(\)\s*\{", line)
        if indent is not None:
            if line.strip() == "}" and line[:len(line) - len(line.lstrip())] == indent:
                indent = None
        elif m and not line.rstrip().endswith("}"):
            indent = m.group(1)
        elif not m:
            out.append(line)
    return out


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


# ---- what the tree defines --------------------------------------------------
class Tree:
    def __init__(self, root):
        self.root = root
        self.files = []  # paths relative to the root
        self.dirs = set()  # relative folder paths
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if not BUILD_TREE.match(d))
            rel = os.path.relpath(dirpath, root)
            if rel != ".":
                self.dirs.add(rel)
            for f in filenames:
                self.files.append(os.path.normpath(os.path.join(rel, f)))
        self.top = {p.split("/")[0] for p in self.files} | {d.split("/")[0] for d in self.dirs}
        self.dir_names = {os.path.basename(d) for d in self.dirs}
        self.stems = {os.path.basename(f).split(".")[0] for f in self.files}

        h = c_code(read(os.path.join(root, "include/lance/lance.h")))
        hpp = c_code(read(os.path.join(root, "include/lance/lance.hpp")))
        self.header = set(re.findall(r"\b(?:lance_|LANCE_|Lance)\w*", h + hpp))
        self.hpp = set(re.findall(r"\b[A-Za-z_]\w*", hpp))
        self.hpp_classes = set(re.findall(r"\b(?:class|struct)\s+([A-Z]\w*)", hpp))

        self.cmake_vars, self.cmake_names = set(), set()
        for f in self.files:
            if os.path.basename(f) == "CMakeLists.txt" or f.endswith((".cmake", ".cmake.in")):
                text = re.sub(r"#[^\n]*", " ", read(os.path.join(root, f)))
                self.cmake_vars |= set(re.findall(r"\b(?:set|option)\(\s*(\w+)", text, re.I))
                self.cmake_names |= set(re.findall(
                    r"\b(?:add_library|add_executable|add_custom_target|function|macro)\(\s*(\w+)", text, re.I))
        self.crates = set()
        for f in ("Cargo.lock", "Cargo.toml"):
            if os.path.exists(os.path.join(root, f)):
                for name in re.findall(r'(?m)^name = "([^"]+)"', read(os.path.join(root, f))):
                    self.crates.add(name.replace("-", "_"))

        self.env_read = set()
        for f in self.files:
            if f.endswith(".md") or f == "scripts/check_docs.py" or not (
                    f.endswith(tuple("." + e for e in SOURCE_EXT)) or os.path.basename(f) == "CMakeLists.txt"):
                continue  # (this program names what it allows)
            text = read(os.path.join(root, f))
            self.env_read |= set(re.findall(r"\$\{?(LANCE_\w+)", text))
            self.env_read |= set(re.findall(r"ENV\{(LANCE_\w+)\}", text))
            self.env_read |= set(re.findall(r"[\"'](LANCE_\w+)[\"']", text))

        self.commands, self.common_options = self._tool()
        self.programs = self._programs()
        self._flags = {}
        self._all_options = None

    def all_options(self):
        """Every option some command, script or program of the tree takes."""
        if self._all_options is None:
            opts = set().union(*self.commands.values()) | self.common_options
            for f in self.files:
                if f.endswith((".sh", ".py")):
                    opts |= self.script_flags(f) or set()
            for p in self.programs:
                opts |= self.program_flags(p)
            self._all_options = opts
        return self._all_options

    # lance-index: {command: {options}}, and the options every command takes.
    def _tool(self):
        tools = os.path.join(self.root, "tools")
        macros, tables, commands = {}, {}, {}
        files = sorted(glob.glob(os.path.join(tools, "lance_index*.c")) + glob.glob(os.path.join(tools, "*.h")))
        texts = {f: c_code(read(f)) for f in files}
        for text in texts.values():
            for name, body in re.findall(r"(?m)^#define (\w+_OPTIONS)[ \t]+((?:[^\n]*\\\n)*[^\n]*)", text):
                macros[name] = body.replace("\\\n", " ")
            tables.update(re.findall(r"static const Option (\w+)\[\]\s*=\s*\{(.*?)\};", text, re.S))
        for text in texts.values():
            for name, body in re.findall(r'(?m)^const Command \w+ = \{\s*"([^"]+)"(.*?)\};', text, re.S):
                table = next((t for t in re.findall(r"\b(\w+_options)\b", body) if t in tables), None)
                opts = tables.get(table, "")
                for _ in range(4):  # macros within macros
                    opts = re.sub(r"\b([A-Z_]+_OPTIONS)\b", lambda m: macros.get(m.group(1), m.group(1)), opts)
                commands[name] = set(re.findall(r'"(-[\w-]+)"', opts))
        main = texts.get(os.path.join(tools, "lance_index.c"), "")
        common = set(re.findall(r'strcmp\(word, "(--[\w-]+)"\)', main))
        storage = os.path.join(self.root, "common/storage_options.c")
        if os.path.exists(storage):
            common |= set(re.findall(r'"(--[\w-]+)"', c_code(read(storage))))
        return commands, common

    # The programs of examples/ and bench/: {name: [source files]}.
    def _programs(self):
        programs = {}
        for folder in ("examples", "bench"):
            cm = os.path.join(self.root, folder, "CMakeLists.txt")
            if os.path.exists(cm):
                for name, srcs in re.findall(r"add_executable\(\s*([A-Za-z_]\w*)\s+([^)]*)\)", read(cm)):
                    programs[name] = [os.path.join(folder, s) for s in srcs.split() if s.endswith(".c")]
            for f in self.files:
                if f.startswith(folder + "/") and f.endswith(".c") and "/" not in f[len(folder) + 1:]:
                    programs.setdefault(os.path.basename(f)[:-2], [f])
        return programs

    def program_flags(self, name):
        flags = set()
        for f in self.programs[name] + ["common/storage_options.c"]:
            if os.path.exists(os.path.join(self.root, f)):
                flags |= set(re.findall(r'"(--[\w-]+)"', c_code(read(os.path.join(self.root, f)))))
        return flags

    def script_flags(self, rel, seen=()):
        """The flags a script takes; None when it hands them to a program outside the tree."""
        if rel in self._flags:
            return self._flags[rel]
        code = shell_code(read(os.path.join(self.root, rel)))
        if rel.endswith(".py") and "add_argument(" in code:
            flags = set(re.findall(r"""add_argument\(\s*["'](--[\w-]+)["']""", code))
            self._flags[rel] = flags
            return flags
        flags = set(re.findall(r"""["'](--[\w-]+)["']""", code))
        flags |= set(re.findall(r"(?m)(?:^|\|)[ \t]*(--[\w-]+)[ \t]*(?=\)|\|)", code))
        flags |= set(re.findall(r"\s(?:==?|!=)[ \t]*(--[\w-]+)", code))  # [ "$1" = --smoke ]
        result = flags
        for line in top_level(code):
            s = line.strip()
            if ('"$@"' not in s or "python3 -" in s or '"$0"' in s  # the script itself
                    or re.match(r"^(\w+=\(|for\s)", s)):  # an array of them, a loop over them
                continue
            target = None
            for tok in line.replace('"', " ").split():
                base = os.path.basename(tok)
                if base in self.programs:
                    target = ("program", base)
                else:
                    cand = [f for f in self.files if tok.endswith("/" + f) or tok == f
                            or ("/" in tok and f.endswith("/" + base) and base.endswith((".py", ".sh")))]
                    if cand and cand[0] != rel:
                        target = ("script", cand[0])
                if target:
                    break
            if target is None:
                result = None  # "$@" goes to a program outside the tree
                break
            if target[0] == "program":
                result |= self.program_flags(target[1])
            elif target[1] not in seen:
                more = self.script_flags(target[1], seen + (rel,))
                if more is None:
                    result = None
                    break
                result |= more
        self._flags[rel] = result
        return result


# ---- the documents ----------------------------------------------------------
class Problems:
    def __init__(self):
        self.lines = []
        self.used = set()  # the entries of the lists above that a document needed

    def add(self, doc, n, name, why):
        line = "%s:%d: %s: %s" % (doc, n, name, why)
        if line not in self.lines:
            self.lines.append(line)


def doc_list(docs_root):
    out = []
    for pattern in DOCS:
        out += sorted(os.path.relpath(p, docs_root) for p in glob.glob(os.path.join(docs_root, pattern)))
    return out


def changelog_range(lines):
    """The line indices of CHANGELOG.md's first `## ` section."""
    heads = [i for i, l in enumerate(lines) if l.startswith("## ")]
    if not heads:
        return range(len(lines))
    return range(heads[0], heads[1] if len(heads) > 1 else len(lines))


def contexts(lines):
    """For each line: the text of its paragraph, or of its table row and the table's header."""
    ctx = [""] * len(lines)
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].strip():
            j += 1
        block = lines[i:j]
        if block[0].lstrip().startswith("|"):
            for k in range(i, j):
                ctx[k] = lines[i] + "\n" + lines[k]
        else:
            for k in range(i, j):
                ctx[k] = "\n".join(block)
        i = j
    return ctx


def code_lines(lines):
    """The indices of the lines that are code blocks (fenced, or indented after a blank line)."""
    code, fenced, prev_blank, in_indented = set(), False, True, False
    for i, l in enumerate(lines):
        if l.lstrip().startswith("```"):
            fenced = not fenced
            prev_blank = False
            continue
        if fenced:
            code.add(i)
            continue
        if (l.startswith("    ") or l.startswith("\t")) and (prev_blank or in_indented):
            code.add(i)
            in_indented = True
        elif l.strip():
            in_indented = False
        prev_blank = not l.strip()
    return code


NAME = re.compile(r"(?<![\w/.$-])(lance_\w*|LANCE_\w*|Lance[A-Z]\w*)")
CPP_NAME = re.compile(r"\blance::([A-Za-z_]\w*)(?:::(\w+))?(\()?")
SPAN = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def check_names(tree, doc, n, text, problems, context):
    text = re.sub(r"[a-z][a-z0-9+.-]*://\S+", " ", text)  # URLs
    for m in re.finditer(r"-D(LANCE_C_\w+)", text):
        if m.group(1) not in tree.cmake_vars:
            problems.add(doc, n, m.group(1), "no CMakeLists.txt or cmake/ file defines this CMake variable")
    for m in NAME.finditer(text):
        name = m.group(1)
        rest = text[m.end():]
        if re.match(r"\.[A-Za-z]", rest) or rest.startswith("::"):
            continue  # a file name (checked as a path in backticks), or a Rust path
        prefix = name.endswith("_")
        if name.startswith("lance_"):
            known = tree.header | tree.cmake_names | tree.crates | tree.stems
            why = "neither lance.h nor lance.hpp declares it, and it is no CMake target or function, crate or file"
        elif name.startswith("LANCE_"):
            known = tree.header | tree.cmake_vars | tree.env_read
            why = ("neither lance.h nor lance.hpp defines it, no CMake file sets it and no script or source "
                   "reads it from the environment")
        else:
            known = tree.header | tree.stems
            why = "neither lance.h nor lance.hpp defines this type"
        if name in known or (prefix and any(k.startswith(name) for k in known)):
            continue
        if name in ALLOWED:
            problems.used.add(name)
        elif prefix:
            problems.add(doc, n, name + "*", "no name of lance.h or lance.hpp (or the tree) starts so")
        else:
            problems.add(doc, n, name, why)
    for m in CPP_NAME.finditer(text):
        first, member, call = m.group(1), m.group(2), m.group(3)
        if not (first[0].isupper() or (call and not member)):
            continue  # a Rust module path (`lance::dataset::scanner`)
        if first not in tree.hpp:
            problems.add(doc, n, "lance::" + first, "lance.hpp declares no such name")
        elif member and member not in tree.hpp:
            problems.add(doc, n, "lance::%s::%s" % (first, member), "lance.hpp declares no such member")
    # `Dataset::prewarm_index`: a member of a class of lance.hpp, unless the paragraph cites
    # the core, whose Rust types share some of these names (its `Dataset::with_object_store`).
    if CORE_PIN.search(context):
        return
    for m in re.finditer(r"(?<![\w:])([A-Z]\w*)::(\w+)", text):
        if m.group(1) in tree.hpp_classes and m.group(2) not in tree.hpp:
            problems.add(doc, n, "%s::%s" % m.groups(), "lance.hpp's %s has no such member" % m.group(1))


def clean_path(tok):
    tok = tok.strip("([\"'").rstrip(")]\"',;:.")
    tok = tok.split("#", 1)[0]
    return re.sub(r":\d+(-\d+)?$", "", tok)


def resolve(tree, tok):
    """True when pattern `tok` names something of the tree."""
    pattern = re.sub(r"<[^>]*>", "*", tok)
    want_dir = pattern.endswith("/")
    pattern = pattern.rstrip("/")
    alts = [pattern]
    m = re.search(r"\{([^{}]*)\}", pattern)
    if m:
        alts = [pattern[:m.start()] + a + pattern[m.end():] for a in m.group(1).split(",")]
    for p in alts:
        hits = glob.glob(os.path.join(tree.root, p))
        if not want_dir:
            hits += glob.glob(os.path.join(tree.root, p + ".*"))  # a module by its stem
        if any(not want_dir or os.path.isdir(h) for h in hits):
            return True
    return False


def resolve_anywhere(tree, tok):
    """True when some path of the tree ends with pattern `tok` (a bare name or a relative path)."""
    pattern = re.sub(r"<[^>]*>", "*", tok)
    want_dir = pattern.endswith("/")
    pattern = pattern.rstrip("/")
    pool = sorted(tree.dirs) if want_dir else tree.files + sorted(tree.dirs)
    for p in pool:
        for cand in (p, os.path.splitext(p)[0]):
            if fnmatch.fnmatch(cand, pattern) or fnmatch.fnmatch(cand, "*/" + pattern):
                return True
    return False


def check_path(tree, doc, n, tok, context, problems, in_changelog):
    if tok in FOREIGN_FILES or (in_changelog and tok in REMOVED_IN_CHANGELOG):
        problems.used.add(tok)
        return
    first = tok.split("/")[0]
    if "/" not in tok:
        if not re.search(r"\.(%s)$" % "|".join(SOURCE_EXT), tok):
            return
        kind = "anywhere"
    elif re.match(r"^[\w.-]+-\d+\.\d+\.\d+$", first) or (first.replace("-", "_") in tree.crates
                                                          and first not in tree.top):
        return  # a crate's own source, named from the crate
    elif BUILD_TREE.match(first) or first in OTHER_TREES:
        return
    elif first in tree.top:
        kind = "root"
    elif first in tree.dir_names:
        kind = "anywhere"
    else:
        return
    ok = resolve(tree, tok) if kind == "root" else resolve_anywhere(tree, tok)
    if ok or CORE_PIN.search(context):
        return
    where = "from the root" if kind == "root" else "anywhere in the tree"
    problems.add(doc, n, tok, "no such file or folder %s" % where)


PATHLIKE = re.compile(r"^[A-Za-z0-9_.*?<>{},/+-]+$")


COMPILERS = ("cc", "gcc", "clang", "c++", "g++", "clang++")


def path_tokens(span):
    words = span.split()
    user_files = bool(words) and words[0] in COMPILERS
    for raw in words:
        tok = clean_path(raw)
        if (not tok or "://" in tok or "=" in tok or "..." in tok or "//" in tok
                or tok[0] in "-~$/" or not PATHLIKE.match(tok)):
            continue
        if user_files and "/" not in tok:
            continue
        if "/" in tok or re.search(r"\.(%s)$" % "|".join(SOURCE_EXT), tok):
            yield tok


def option_of(tok):
    m = re.match(r"^[\[(]*(--?[A-Za-z][\w-]*)", tok)
    return m.group(1) if m else None


def check_invocations(tree, doc, n, span, problems):
    """Options in one code span or code line, by the program each follows."""
    toks = span.split()
    i = 0
    while i < len(toks):
        tok = toks[i].strip("\"'()")
        base = os.path.basename(tok)
        if tok in ("|", "||", "&&", ";") or tok.startswith("#"):
            i += 1
            continue
        # lance-index [COMMAND] options...
        tool_cmd = None
        if base == "lance-index":
            i += 1
            if i < len(toks) and re.match(r"^[a-z][a-z-]*$", toks[i]):
                tool_cmd = toks[i]
                if tool_cmd not in tree.commands and tool_cmd != "help":
                    problems.add(doc, n, "lance-index " + tool_cmd, "lance-index has no such command")
                    tool_cmd = None
                i += 1
            taken = tree.commands.get(tool_cmd, set()) | tree.common_options | {"--version"}
            name = "lance-index " + (tool_cmd or "")
            i = scan_options(toks, i, doc, n, name.strip(), taken, problems)
            continue
        # `build --model FILE`: a command of lance-index, then its options
        if i == 0 and tok in tree.commands and len(toks) > 1 and toks[1].startswith(("-", "[")):
            i = scan_options(toks, i + 1, doc, n, "lance-index " + tok, tree.commands[tok] | tree.common_options,
                             problems)
            continue
        rel = None
        if "/" in tok and re.search(r"\.(sh|py)$", tok):
            t = tok[2:] if tok.startswith("./") else tok
            if os.path.isfile(os.path.join(tree.root, t)):
                rel = t
        if rel:
            flags = tree.script_flags(rel)
            i = scan_options(toks, i + 1, doc, n, rel, flags, problems)
            continue
        if base in tree.programs and (i == 0 or "/" in tok or toks[i - 1] in ("|", "&&", ";")):
            i = scan_options(toks, i + 1, doc, n, base, tree.program_flags(base), problems)
            continue
        i += 1


def scan_options(toks, i, doc, n, name, taken, problems):
    """Checks the options from toks[i] to the end of the command; returns where it ends."""
    while i < len(toks):
        tok = toks[i]
        if tok in ("|", "||", "&&", ";") or tok.startswith("#") or tok.startswith("$("):
            break
        opt = option_of(tok)
        if opt and opt.startswith("--") and taken is not None and opt not in taken:
            problems.add(doc, n, "%s %s" % (name, opt), "%s takes no such option" % name)
        if tok.endswith((";", ")")) and not tok.endswith("])") and not opt:
            i += 1
            break
        i += 1
    return i


def check_doc(tree, docs_root, doc, problems):
    lines = read(os.path.join(docs_root, doc)).split("\n")
    in_changelog = doc == "CHANGELOG.md"
    rows = changelog_range(lines) if in_changelog else range(len(lines))
    ctx = contexts(lines)
    code = code_lines(lines)
    loose_tool = doc == "docs/lance-index.md"
    # An option alone on that page is taken by some command, or by a script the page runs
    # (examples/ray_build.py's --train-resource).
    page_options = set().union(*tree.commands.values()) | tree.common_options
    for tok in set(re.findall(r"[\w./-]+/[\w.-]+\.(?:sh|py)\b", "\n".join(lines))) if loose_tool else ():
        if os.path.isfile(os.path.join(tree.root, tok)):
            page_options |= tree.script_flags(tok) or set()
    old_names_table = False
    for i in rows:
        line, n = lines[i], i + 1
        if line.lstrip().startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if i == 0 or not lines[i - 1].lstrip().startswith("|"):
                old_names_table = in_changelog and re.match(r"(?i)(removed|renamed)\b", cells[0]) is not None
            elif old_names_table:
                line = "|" + "|".join(cells[1:]) + "|"  # the old names' column is left out
        else:
            old_names_table = False
        check_names(tree, doc, n, line, problems, ctx[i])
        if i not in code:
            spans = [m.group(1) for m in SPAN.finditer(line)]
        elif i > 0 and (i - 1) in code and lines[i - 1].rstrip().endswith("\\"):
            spans = []  # read with the line it continues
        else:
            spans, j = [line], i  # a command continued over lines (\) is one
            while spans[0].rstrip().endswith("\\") and j + 1 in code:
                j += 1
                spans[0] = spans[0].rstrip()[:-1] + " " + lines[j]
        for span in spans:
            for tok in path_tokens(span):
                check_path(tree, doc, n, tok, ctx[i], problems, in_changelog)
            check_invocations(tree, doc, n, span, problems)
            opt = option_of(span) if i not in code else None
            if opt in EXTERNAL_OPTIONS:
                problems.used.add(opt)
            elif opt and opt.startswith("--") and span.split()[0] == opt:
                if loose_tool and opt not in page_options:
                    problems.add(doc, n, opt, "no lance-index command, and no script the page runs, "
                                 "takes this option")
                elif opt not in tree.all_options():
                    problems.add(doc, n, opt, "no command, script or program of the tree takes this option")
        for m in LINK.finditer(line):
            target = m.group(1).split("#", 1)[0]
            if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("/"):
                continue
            path = os.path.normpath(os.path.join(os.path.dirname(doc), target))
            if not os.path.exists(os.path.join(tree.root, path)):
                problems.add(doc, n, target, "the link's target does not exist (%s)" % path)


def check(root, docs_root):
    tree = Tree(root)
    problems = Problems()
    docs = doc_list(docs_root)
    for doc in docs:
        check_doc(tree, docs_root, doc, problems)
    unused = [k for table in (ALLOWED, EXTERNAL_OPTIONS, FOREIGN_FILES, REMOVED_IN_CHANGELOG)
              for k in table if k not in problems.used]
    return docs, problems.lines, unused


# ---- planted drift ----------------------------------------------------------
PLANTS = [  # (document, appended text, the name the report must give)
    ("docs/distributed-builds.md", "Then call `lance_dataset_planted_probe()` once.",
     "lance_dataset_planted_probe"),
    ("docs/contributing.md", "The probe lives in `scripts/planted_probe.sh`.", "scripts/planted_probe.sh"),
    ("docs/lance-index.md", "Probe: `lance-index build URI --planted-option 3`.",
     "lance-index build --planted-option"),
]


def planted_drift(root):
    tmp = tempfile.mkdtemp()
    try:
        for doc in doc_list(root):
            os.makedirs(os.path.join(tmp, os.path.dirname(doc)), exist_ok=True)
            shutil.copy(os.path.join(root, doc), os.path.join(tmp, doc))
        _, before, _ = check(root, tmp)
        want = set()
        for doc, text, name in PLANTS:
            path = os.path.join(tmp, doc)
            body = read(path).rstrip("\n") + "\n\n" + text + "\n"
            with open(path, "w") as f:
                f.write(body)
            want.add("%s:%d: %s:" % (doc, body.count("\n"), name))
        run = subprocess.run([sys.executable, os.path.abspath(__file__), "--root", root, "--docs", tmp],
                             stdout=subprocess.PIPE, universal_newlines=True)
    finally:
        shutil.rmtree(tmp)
    after = [l for l in run.stdout.split("\n") if re.match(r"^\S+:\d+: ", l)]
    new = [l for l in after if l not in before]
    got = {re.match(r"^(\S+:\d+: .*?:) ", l).group(1) for l in new}
    print("--- the check's report on the planted drift:")
    print(run.stdout, end="")
    fail = False
    if run.returncode != 1:
        print("FAIL: the check exited %d on the planted drift, not 1" % run.returncode)
        fail = True
    for w in sorted(want - got):
        print("FAIL: the report lacks %s" % w)
        fail = True
    for g in sorted(got - want):
        print("FAIL: the report has %s, which was not planted" % g)
        fail = True
    if fail:
        return 1
    print("planted drift: exactly the %d planted names reported, exit status 1" % len(want))
    return 0


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    root, docs_root = os.path.dirname(here), None
    args = list(argv)
    if args == ["--planted-drift"]:
        return planted_drift(root)
    while args:
        a = args.pop(0)
        if a == "--root" and args:
            root = os.path.abspath(args.pop(0))
        elif a == "--docs" and args:
            docs_root = os.path.abspath(args.pop(0))
        else:
            sys.stderr.write("usage: check_docs.py [--root DIR] [--docs DIR] | check_docs.py --planted-drift\n")
            return 2
    docs, problems, unused = check(root, docs_root or root)
    for p in problems:
        print(p)
    for k in unused:  # not a failure: the list may be trimmed
        print("note: %s is in a list of check_docs.py but no document needs it now" % k)
    if problems:
        print("check_docs: %d problem(s) in %d documents" % (len(problems), len(docs)))
        return 1
    print("check_docs: %d documents, every function, type, path and option they name exists" % len(docs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
