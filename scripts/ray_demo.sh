#!/usr/bin/env bash
# Builds the lance-index tool and runs the Ray example: the plan / train /
# build / commit loop as Ray tasks in local mode (scripts/setup.sh, run
# first, puts Ray into the project's Python environment).
# Usage: scripts/ray_demo.sh [--rows N] [--workers W] [--index-type IVF_FLAT]
source "$(dirname "$0")/configure.sh"
cmake --build "$build" --target lance_index_tool
venv=${LANCE_C_VENV:-$HOME/.cache/lance-c/venv}
"$venv/bin/python" "$root/examples/ray_build.py" "$build/lance-index" "$@"
