#!/usr/bin/env bash
# Prints the names of the functions lance.h ($1) declares, one a line, sorted:
# the API the libraries must export (check_exports.sh) and the only symbols
# the shipped static archive keeps global (hide_symbols.sh).
set -euo pipefail
grep -E '^[A-Za-z_][A-Za-z0-9_ *]*[ *]lance_[a-z0-9_]+\(' "${1:?usage: api_functions.sh lance.h}" |
  sed -E 's/^[^(]*[ *](lance_[a-z0-9_]+)\(.*/\1/' | sort -u
