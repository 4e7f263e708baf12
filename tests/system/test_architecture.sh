#!/usr/bin/env bash
# The layout rules docs/architecture.md states, checked on the tree:
#   1. no src/api module imports another (imports run from api down to the
#      wings; the wings' own rules are scripts/check_map.sh's);
#   2. every #[repr(C)] struct in src/ is followed by its c_layout! check;
#   3. every src/api/<section>.rs has tests/api/test_<section>.c, and ctest
#      runs a test of that name (given the build directory);
#   4. every function lance.h declares is defined in src/api, and no wing
#      (src/<wing>/) exports one.
# Usage: test_architecture.sh <source dir> [<build dir>]
set -euo pipefail
src=${1:?source directory}
tests_list=
if [[ -n "${2:-}" ]]; then
    tests_list=$(mktemp)
    trap 'rm -f "$tests_list"' EXIT
    ctest --test-dir "$2" -N > "$tests_list"
fi
cd "$src"
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# 1. api modules import only the wings (and std / crates).
while IFS= read -r hit; do
    bad "an api module imports another: $hit"
done < <(grep -n 'crate::api::\|super::[a-z_]*::' src/api/*.rs | grep -v '^src/api/mod.rs' || true)

# 2. each #[repr(C)] struct has a layout check right after its definition.
for f in $(grep -l '#\[repr(C)\]' -r src); do
    awk -v file="$f" '
        /#\[repr\(C\)\]/ { want = 1; next }
        want && /struct [A-Za-z_]+/ {
            match($0, /struct [A-Za-z_]+/); name = substr($0, RSTART + 7, RLENGTH - 7); inside = 1; want = 0; next
        }
        inside && /^}/ { inside = 0; pending = name; next }
        pending != "" {
            if ($0 !~ "^crate::c_layout!\\(" pending ",") { printf "FAIL: %s: struct %s has no c_layout! check after it\n", file, pending; bad = 1 }
            pending = ""
        }
        END { exit bad }
    ' "$f" || fail=1
done

# 3. one test per header section.
sections=$(ls src/api/*.rs | xargs -n1 basename | sed 's/\.rs$//' | grep -v '^mod$')
for s in $sections; do
    [[ -f tests/api/test_$s.c ]] || bad "src/api/$s.rs has no tests/api/test_$s.c"
    if [[ -n "$tests_list" ]] && ! grep -qE "Test +#[0-9]+: test_$s\$" "$tests_list"; then
        bad "ctest does not run test_$s"
    fi
done

# 4. the header's functions are the api modules' exports.
declared=$(scripts/api_functions.sh include/lance/lance.h | sort -u)
defined=$(grep -ho 'extern "C" fn lance_[a-z0-9_]*' src/api/*.rs | sed 's/.* fn //' | sort -u)
wings=$(grep -rho 'extern "C" fn lance_[a-z0-9_]*' --include='*.rs' src --exclude-dir=api | grep -v '^src/api/' || true)
[[ -z "$wings" ]] || bad "a wing exports functions: $wings"
missing=$(comm -23 <(echo "$declared") <(echo "$defined"))
extra=$(comm -13 <(echo "$declared") <(echo "$defined"))
[[ -z "$missing" ]] || bad "declared in lance.h, defined in no src/api module: $missing"
[[ -z "$extra" ]] || bad "defined in src/api, not declared in lance.h: $extra"

count=$(echo "$sections" | wc -w)
if [[ $fail -ne 0 ]]; then exit 1; fi
echo "architecture: $count sections, each with its test; $(echo "$declared" | wc -l) functions, all in src/api; no api-to-api import; every repr(C) struct layout-checked"
