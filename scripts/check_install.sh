#!/usr/bin/env bash
# A user's view of the binary package: packages the build in $1 with
# scripts/package.sh (or takes $1 as a package already made, a .tar.xz with
# its .sha256 beside it), checks its checksum, unpacks it in a scratch
# directory, and builds and runs the consumer in $2 four ways: through
# find_package(lance-c) and through pkg-config, each shared and static.
# Then the packaged lance-index runs on its RUNPATH.
#   check_install.sh BUILD_DIR|PACKAGE.tar.xz CONSUMER_DIR
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
consumer=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -d "$1" ]; then
  # The quickest xz level: what is checked is the content.
  XZ_OPT=${XZ_OPT:--0} "$root/scripts/package.sh" --build-dir "$1" --out "$work/dist" >"$work/package.log" 2>&1 ||
    { cat "$work/package.log"; exit 1; }
  package=$(ls "$work"/dist/lance-c-*.tar.xz | grep -v -- '-debug\.tar\.xz$')
else
  package=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
fi
(cd "$(dirname "$package")" && sha256sum --quiet -c "$(basename "$package").sha256")
mkdir "$work/unpacked"
tar -xJf "$package" -C "$work/unpacked"
prefix=$(ls -d "$work"/unpacked/lance-c-*)
libdir=$prefix/lib
version=$(sed -n 's/^Version: //p' "$libdir/pkgconfig/lance-c.pc")
soname=$(readelf -d "$libdir/liblance_c.so.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p')

# needs PROGRAM: the lance-c library PROGRAM asks the loader for, if any.
needs() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(liblance_c[^]]*\)\]$/\1/p'; }
# check_linked PROGRAM shared|static: runs PROGRAM; a shared one must ask for
# the SONAME, a static one for no lance-c library at all.
check_linked() {
  local want=""
  [ "$2" = shared ] && want=$soname
  [ "$(needs "$1")" = "$want" ] ||
    { echo "$(basename "$1") needs '$(needs "$1")', expected '$want'" >&2; exit 1; }
  LD_LIBRARY_PATH="$libdir" "$1"
}

cmake -S "$consumer" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DLANCE_C_WANTED_VERSION="${version%.*}" >/dev/null
cmake --build "$work/build" >/dev/null
check_linked "$work/build/consumer" shared
check_linked "$work/build/consumer_static" static

export PKG_CONFIG_PATH="$libdir/pkgconfig"
cc -std=c11 -o "$work/pc_consumer" "$consumer/consumer.c" $(pkg-config --cflags --libs lance-c)
check_linked "$work/pc_consumer" shared
cc -std=c11 -o "$work/pc_consumer_static" "$consumer/consumer.c" $(pkg-config --cflags lance-c) \
  "$libdir/liblance_c.a" $(pkg-config --libs-only-l --static lance-c | sed 's/-llance_c//') -Wl,--gc-sections
check_linked "$work/pc_consumer_static" static

# The tool finds the packaged library through its RUNPATH, by the SONAME.
"$prefix/bin/lance-index" --version
loaded=$(ldd "$prefix/bin/lance-index" | awk '/liblance_c/ {print $3}')
[ "$(readlink -f "$loaded")" = "$libdir/liblance_c.so.$version" ] ||
  { echo "lance-index loads $loaded, not the packaged library" >&2; exit 1; }

# The debug info, when this script made the package: unpacked over it, it
# lies next to the library, and it is the library's (same build ID).
debug=${package%.tar.xz}-debug.tar.xz
if [ -f "$debug" ]; then
  (cd "$(dirname "$debug")" && sha256sum --quiet -c "$(basename "$debug").sha256")
  tar -xJf "$debug" -C "$work/unpacked"
  build_id() { readelf -n "$1" | sed -n 's/.*Build ID: //p'; }
  [ -n "$(build_id "$libdir/liblance_c.so.$version")" ] &&
    [ "$(build_id "$libdir/liblance_c.so.$version.debug")" = "$(build_id "$libdir/liblance_c.so.$version")" ] ||
    { echo "the debug file's build ID is not the library's" >&2; exit 1; }
fi
echo "install check: $(basename "$package"): find_package and pkg-config consumers (shared and static) and the tool passed"
