#!/usr/bin/env bash
# The formatting check: every C/C++ file of the project (.c, .h, .cpp, .hpp,
# git's tracked and untracked-but-not-ignored files) must be what
# clang-format makes of it under .clang-format, and the crate what rustfmt
# makes of it under rustfmt.toml (`cargo fmt --check`).  It fails (exit 1)
# naming each file that differs, and prints what to run; it builds nothing.
#
# Usage:
#   check_format.sh [--c | --rust] [--root DIR]          the check
#   check_format.sh --fix [--c | --rust] [--root DIR]    rewrite the files
# --c and --rust limit it to one language.  --root defaults to this script's
# parent directory.
#
# Needs clang-format and cargo fmt (rustfmt) only.  .clang-format is tuned for clang-format 14
# (Debian 12's; scripts/setup.sh --test installs it): clang-format-14 is
# preferred when installed, $CLANG_FORMAT names another binary, and another
# major version is used with a warning, since its layout may differ in
# places.  Exit status: 0 formatted, 1 some file is not, 2 a tool is missing
# or the command line is wrong.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
fix=0
langs="c rust"
while [[ $# -gt 0 ]]; do
    case $1 in
        --fix) fix=1 ;;
        --c) langs=c ;;
        --rust) langs=rust ;;
        --root)
            [[ $# -ge 2 ]] || { echo "check_format.sh: --root needs a directory" >&2; exit 2; }
            root=$(cd "$2" && pwd)
            shift
            ;;
        *) echo "usage: check_format.sh [--fix] [--c | --rust] [--root DIR]" >&2; exit 2 ;;
    esac
    shift
done
cd "$root"

# The project's C and C++ files, relative to the root: those under its
# source folders (so not a build directory's, such as CMake's compiler
# probes), tracked or new.  Nothing there is vendored or generated; a file
# that were would be left out here.
folders='^(include|common|examples|tools|bench|tests|src)/'
c_files() {
    if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        git ls-files --cached --others --exclude-standard -- '*.c' '*.h' '*.cpp' '*.hpp'
    else
        find include common examples tools bench tests src \
            -type f \( -name '*.c' -o -name '*.h' -o -name '*.cpp' -o -name '*.hpp' \) 2>/dev/null
    fi | grep -E "$folders" | grep -v '/CMakeFiles/' | sort -u |
        while IFS= read -r f; do [[ -f $f ]] && printf '%s\n' "$f"; done
}

find_clang_format() {
    local c
    for c in "${CLANG_FORMAT:-}" clang-format-14 clang-format; do
        [[ -n $c ]] && command -v "$c" >/dev/null 2>&1 && { echo "$c"; return 0; }
    done
    return 1
}

status=0
unformatted=()
fixes=()

if [[ " $langs " == *" c "* ]]; then
    if ! cf=$(find_clang_format); then
        echo "check_format.sh: no clang-format (the Debian package clang-format; scripts/setup.sh --test installs it)" >&2
        exit 2
    fi
    major=$("$cf" --version | sed -n 's/.*clang-format version \([0-9]*\).*/\1/p')
    if [[ "$major" != 14 ]]; then
        echo "check_format.sh: warning: $cf is clang-format ${major:-of an unknown version}, not 14: its layout may differ from .clang-format's in places" >&2
    fi
    mapfile -t files < <(c_files)
    if [[ ${#files[@]} -eq 0 ]]; then
        echo "check_format.sh: no C or C++ files under $root" >&2
        exit 2
    fi
    if [[ $fix -eq 1 ]]; then
        "$cf" -i --style=file -- "${files[@]}"
        echo "clang-format: formatted ${#files[@]} C/C++ files"
    else
        bad=0
        for f in "${files[@]}"; do
            if ! "$cf" --style=file -- "$f" | cmp -s - "$f"; then
                unformatted+=("$f")
                bad=$((bad + 1))
            fi
        done
        if [[ $bad -gt 0 ]]; then
            status=1
            fixes+=("$cf -i on the C/C++ files (.clang-format)")
        fi
        echo "clang-format: $bad of ${#files[@]} C/C++ files need formatting"
    fi
fi

if [[ " $langs " == *" rust "* ]]; then
    export PATH="$HOME/.cargo/bin:$PATH"
    if ! cargo fmt --version >/dev/null 2>&1; then
        echo "check_format.sh: no cargo fmt (rustup component add rustfmt)" >&2
        exit 2
    fi
    if [[ $fix -eq 1 ]]; then
        cargo fmt
        echo "cargo fmt: formatted the crate"
    else
        # -l: the names of the files that differ, one a line.
        out=$(cargo fmt --check -- -l) && rc=0 || rc=$?
        if [[ $rc -ne 0 && -z $out ]]; then
            echo "check_format.sh: cargo fmt --check failed (exit $rc) without naming a file" >&2
            exit 2
        fi
        n=0
        while IFS= read -r f; do
            [[ -n $f ]] || continue
            unformatted+=("${f#"$root"/}")
            n=$((n + 1))
        done <<<"$out"
        if [[ $n -gt 0 ]]; then
            status=1
            fixes+=("cargo fmt (rustfmt.toml)")
        fi
        echo "cargo fmt --check: $n Rust files need formatting"
    fi
fi

if [[ $status -ne 0 ]]; then
    for f in "${unformatted[@]}"; do echo "not formatted: $f"; done
    echo "FAIL: ${#unformatted[@]} file(s) differ from what their formatter makes of them."
    echo "To fix: scripts/check_format.sh --fix, which runs"
    for x in "${fixes[@]}"; do echo "  $x"; done
    echo "(review the changes before committing them)."
    exit 1
fi
[[ $fix -eq 1 ]] || echo "format: every file is formatted"
