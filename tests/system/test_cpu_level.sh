#!/bin/sh
# The library on emulated CPUs (lance.h "CPU"), with qemu-user:
#
#   test_cpu_level.sh QEMU LEVEL PROGRAM STATIC_PROGRAM
#
# LEVEL is the level the library was compiled for (LANCE_C_TARGET_CPU;
# empty or x86-64 = the baseline).  PROGRAM (test_cpu_level, linked to the
# shared library) and STATIC_PROGRAM (linked to the static one) run on a
# Nehalem (SSE4.2, no AVX).  For an x86-64-v3 library each must stop at
# load with the message naming the missing features and the build option,
# SIGABRT and main never reached; PROGRAM must then pass on an emulated
# Haswell (which has x86-64-v3).  A baseline library must pass on Nehalem.
qemu=$1 level=$2 prog=$3 static_prog=$4
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
failed=0 checks=0
check() { # description, then a command that must succeed
  checks=$((checks + 1))
  what=$1
  shift
  if "$@"; then echo "ok   $what"; else echo "FAIL $what"; failed=$((failed + 1)); fi
}
run() { # cpu program
  "$qemu" -cpu "$1" "$2" >"$out" 2>"$err"
  rc=$?
}
passed() { [ "$rc" -eq 0 ] && grep -q "checks, 0 failed" "$out"; }
refused() {
  [ "$rc" -eq 134 ] &&
    grep -q "^lance-c: this lance-c library was compiled for CPU features this CPU lacks (.*avx2.*); rebuild it with -DLANCE_C_TARGET_CPU=x86-64 to run here$" "$err" &&
    ! grep -q "Illegal instruction" "$err" && ! [ -s "$out" ]
}
case $level in
  x86-64-v3)
    run Nehalem "$prog"
    check "shared library on Nehalem: stopped at load, naming avx2 and the option (exit $rc)" refused
    run Nehalem "$static_prog"
    check "static library on Nehalem: stopped at load, naming avx2 and the option (exit $rc)" refused
    run Haswell "$prog"
    check "shared library on Haswell: write, count, exact k-NN (exit $rc)" passed
    ;;
  "" | x86-64)
    run Nehalem "$prog"
    check "baseline library on Nehalem: write, count, exact k-NN (exit $rc)" passed
    ;;
  *) echo "test_cpu_level.sh: no expectation for level '$level'" >&2; exit 2 ;;
esac
[ "$failed" -eq 0 ] || { echo "--- stdout"; cat "$out"; echo "--- stderr"; grep -v "TCG doesn't support" "$err"; }
echo "test_cpu_level_old_cpu: $checks checks, $failed failed"
[ "$failed" -eq 0 ]
