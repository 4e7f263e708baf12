#!/usr/bin/env bash
# Makes the binary package of lance-c from the CMake install:
#   dist/lance-c-<version>-<target>[-<cpu>].tar.xz (+ .sha256)
#     lance-c-<...>/include/lance/            lance.h, lance.hpp
#     lance-c-<...>/lib/liblance_c.so.<version> and the links liblance_c.so.<soname
#                                             suffix>, liblance_c.so (stripped)
#     lance-c-<...>/lib/liblance_c.a          only the API global (hide_symbols.sh),
#                                             debug info stripped
#     lance-c-<...>/lib/cmake/lance-c/, lib/pkgconfig/lance-c.pc (shared) and
#                                             lance-c-static.pc, bin/lance-index
#     lance-c-<...>/share/doc/lance-c/        LICENSE, NOTICE, THIRD-PARTY-LICENSES.md,
#                                             licenses/<crate>-<version>/ (each linked
#                                             crate's licence files: licenses.sh --texts)
#   dist/lance-c-<...>-debug.tar.xz (+ .sha256)
#     lance-c-<...>/lib/liblance_c.so.<version>.debug, the shared library's
#     debug info (gdb finds it next to the library, unpacked over the package)
# <target> is the Rust target (x86_64-unknown-linux-gnu); <cpu> the CPU level
# the library needs when it is not the target's baseline (x86-64-v3).
#
#   scripts/package.sh [--build-dir DIR] [--out DIR] [CMAKE_ARGS...]
# Without --build-dir: configures and builds $root/build-package, the release
# build (cargo profile release) without tests (CMAKE_ARGS go to that configure, e.g.
# -DLANCE_C_TARGET_CPU=x86-64 for a package that runs on every x86-64 CPU).
# With --build-dir: packages that tree as it was built (tests/install does).
# xz honours XZ_OPT (e.g. XZ_OPT=-0 for a quick package).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=""
out=$root/dist
while [ $# -gt 0 ]; do
  case $1 in
    --build-dir) build=$(cd "$2" && pwd); shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) break ;;
  esac
done
for tool in cmake objcopy strip readelf tar xz sha256sum $([ -n "$build" ] || echo ninja); do
  command -v "$tool" >/dev/null || { echo "package: $tool is missing (scripts/setup.sh installs what is needed)" >&2; exit 1; }
done
started=$(date +%s)
if [ -z "$build" ]; then
  build=${LANCE_C_PACKAGE_BUILD_DIR:-$root/build-package}
  export PATH="$HOME/.cargo/bin:$PATH"
  # The C flags of the tested build (scripts/configure.sh); install --strip
  # drops the tool's debug info.
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLANCE_C_CARGO_PROFILE=release \
    -DLANCE_C_BUILD_TESTS=OFF "$@" >/dev/null
  cmake --build "$build"
  echo "package: built in $(($(date +%s) - started)) s"
fi

cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
packaging=$(date +%s)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cmake --install "$build" --prefix "$stage/install" --strip >/dev/null
version=$(sed -n 's/^Version: //p' "$stage/install/lib/pkgconfig/lance-c.pc")
target=$(rustc -vV 2>/dev/null | sed -n 's/^host: //p')
target=${target:-$(uname -m)-unknown-linux-gnu}
cpu=$(cache LANCE_C_TARGET_CPU)
name=lance-c-$version-$target
case $cpu in "" | x86-64) ;; *) name=$name-$cpu ;; esac
mv "$stage/install" "$stage/$name"
mkdir -p "$stage/debug/$name/lib"
# Each linked crate's licence files, from the cargo registry (cargo metadata,
# offline: no build); it fails when the package's inventory does not list
# the same crates, or when a crate has no licence file.
doc=$stage/$name/share/doc/lance-c
"$root/scripts/licenses.sh" --texts "$doc/licenses" --output "$doc/THIRD-PARTY-LICENSES.md"

lib=$stage/$name/lib
so=liblance_c.so.$version
unstripped_size=$(stat -c %s "$lib/$so")
objcopy --only-keep-debug "$lib/$so" "$stage/debug/$name/lib/$so.debug"
strip --strip-unneeded "$lib/$so"
objcopy --add-gnu-debuglink="$stage/debug/$name/lib/$so.debug" "$lib/$so"
strip --strip-debug "$lib/liblance_c.a"
stripped=$(date +%s)

# The package is whole: the library answers to the SONAME a link records,
# both links resolve to it, and it exports the header's functions only; the
# licence files are there (scripts/check_install.sh compares the crates'
# folders with the inventory).
soname=$(readelf -d "$lib/$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p')
if [ "$(readlink -f "$lib/$soname")" != "$lib/$so" ] || [ "$(readlink -f "$lib/liblance_c.so")" != "$lib/$so" ]; then
  echo "package: lib/$soname or lib/liblance_c.so does not lead to lib/$so" >&2
  exit 1
fi
for file in LICENSE NOTICE THIRD-PARTY-LICENSES.md licenses/README.txt; do
  [ -s "$stage/$name/share/doc/lance-c/$file" ] ||
    { echo "package: the install holds no share/doc/lance-c/$file" >&2; exit 1; }
done
"$root/scripts/check_exports.sh" "$stage/$name/include/lance/lance.h" "$lib/$so" "$soname"

mkdir -p "$out"
out=$(cd "$out" && pwd)
tar_flags=(--sort=name --owner=0 --group=0 --numeric-owner)
[ -z "${SOURCE_DATE_EPOCH:-}" ] || tar_flags+=(--mtime="@$SOURCE_DATE_EPOCH" --clamp-mtime)
tar "${tar_flags[@]}" -C "$stage" -cf - "$name" | xz -T0 >"$out/$name.tar.xz"
tar "${tar_flags[@]}" -C "$stage/debug" -cf - "$name" | xz -T0 >"$out/$name-debug.tar.xz"
(cd "$out" && sha256sum "$name.tar.xz" >"$name.tar.xz.sha256" &&
  sha256sum "$name-debug.tar.xz" >"$name-debug.tar.xz.sha256")
finished=$(date +%s)

mib() { awk -v b="$1" 'BEGIN {printf "%.1f MiB", b / 1048576}'; }
echo "package: $out/$name.tar.xz ($(mib "$(stat -c %s "$out/$name.tar.xz")"))"
echo "  lib/$so: $(mib "$(stat -c %s "$lib/$so")") stripped ($(mib "$unstripped_size") before)"
echo "  lib/liblance_c.a: $(mib "$(stat -c %s "$lib/liblance_c.a")")"
echo "  bin/lance-index: $(mib "$(stat -c %s "$stage/$name/bin/lance-index")")"
echo "  debug info: $out/$name-debug.tar.xz ($(mib "$(stat -c %s "$out/$name-debug.tar.xz")"))"
echo "package: install and strip $((stripped - packaging)) s, compress $((finished - stripped)) s"
