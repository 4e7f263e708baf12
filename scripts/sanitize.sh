#!/usr/bin/env bash
# Runs the C and C++ tests compiled with AddressSanitizer and
# UndefinedBehaviorSanitizer, linked against the library the build in $1
# already holds (the Rust library is reused as built: it is not
# instrumented, so the sanitizers check the C/C++ side of every call and
# every heap block either side allocates, since ASan intercepts malloc).
#
#   scripts/sanitize.sh BUILD_DIR [LIB_DIR] [ctest args...]
#
# The second tree is BUILD_DIR/sanitize (incremental across runs).  LIB_DIR
# defaults to the library directory recorded in BUILD_DIR's CMake cache.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:?usage: scripts/sanitize.sh BUILD_DIR [LIB_DIR] [ctest args...]}" && pwd)
shift
if [ $# -gt 0 ] && [ -d "$1" ]; then
  libdir=$1
  shift
else
  cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
  libdir=$(cache_value LANCE_C_PREBUILT_DIR)
  if [ -z "$libdir" ]; then
    profile=$(cache_value LANCE_C_CARGO_PROFILE)
    [ "$profile" = dev ] && profile=debug
    libdir="$(cache_value LANCE_C_CARGO_TARGET_DIR)/$profile"
  fi
fi
[ -f "$libdir/liblance_c.so" ] || { echo "sanitize: no liblance_c.so in $libdir (build the main tree first)" >&2; exit 1; }

flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
tree=$build/sanitize
cmake -S "$root" -B "$tree" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLANCE_C_PREBUILT_DIR="$libdir" \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" >/dev/null
cmake --build "$tree" >/dev/null

# LeakSanitizer runs at exit of every test: a leak of the library's handles
# or buffers fails the test; tests/sanitizers/lsan.supp names the Rust
# runtime's deliberate process-lifetime allocations and why each is there.
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:max_allocation_size_mb=8192"
export LSAN_OPTIONS="suppressions=$root/tests/sanitizers/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

# The library's tests, the fuzz targets on the parsers, and the tool's
# test; not the install and export checks (nothing to sanitize), the Python
# interop (an uninstrumented interpreter), nor the failure suite's own
# entries (the commit fuzz target runs once, uninstrumented, in the main tree).
exclude='^(test_install|test_exports|test_interop_python|test_sanitizers|test_valgrind_.*|test_fuzz_commit|test_distributed_loop)$'
cd "$tree"
ctest --output-on-failure -E "$exclude" "$@"
