#!/usr/bin/env bash
# Every function declared in lance.h is exported by the shared library, and
# every exported lance_ symbol is declared.
set -euo pipefail
header=$1
lib=$2
declared=$(grep -oE '\blance_[a-z0-9_]+[[:space:]]*\(' "$header" | tr -d ' (' | sort -u)
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -E '^lance_' | sort -u)
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
extra=$(comm -13 <(echo "$declared") <(echo "$exported"))
status=0
if [ -n "$missing" ]; then echo "declared but not exported:"; echo "$missing"; status=1; fi
if [ -n "$extra" ]; then echo "exported but not declared:"; echo "$extra"; status=1; fi
[ $status -eq 0 ] && echo "exports: $(echo "$declared" | wc -l) functions, header and library agree"
exit $status
