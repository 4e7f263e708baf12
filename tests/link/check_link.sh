#!/usr/bin/env bash
# Links tests/link/engine.c the way an engine links lance-c's static archive:
# one command, the engine's own zstd and lz4 static libraries (Debian's
# libzstd-dev and liblz4-dev, which scripts/setup.sh installs), the archive,
# -Wl,--gc-sections and no --whole-archive; then runs it.
#   check_link.sh CC SOURCE_DIR SHIPPED_ARCHIVE CARGO_ARCHIVE WORK_DIR [CARGO_SO]
# The shipped archive (scripts/hide_symbols.sh) must link with the engine's
# libraries before it and after it, keep the CPU check's constructor, and
# run.  Cargo's archive is linked the same two ways and what happens is
# reported, not asserted: it exports its zstd and lz4 too.
# CARGO_SO, when given, is the liblance_c.so a plain `cargo build --release`
# writes (the build ships its own, scripts/link_shared.sh): the same program
# linked against it as upstream's harness and an engine's third-party script
# link it (-L <cargo's directory> -llance_c), and by its path, must run with
# only cargo's directory on LD_LIBRARY_PATH, no link of another name beside
# it; so its SONAME, which the program records, must be none or the name of
# the file cargo writes.  What it exports besides the header's functions is
# reported.
set -euo pipefail
cc=$1
src=$2
shipped=$3
cargo_archive=$4
work=$5
cargo_so=${6:-}
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

# link NAME LIBRARY ORDER [ARG...]: builds $work/NAME; ORDER is engine-first
# (the engine's libraries before LIBRARY, an archive, a shared library or
# -L<dir>) or lance-first; ARGs end the command.
link() {
  local libs=("$zstd" "$lz4" "$2")
  [ "$3" = lance-first ] && libs=("$2" "$zstd" "$lz4")
  local cmd=("$cc" "${flags[@]}" -o "$work/$1" "${sources[@]}" "${libs[@]}" -Wl,--gc-sections -lpthread -ldl -lm
             "${@:4}")
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
if [ -n "$cargo_so" ]; then
  echo "---- the liblance_c.so cargo writes ----"
  cargo_dir=$(dirname "$cargo_so")
  soname=$(readelf -d "$cargo_so" | sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p')
  echo "cargo's $(basename "$cargo_so"): SONAME ${soname:-none}"
  if [ -n "$soname" ] && [ "$soname" != "$(basename "$cargo_so")" ]; then
    echo "FAIL: the SONAME $soname names no file cargo writes: a program linked against it cannot start"; status=1
  fi
  for form in flag path; do
    name=engine_cargo_so_$form
    if [ $form = flag ]; then
      linked=$(link "$name" -L"$cargo_dir" engine-first -llance_c)
    else
      linked=$(link "$name" "$cargo_so" engine-first)
    fi || { echo "$linked"; echo "FAIL: the program does not link against cargo's liblance_c.so ($form)"; status=1; continue; }
    echo "$linked"
    loaded=$(LD_LIBRARY_PATH="$cargo_dir" ldd "$work/$name" | awk '/liblance_c/ {print $3}')
    if [ "$(readlink -f "$loaded")" != "$(readlink -f "$cargo_so")" ]; then
      echo "FAIL: with LD_LIBRARY_PATH=$cargo_dir the program ($form) loads '${loaded:-nothing}', not cargo's file"
      status=1
    elif ! LD_LIBRARY_PATH="$cargo_dir" "$work/$name"; then
      echo "FAIL: the program linked against cargo's liblance_c.so ($form) failed"; status=1
    fi
  done
  api=$("$src/scripts/api_functions.sh" "$src/include/lance/lance.h")
  exported=$(nm -D --defined-only "$cargo_so" | awk 'NF == 3 {print $3}' | sort -u)
  missing=$(comm -23 <(echo "$api") <(echo "$exported"))
  extra=$(comm -13 <(echo "$api") <(echo "$exported"))
  [ -z "$missing" ] || { echo "FAIL: cargo's liblance_c.so does not export: $missing"; status=1; }
  echo "cargo's shared library exports, besides the header's functions," \
       "$(echo "$extra" | grep -c . || true): $(echo "$extra" | head -3 | tr '\n' ' ')..."
fi
exit $status
