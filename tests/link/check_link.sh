#!/usr/bin/env bash
# Links tests/link/engine.c the way an engine links lance-c's static archive:
# one command, the engine's own zstd and lz4 static libraries (Debian's
# libzstd-dev and liblz4-dev, which scripts/setup.sh installs), the archive,
# -Wl,--gc-sections and no --whole-archive; then runs it.
#   check_link.sh CC SOURCE_DIR SHIPPED_ARCHIVE CARGO_ARCHIVE WORK_DIR
# The shipped archive (scripts/hide_symbols.sh) must link with the engine's
# libraries before it and after it, keep the CPU check's constructor, and
# run.  Cargo's archive is linked the same two ways and what happens is
# reported, not asserted: it exports its zstd and lz4 too.
set -euo pipefail
cc=$1
src=$2
shipped=$3
cargo_archive=$4
work=$5
mkdir -p "$work"
zstd=$("$cc" -print-file-name=libzstd.a)
lz4=$("$cc" -print-file-name=liblz4.a)
if [ ! -f "$zstd" ] || [ ! -f "$lz4" ]; then
  echo "check_link: the static libzstd.a and liblz4.a are required (scripts/setup.sh installs libzstd-dev and liblz4-dev)" >&2
  exit 1
fi
# test_util.c and the common/ files it builds on (its data, k-NN, scratch
# directories, clock and Arrow nodes are common/'s).
sources=("$src/tests/link/engine.c" "$src/tests/support/test_util.c" "$src/common/files.c" "$src/common/uuid_hex.c"
         "$src/common/measure.c" "$src/common/demo_data.c" "$src/common/arrow_c.c" "$src/common/temp_dir.c"
         "$src/common/segment_params.c")
flags=(-std=gnu11 -O2 -Wall -Wextra -Werror -I"$src/include" -I"$src/tests/support" -I"$src/common")

# link NAME ARCHIVE ORDER: builds $work/NAME; ORDER is engine-first (the
# engine's libraries before the archive) or lance-first.
link() {
  local libs=("$zstd" "$lz4" "$2")
  [ "$3" = lance-first ] && libs=("$2" "$zstd" "$lz4")
  local cmd=("$cc" "${flags[@]}" -o "$work/$1" "${sources[@]}" "${libs[@]}" -Wl,--gc-sections -lpthread -ldl -lm)
  echo "+ ${cmd[*]}"
  local started=$(date +%s)
  "${cmd[@]}" >"$work/$1.link.log" 2>&1 || { cat "$work/$1.link.log"; return 1; }
  echo "  linked in $(($(date +%s) - started)) s, $(stat -c %s "$work/$1") bytes"
}

status=0
for order in engine-first lance-first; do
  name=engine_shipped_$order
  if ! link "$name" "$shipped" "$order"; then
    echo "FAIL: the shipped archive does not link ($order)"; status=1; continue
  fi
  # The CPU check is reached by no call: only its .init_array entry keeps it.
  # (grep reads all of nm's output: with -q, nm's SIGPIPE fails the pipeline)
  if ! nm "$work/$name" | grep ' t check_at_load$' >/dev/null; then
    echo "FAIL: the CPU check's constructor was not linked ($order)"; status=1
  fi
  "$work/$name" || { echo "FAIL: the program linked with the shipped archive failed ($order)"; status=1; }
done

echo "---- cargo's archive, linked the same way (reported, not checked) ----"
for order in engine-first lance-first; do
  name=engine_cargo_$order
  if link "$name" "$cargo_archive" "$order" >"$work/$name.log" 2>&1; then
    if "$work/$name" >>"$work/$name.log" 2>&1; then outcome="links and runs"; else outcome="links, run fails (exit $?)"; fi
  else
    outcome="does not link"
  fi
  echo "cargo archive, $order: $outcome"
  grep -E 'multiple definition|FAIL|zstd .*, lz4|checks' "$work/$name.log" | sed 's/^/  /' | head -8 || true
done
exit $status
