#!/usr/bin/env bash
# Header hygiene: each public header of lance-c compiles alone in a strict
# build next to a program's own names, and defines no macro outside the
# library's prefixes.
#
#   tests/conformance/header_hygiene.sh CC CXX INCLUDE_DIR
#
# 1. Compiles.  lance.h as C11, C++17 and C++20 and lance.hpp as C++17 and
#    C++20, each with -Wall -Wextra -Werror -pedantic, the header directory
#    given with -I and with -isystem, in three programs:
#    hygiene_own_flags.c with its own ARROW_FLAG_* constants declared before
#    the header and after it, and hygiene_arrow_first.c (Arrow's own
#    definition of the C Data Interface first).
# 2. Macros.  Each header preprocessed with -dM -E, against a file that
#    includes the same standard headers it includes (which must be standard
#    ones): every macro it adds, changes or removes must start with LANCE_,
#    lance_ or Lance, or be one of the Arrow specification's guards
#    ARROW_C_DATA_INTERFACE and ARROW_C_STREAM_INTERFACE.
# 3. Self-check.  Copies of the headers with a planted fault (a macro
#    ARROW_FLAG_NULLABLE, as lance.h once defined; an enumerator
#    ARROW_FLAG_MAP_KEYS_SORTED) must fail the checks above, so that a check
#    which passes everything cannot go unnoticed.
set -euo pipefail
cc=${1:?usage: header_hygiene.sh CC CXX INCLUDE_DIR}
cxx=${2:?usage: header_hygiene.sh CC CXX INCLUDE_DIR}
include=$(cd "${3:?usage: header_hygiene.sh CC CXX INCLUDE_DIR}" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

warnings=(-Wall -Wextra -Werror -pedantic)
# "header language standard"
configs=("lance.h c c11" "lance.h c++ c++17" "lance.h c++ c++20" "lance.hpp c++ c++17" "lance.hpp c++ c++20")
# "source extra-define description"
programs=("hygiene_own_flags.c -DHYGIENE_FLAGS_FIRST own-flags-before"
          "hygiene_own_flags.c -UHYGIENE_FLAGS_FIRST own-flags-after"
          "hygiene_arrow_first.c -UHYGIENE_FLAGS_FIRST arrow-first")
c_headers=" assert.h complex.h ctype.h errno.h fenv.h float.h inttypes.h iso646.h limits.h locale.h math.h
 setjmp.h signal.h stdalign.h stdarg.h stdatomic.h stdbool.h stddef.h stdint.h stdio.h stdlib.h
 stdnoreturn.h string.h tgmath.h threads.h time.h uchar.h wchar.h wctype.h "

compiler_for() { if [ "$1" = c ]; then echo "$cc"; else echo "$cxx"; fi; }

# compile INCLUDE_DIR HEADER LANGUAGE STANDARD MODE SOURCE DEFINE: the
# compiler's status; its output is in $work/log.
compile() {
  local dir=$1 header=$2 language=$3 standard=$4 mode=$5 source=$6 define=$7
  "$(compiler_for "$language")" -x "$language" -std="$standard" "${warnings[@]}" "$mode" "$dir" \
    "-DHYGIENE_HEADER=<lance/$header>" "$define" -c "$here/$source" -o /dev/null >"$work/log" 2>&1
}

# The <...> includes of a header and of the lance headers it includes.
std_includes() {
  local dir=$1 file=$2 nested
  sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<([^>]+)>.*/\1/p' "$dir/lance/$file"
  for nested in $(sed -nE 's|^[[:space:]]*#[[:space:]]*include[[:space:]]*"lance/([^"]+)".*|\1|p' "$dir/lance/$file"); do
    std_includes "$dir" "$nested"
  done
}

is_standard() { # NAME LANGUAGE: a C standard header, or (in C++) a C++ one
  case "$c_headers" in *" $1 "*) return 0 ;; esac
  [ "$2" = c++ ] && [[ $1 =~ ^[a-z_]+$ ]]
}

# check_macros INCLUDE_DIR HEADER LANGUAGE STANDARD: prints what is wrong,
# nothing when the header is clean.
check_macros() {
  local dir=$1 header=$2 language=$3 standard=$4 name
  local compiler
  compiler=$(compiler_for "$language")
  : >"$work/baseline.src"
  for name in $(std_includes "$dir" "$header" | sort -u); do
    is_standard "$name" "$language" || echo "includes <$name>, not a standard header"
    echo "#include <$name>" >>"$work/baseline.src"
  done
  echo "#include <lance/$header>" >"$work/header.src"
  "$compiler" -x "$language" -std="$standard" -I "$dir" -dM -E "$work/baseline.src" | LC_ALL=C sort >"$work/baseline.macros"
  "$compiler" -x "$language" -std="$standard" -I "$dir" -dM -E "$work/header.src" | LC_ALL=C sort >"$work/header.macros"
  # Definitions the header adds or changes, and ones it removes or changes.
  for name in $({ LC_ALL=C comm -13 "$work/baseline.macros" "$work/header.macros"
                  LC_ALL=C comm -23 "$work/baseline.macros" "$work/header.macros"; } |
                awk '{ sub(/\(.*/, "", $2); print $2 }' | LC_ALL=C sort -u); do
    case "$name" in
      LANCE_* | lance_* | Lance* | ARROW_C_DATA_INTERFACE | ARROW_C_STREAM_INTERFACE) ;;
      *) echo "defines, changes or removes the macro $name" ;;
    esac
  done
}

failures=0
compiles=0
fail() {
  failures=$((failures + 1))
  echo "FAIL $1"
  sed 's/^/     /' "${2:-/dev/null}"
}

# ---- 1. compiles -----------------------------------------------------------
for config in "${configs[@]}"; do
  read -r header language standard <<<"$config"
  for mode in -I -isystem; do
    for program in "${programs[@]}"; do
      read -r source define description <<<"$program"
      compiles=$((compiles + 1))
      what="$header $standard $mode $description"
      if compile "$include" "$header" "$language" "$standard" "$mode" "$source" "$define"; then
        echo "ok   $what"
      else
        fail "$what" "$work/log"
      fi
    done
  done
done

# ---- 2. macros -------------------------------------------------------------
for config in "${configs[@]}"; do
  read -r header language standard <<<"$config"
  what="$header $standard macros"
  check_macros "$include" "$header" "$language" "$standard" >"$work/macros"
  if [ -s "$work/macros" ]; then fail "$what" "$work/macros"; else echo "ok   $what"; fi
done

# ---- 3. self-check: planted faults are caught -----------------------------
plant() { # DIRECTORY LINE: a copy of the headers with LINE appended to lance.h
  mkdir -p "$1"
  cp -R "$include/lance" "$1/"
  printf '\n%s\n' "$2" >>"$1/lance/lance.h"
}
plant "$work/macro" "#define ARROW_FLAG_NULLABLE 2"
plant "$work/enumerator" "enum { ARROW_FLAG_MAP_KEYS_SORTED = 4 };"
if check_macros "$work/macro" lance.h c c11 | grep -q 'ARROW_FLAG_NULLABLE'; then
  echo "ok   self-check: the macro check finds a planted ARROW_FLAG_NULLABLE"
else
  fail "self-check: the macro check missed a planted ARROW_FLAG_NULLABLE"
fi
if compile "$work/macro" lance.hpp c++ c++20 -isystem hygiene_own_flags.c -UHYGIENE_FLAGS_FIRST; then
  fail "self-check: a program with its own ARROW_FLAG_NULLABLE compiled against a header defining the macro"
else
  echo "ok   self-check: a planted macro breaks the program's own constants"
fi
if compile "$work/enumerator" lance.h c c11 -isystem hygiene_own_flags.c -DHYGIENE_FLAGS_FIRST; then
  fail "self-check: a program with its own ARROW_FLAG_MAP_KEYS_SORTED compiled against a header declaring it"
else
  echo "ok   self-check: a planted declaration breaks the program's own constants"
fi

if [ "$failures" -ne 0 ]; then
  echo "header hygiene: $failures failed"
  exit 1
fi
echo "header hygiene: $compiles compiles and ${#configs[@]} macro checks passed, 3 planted faults caught"
