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
# defaults to BUILD_DIR's lib/, the library as it ships (recorded in its
# CMake cache).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:?usage: scripts/sanitize.sh BUILD_DIR [LIB_DIR] [ctest args...]}" && pwd)
shift
if [ $# -gt 0 ] && [ -d "$1" ]; then
  libdir=$1
  shift
else
  libdir=$(sed -n 's/^LANCE_C_SHIPPED_DIR:INTERNAL=//p' "$build/CMakeCache.txt")
fi
[ -f "$libdir/liblance_c.so" ] || { echo "sanitize: no liblance_c.so in $libdir (build the main tree first)" >&2; exit 1; }

flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
tree=$build/sanitize
cmake -S "$root" -B "$tree" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLANCE_C_PREBUILT_DIR="$libdir" \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" >/dev/null

# The library's tests, the tool's test (the tool is C), and the three fuzz
# targets.  Not: the install, export and static-link checks (nothing to
# sanitize: the last links its program itself, uninstrumented), the
# Python interop (an uninstrumented interpreter), the emulated old CPU
# (ASan's shadow memory under qemu), the process-kill test and the
# multi-process loop (SIGKILLed workers: a minute and more of run time
# for little instrumented code of their own), the object-store tests other
# than the three loops (restarts, kills, races, Ray and injected faults:
# seven minutes of servers and waiting, in which the instrumented programs,
# the tool and s3_dataset, make mostly the calls the loops and test_cli
# make), nor the sanitizer and valgrind entries themselves, nor the checks
# that read only the sources (formatting, the tool's command lists).
exclude='^(test_format|test_tool_commands(_drift)?|test_install|test_cpu_level_old_cpu|test_exports|test_link_static|test_interop_python|test_kills|test_distributed_loop|test_s3_(conditional_put|kill|race|restart|ray|uploads)|test_faults_.*|test_sanitizers|test_valgrind_.*)$'
cd "$tree"
cmake --build "$tree" >/dev/null  # everything: tests run other programs of the tree (the tool, the worker)

# LeakSanitizer runs at the exit of every test: a leak of the library's
# handles, strings or buffers fails it (the Rust library allocates through
# the same intercepted malloc).  No suppressions are needed: the Rust
# runtime's process-lifetime allocations stay reachable from its globals.
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:max_allocation_size_mb=8192"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
ctest --output-on-failure -j2 -E "$exclude" "$@"
