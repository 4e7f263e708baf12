#!/usr/bin/env bash
# Installs the build in $1 to a scratch prefix, then builds and runs the
# consumer in $2 twice: through find_package(lance-c) and through pkg-config.
set -euo pipefail
build=$1
consumer=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
libdir=$(ls -d "$work/prefix"/lib*/ | head -1)

cmake -S "$consumer" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
LD_LIBRARY_PATH="$libdir" "$work/build/consumer"
"$work/build/consumer_static"

export PKG_CONFIG_PATH="$libdir/pkgconfig"
cc -std=c11 -o "$work/pc_consumer" "$consumer/consumer.c" $(pkg-config --cflags --libs lance-c)
LD_LIBRARY_PATH="$libdir" "$work/pc_consumer"
cc -std=c11 -o "$work/pc_consumer_static" "$consumer/consumer.c" \
  $(pkg-config --cflags lance-c) "$libdir/liblance_c.a" $(pkg-config --libs-only-l --static lance-c | sed 's/-llance_c//')
"$work/pc_consumer_static"
# The tool finds the installed library through its RUNPATH.
"$work/prefix/bin/lance-index" --version
loaded=$(ldd "$work/prefix/bin/lance-index" | awk '/liblance_c/ {print $3}')
[ "$(readlink -f "$loaded")" = "$(readlink -f "$libdir/liblance_c.so")" ] ||
  { echo "lance-index loads $loaded, not the installed library" >&2; exit 1; }
echo "install check: find_package and pkg-config consumers and the tool passed"
