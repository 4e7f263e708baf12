# Sourced by the benchmark scripts (scale_bench.sh, scaling_bench.sh,
# faiss_bench.sh): wall time and peak memory of the commands they measure.
#   now                  the time, in seconds since the epoch (nanoseconds)
#   since T              seconds since T (a `now`), three decimals
#   timed CORES OUT CMD  CMD pinned to CORES (taskset), its stdout into OUT,
#                        its stderr into OUT.err (shown, and the bench
#                        stopped, when it fails), its peak RSS (KiB) into
#                        OUT.rss
#   rss OUT              that peak, in MiB
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }
timed() {
  local cores=$1 out=$2
  shift 2
  /usr/bin/time -f %M -o "$out.rss" taskset -c "$cores" "$@" >"$out" 2>"$out.err" ||
    { cat "$out.err" >&2; exit 1; }
}
rss() { awk '{ printf "%.0f", $1 / 1024 }' "$1.rss"; }
