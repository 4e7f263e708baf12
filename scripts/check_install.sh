#!/usr/bin/env bash
# A user's view of the binary package: packages the build in $1 with
# scripts/package.sh (or takes $1 as a package already made, a .tar.xz with
# its .sha256 beside it), checks its checksum, unpacks it in a scratch
# directory, and builds and runs the consumer in $2 four ways: through
# find_package(lance-c) and through pkg-config, each shared and static, the
# pkg-config ones with README.md's commands.  Every program runs without
# LD_LIBRARY_PATH: on the RUNPATH CMake gives it, on -Wl,-rpath, or with no
# lance-c library to load.  Then the packaged lance-index runs on its RUNPATH,
# the licence files are checked (each crate of the inventory has its folder
# of licence files), and the stand-alone example (examples/standalone/), a
# project of its own, is built from the unpacked package alone through
# find_package and through pkg-config and run: a coordinator commits its
# worker processes' segments as one index, checked by the example and by
# the packaged lance-index.  With a build directory, last, a multiarch
# install (CMAKE_INSTALL_LIBDIR=lib/<multiarch>) of the same library: its
# .pc files' prefix, libdir and includedir, and the example built through
# each and run.
#   check_install.sh BUILD_DIR|PACKAGE.tar.xz CONSUMER_DIR
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
consumer=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
build=""
if [ -d "$1" ]; then
  build=$(cd "$1" && pwd)
  # The quickest xz level: what is checked is the content.
  XZ_OPT=${XZ_OPT:--0} "$root/scripts/package.sh" --build-dir "$1" --out "$work/dist" >"$work/package.log" 2>&1 ||
    { cat "$work/package.log"; exit 1; }
  for made in "$work"/dist/lance-c-*.tar.xz; do
    case $made in *-debug.tar.xz) ;; *) package=$made ;; esac
  done
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
# check_linked PROGRAM shared|static: runs PROGRAM as it is, with no
# LD_LIBRARY_PATH; a shared one must ask for the SONAME and load the packaged
# library, a static one must ask for no lance-c library at all.
check_linked() {
  local want="" loaded
  [ "$2" = shared ] && want=$soname
  [ "$(needs "$1")" = "$want" ] ||
    { echo "$(basename "$1") needs '$(needs "$1")', expected '$want'" >&2; exit 1; }
  if [ "$2" = shared ]; then
    loaded=$(env -u LD_LIBRARY_PATH ldd "$1" | awk '/liblance_c/ {print $3}')
    [ "$(readlink -f "$loaded")" = "$libdir/liblance_c.so.$version" ] ||
      { echo "$(basename "$1") loads '$loaded', not the packaged library" >&2; exit 1; }
  fi
  env -u LD_LIBRARY_PATH "$1"
}

# The library carries no RUNPATH of its own (it needs only system libraries);
# programs find it as README.md says.
if readelf -d "$libdir/liblance_c.so.$version" | grep -E '\((RUNPATH|RPATH)\)'; then
  echo "liblance_c.so.$version has a RUNPATH or RPATH" >&2
  exit 1
fi

# find_package: CMake links the imported targets by path and gives the shared
# consumer a build RUNPATH to the package's lib/.
cmake -S "$consumer" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DLANCE_C_WANTED_VERSION="${version%.*}" >/dev/null
cmake --build "$work/build" >/dev/null
check_linked "$work/build/consumer" shared
check_linked "$work/build/consumer_static" static

# pkg-config, as README.md writes it ("Install and use"): the shared library
# with -Wl,-rpath,<prefix>/lib, the static archive through lance-c-static.
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# shellcheck disable=SC2046 # pkg-config's output is split into arguments on purpose
cc -o "$work/pc_consumer" "$consumer/consumer.c" $(pkg-config --cflags --libs lance-c) -Wl,-rpath,"$prefix/lib"
check_linked "$work/pc_consumer" shared
# shellcheck disable=SC2046
cc -o "$work/pc_consumer_static" "$consumer/consumer.c" $(pkg-config --cflags --libs lance-c-static)
check_linked "$work/pc_consumer_static" static

# The tool finds the packaged library through its RUNPATH, by the SONAME.
env -u LD_LIBRARY_PATH "$prefix/bin/lance-index" --version
loaded=$(env -u LD_LIBRARY_PATH ldd "$prefix/bin/lance-index" | awk '/liblance_c/ {print $3}')
[ "$(readlink -f "$loaded")" = "$libdir/liblance_c.so.$version" ] ||
  { echo "lance-index loads $loaded, not the packaged library" >&2; exit 1; }

# The licence, the notice and the third-party inventory, as the tree holds them.
for file in LICENSE NOTICE THIRD-PARTY-LICENSES.md; do
  cmp -s "$root/$file" "$prefix/share/doc/lance-c/$file" ||
    { echo "the package's share/doc/lance-c/$file is missing or differs from $root/$file" >&2; exit 1; }
done
# The crates' licence files: a folder for each crate of the inventory's table
# (<crate>-<version>), no other, none of them empty.
doc=$prefix/share/doc/lance-c
awk -F' [|] ' '/^[|] crate [|] version [|]/ {table = 1; next}
  table && /^[|] [^-]/ {sub(/^[|] /, ""); print $1 "-" $2}' "$doc/THIRD-PARTY-LICENSES.md" | sort >"$work/crates.listed"
find "$doc/licenses" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' 2>/dev/null | sort >"$work/crates.packaged"
if [ ! -s "$work/crates.listed" ] || ! diff "$work/crates.listed" "$work/crates.packaged" >"$work/crates.diff"; then
  echo "share/doc/lance-c/licenses/ does not hold a folder for each crate of THIRD-PARTY-LICENSES.md" \
    "(<: listed only, >: packaged only):" >&2
  head -20 "$work/crates.diff" >&2
  exit 1
fi
empty=$(find "$doc/licenses" -mindepth 1 -maxdepth 1 -type d -empty)
[ -z "$empty" ] || { echo "licence folders without a file: $empty" >&2; exit 1; }

# The stand-alone example, from the unpacked package alone.
standalone=$root/examples/standalone
# run_standalone PROGRAM PREFIX shared|static: PROGRAM asks for the SONAME
# (shared) or for no lance-c library (static), and runs without
# LD_LIBRARY_PATH on a new dataset with 2 workers; it exits 0 only when the
# committed index holds each worker's segment over its planned fragments,
# and PREFIX's lance-index, reading the dataset on its own, sees every
# fragment indexed.
runs=0
run_standalone() {
  local dataset=$work/standalone-$((runs += 1)).lance want=""
  [ "$3" = shared ] && want=$soname
  [ "$(needs "$1")" = "$want" ] || { echo "$1 needs '$(needs "$1")', expected '$want'" >&2; exit 1; }
  env -u LD_LIBRARY_PATH "$1" "$dataset" 2 >"$work/standalone.out" ||
    { cat "$work/standalone.out"; echo "$1 failed" >&2; exit 1; }
  grep -q "committed 2 segments as id_idx in version" "$work/standalone.out" &&
    [ "$(grep -c '^  worker [01]: segment [0-9a-f]\{32\} over fragments [0-9,]*$' "$work/standalone.out")" = 2 ] ||
    { cat "$work/standalone.out"; echo "$1: not the expected report" >&2; exit 1; }
  env -u LD_LIBRARY_PATH "$2/bin/lance-index" coverage "$dataset" --name id_idx >"$work/coverage.out"
  grep -qx 'indexed fragments:   0,1,2,3 (4000 rows)' "$work/coverage.out" &&
    grep -qx 'unindexed fragments: none (0 rows)' "$work/coverage.out" &&
    [ "$(grep -c '^  segment ' "$work/coverage.out")" = 2 ] ||
    { cat "$work/coverage.out"; echo "lance-index coverage: not 2 segments over fragments 0-3" >&2; exit 1; }
}
cmake -S "$standalone" -B "$work/standalone" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DLANCE_C_WANTED_VERSION="${version%.*}" -DCMAKE_C_FLAGS=-Werror >/dev/null
cmake --build "$work/standalone" >/dev/null
run_standalone "$work/standalone/distributed_build" "$prefix" shared
mkdir "$work/standalone-pc"
make -s -C "$work/standalone-pc" -f "$standalone/Makefile" CFLAGS="-O2 -Wall -Wextra -Werror"
run_standalone "$work/standalone-pc/distributed_build" "$prefix" shared

# The debug info, when this script made the package: unpacked over it, it
# lies next to the library, and it is the library's (same build ID).
debug=${package%.tar.xz}-debug.tar.xz
if [ -f "$debug" ]; then
  (cd "$(dirname "$debug")" && sha256sum --quiet -c "$(basename "$debug").sha256")
  tar -xJf "$debug" -C "$work/unpacked"
  build_id() { readelf -n "$1" | sed -n 's/.*Build ID: //p'; }
  id=$(build_id "$libdir/liblance_c.so.$version")
  if [ -z "$id" ] || [ "$(build_id "$libdir/liblance_c.so.$version.debug")" != "$id" ]; then
    echo "the debug file's build ID is not the library's" >&2
    exit 1
  fi
fi

# A multiarch install of the same library (LANCE_C_PREBUILT_DIR: no cargo),
# configured beside the build: its .pc files lie three levels below the
# prefix, and find the prefix, libdir and includedir from there.
multiarch=""
if [ -n "$build" ]; then
  arch=$(cc -print-multiarch 2>/dev/null || true)
  multiarch=lib/${arch:-$(uname -m)-linux-gnu}
  mprefix=$work/multiarch-prefix
  cmake -S "$root" -B "$work/multiarch" -G Ninja -DLANCE_C_PREBUILT_DIR="$build/lib" -DLANCE_C_BUILD_TESTS=OFF \
    -DCMAKE_INSTALL_LIBDIR="$multiarch" >/dev/null
  cmake --build "$work/multiarch" --target lance_index_tool >/dev/null
  cmake --install "$work/multiarch" --prefix "$mprefix" >/dev/null
  [ -f "$mprefix/$multiarch/pkgconfig/lance-c.pc" ] ||
    { echo "the multiarch install has no $multiarch/pkgconfig/lance-c.pc" >&2; exit 1; }
  for pc in lance-c lance-c-static; do
    for pair in "prefix=$mprefix" "libdir=$mprefix/$multiarch" "includedir=$mprefix/include"; do
      got=$(PKG_CONFIG_PATH="$mprefix/$multiarch/pkgconfig" pkg-config --variable="${pair%%=*}" "$pc")
      [ "$(realpath -m "$got")" = "${pair#*=}" ] ||
        { echo "multiarch install: $pc.pc's ${pair%%=*} is $got, not ${pair#*=}" >&2; exit 1; }
    done
  done
  mkdir "$work/multiarch-pc"
  PKG_CONFIG_PATH="$mprefix/$multiarch/pkgconfig" \
    make -s -C "$work/multiarch-pc" -f "$standalone/Makefile" CFLAGS="-O2 -Wall -Wextra -Werror"
  run_standalone "$work/multiarch-pc/distributed_build" "$mprefix" shared
  mkdir "$work/multiarch-pc-static"
  PKG_CONFIG_PATH="$mprefix/$multiarch/pkgconfig" make -s -C "$work/multiarch-pc-static" \
    -f "$standalone/Makefile" CFLAGS="-O2 -Wall -Wextra -Werror" LANCE_C_PC=lance-c-static
  run_standalone "$work/multiarch-pc-static/distributed_build" "$mprefix" static
  cmake -S "$standalone" -B "$work/multiarch-cmake" -G Ninja -DCMAKE_PREFIX_PATH="$mprefix" \
    -DCMAKE_C_FLAGS=-Werror >/dev/null
  cmake --build "$work/multiarch-cmake" >/dev/null
  run_standalone "$work/multiarch-cmake/distributed_build" "$mprefix" shared
fi
echo "install check: $(basename "$package"): find_package and pkg-config consumers (shared and static), the tool," \
  "the licence files ($(wc -l <"$work/crates.listed") crates) and the stand-alone example (find_package and" \
  "pkg-config${multiarch:+; and from a $multiarch install}) passed"
