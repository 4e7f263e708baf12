#!/usr/bin/env bash
# Links the shared library that ships from the static archive that ships
# (hide_symbols.sh's one object, only the API global), with a version script
# of the functions lance.h declares: the library then exports exactly the
# API, whatever the crates in it mark #[no_mangle].  Cargo's own
# liblance_c.so cannot: with LTO every crate's code is in one object, and
# rustc's version script exports every #[no_mangle] function of every crate
# (crc-fast's 26 crc_fast_* among them), which no linker flag can take back
# (docs/building.md "LTO").
#   link_shared.sh lance.h shipped/liblance_c.a cargo/liblance_c.so out.so SONAME
# Cargo's liblance_c.so is read for one thing: the system libraries rustc
# linked it with (its DT_NEEDED entries), which this link needs too.
# CC names the C compiler driver to link with (default: cc).
set -euo pipefail
if [ $# -ne 5 ]; then
  echo "usage: link_shared.sh HEADER ARCHIVE CARGO_SO OUT SONAME" >&2
  exit 2
fi
header=$1 archive=$2 cargo_so=$3 out=$4 soname=$5
cc=${CC:-cc}
work=$(mktemp -d "$(dirname "$out")/.link_shared.XXXXXX")
trap 'rm -rf "$work"' EXIT

{
  echo "{"
  echo "  global:"
  "$(dirname "$0")/api_functions.sh" "$header" | sed 's/.*/    &;/'
  echo "  local: *;"
  echo "};"
} >"$work/api.map"
needed=$(readelf -d "$cargo_so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/-l:\1/p')
[ -n "$needed" ] || { echo "link_shared: no DT_NEEDED entries in $cargo_so" >&2; exit 1; }

started=$(date +%s)
# As rustc links a cdylib: unused sections dropped, full RELRO, no
# executable stack; --whole-archive because the archive's one object is
# the library.
# shellcheck disable=SC2086
"$cc" -shared -o "$work/lib.so" -Wl,-soname,"$soname" -Wl,--version-script="$work/api.map" \
  -Wl,--whole-archive "$archive" -Wl,--no-whole-archive \
  -Wl,--gc-sections -Wl,-O1 -Wl,-z,relro,-z,now -Wl,-z,noexecstack -Wl,--as-needed $needed
mv "$work/lib.so" "$out"
echo "link_shared: $(basename "$out") ($soname) linked in $(($(date +%s) - started)) s"
