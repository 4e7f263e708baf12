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
# linked against it must run too, as an engine's third-party script would
# use it; what it exports besides the header's functions is reported.
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

# link NAME ARCHIVE ORDER: builds $work/NAME; ORDER is engine-first (the
# engine's libraries before the archive) or lance-first.
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
  # Cargo names the file liblance_c.so; the program asks for its SONAME.
  soname=$(readelf -d "$cargo_so" | sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p')
  mkdir -p "$work/cargo_so"
  ln -sf "$(readlink -f "$cargo_so")" "$work/cargo_so/${soname:-liblance_c.so}"
  if link engine_cargo_so "$cargo_so" engine-first -Wl,-rpath,"$work/cargo_so" &&
     [ "$(ldd "$work/engine_cargo_so" | awk '/liblance_c/ {print $3}')" = "$work/cargo_so/$soname" ] &&
     "$work/engine_cargo_so"; then
    api=$("$src/scripts/api_functions.sh" "$src/include/lance/lance.h")
    exported=$(nm -D --defined-only "$cargo_so" | awk 'NF == 3 {print $3}' | sort -u)
    missing=$(comm -23 <(echo "$api") <(echo "$exported"))
    extra=$(comm -13 <(echo "$api") <(echo "$exported"))
    [ -z "$missing" ] || { echo "FAIL: cargo's liblance_c.so does not export: $missing"; status=1; }
    echo "cargo's shared library runs the program; besides the header's functions it exports" \
         "$(echo "$extra" | grep -c . || true): $(echo "$extra" | head -3 | tr '\n' ' ')..."
  else
    echo "FAIL: the program linked with cargo's liblance_c.so failed"; status=1
  fi
fi
exit $status
