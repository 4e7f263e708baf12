#!/usr/bin/env bash
# Builds the lance-index tool and runs the Ray example: the plan / train /
# build / commit loop as Ray tasks in local mode.  Installs Ray into the
# project's Python environment first.  Usage: scripts/ray_demo.sh [--rows N] [--workers W]
source "$(dirname "$0")/configure.sh"
cmake --build "$build" --target lance_index_tool
venv=${LANCE_C_VENV:-$HOME/.cache/lance-c/venv}
"$venv/bin/python" -c "import ray" 2>/dev/null || "$venv/bin/pip" install -q "ray==2.60.0"
"$venv/bin/python" "$root/examples/ray_build.py" "$build/lance-index" "$@"
