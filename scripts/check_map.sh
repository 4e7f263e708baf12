#!/usr/bin/env bash
# The map check.  scripts/check_map.py holds it (what it checks, and its
# options: --toc, --planted-drift, --root and the others); this wrapper runs
# it with the same arguments, for the callers that name the shell script
# (ctest's test_map and test_map_drift, the documentation).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec python3 "$here/check_map.py" "$@"
