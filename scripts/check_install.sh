#!/usr/bin/env bash
# A user's view of the binary package: packages the build in $1 with
# scripts/package.sh (or takes $1 as a package already made, a .tar.xz with
# its .sha256 beside it), checks its checksum, unpacks it in a scratch
# directory, and builds and runs the consumer in $2 four ways: through
# find_package(lance-c) and through pkg-config, each shared and static, the
# pkg-config ones with README.md's commands.  Every program runs without
# LD_LIBRARY_PATH: on the RUNPATH CMake gives it, on -Wl,-rpath, or with no
# lance-c library to load.  Then the packaged lance-index runs on its RUNPATH,
# and the licence files are checked.
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
echo "install check: $(basename "$package"): find_package and pkg-config consumers (shared and static), the tool and the licence files passed"
