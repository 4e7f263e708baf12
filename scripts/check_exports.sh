#!/usr/bin/env bash
# The shared library exports exactly the functions lance.h declares: every
# declared function is exported, every exported symbol is a declared
# function (no dependency's C functions, no data), and, when given, the
# library's SONAME is the expected one.
#   check_exports.sh lance.h liblance_c.so [SONAME]
set -euo pipefail
header=$1
lib=$2
soname=${3:-}
# Symbols the toolchain may export besides the API, one a line: none (the
# version script of scripts/link_shared.sh makes every other symbol local,
# _init, _fini, __bss_start, _edata and _end included).  A name added here
# must say why.
allowed=""
declared=$("$(dirname "$0")/api_functions.sh" "$header")
# "name type" of every defined dynamic symbol.
defined=$(nm -D --defined-only "$lib" | awk 'NF == 3 {print $3, $2}' | sort -u)
missing=$(comm -23 <(echo "$declared") <(echo "$defined" | awk '$2 == "T" {print $1}'))
extra=$(echo "$defined" | awk -v api="$declared
$allowed" 'BEGIN {n = split(api, names, "\n"); for (i = 1; i <= n; i++) ok[names[i]] = 1}
  !($1 in ok) {print "  " $1 " (nm type " $2 ")"}')
status=0
if [ -n "$missing" ]; then echo "declared but not exported as functions:"; echo "$missing"; status=1; fi
if [ -n "$extra" ]; then echo "exported but not declared in $(basename "$header"):"; echo "$extra"; status=1; fi
if [ -n "$soname" ]; then
  actual=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p')
  if [ "$actual" != "$soname" ]; then echo "SONAME is '${actual:-none}', expected '$soname'"; status=1; fi
fi
[ $status -eq 0 ] && echo "exports: the $(echo "$declared" | wc -l) functions of the header and nothing else${soname:+, SONAME $soname}"
exit $status
