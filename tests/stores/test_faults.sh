#!/usr/bin/env bash
# Fault injection into the distributed index build (issue 27).
#
#   tests/stores/test_faults.sh CASE LANCE_INDEX S3_DATASET LOSSY_LINK
#
# CASE is one of
#   store    over s3:// (SeaweedFS on network-namespace hosts, lib.sh), the
#            store's S3 service taken away and brought back:
#            - mid-build: a worker host (w1, its uplink shaped to 2 Mbit/s
#              so that writing its segment takes seconds) builds a segment;
#              at a random point of its writing stage ("merge_partitions")
#              the S3 gateway is SIGKILLed, and restarted after a random
#              outage;
#            - mid-commit: the same at a random point of a commit on host
#              coord;
#   network  over s3://, the worker's network:
#            - link cut: at a random point of a build on w1 its link goes
#              down (`ip link set eth0 down` in its namespace, or its port
#              on the switch: the host then sends into the void and waits
#              for timeouts), and comes back after a random time;
#            - lossy link: host lw builds a segment and commits it over an
#              uplink that loses 5-20 % of its frames (drawn) and delays
#              the rest 200 ms (lossy_link, a TAP pair: the CI kernel has no
#              sch_netem, so `tc ... netem` cannot be used);
#            - dead store: a build on w1 with its switch port down for the
#              whole call ends with exit 12 within DEAD_STORE_BOUND (60 s)
#              with the storage options below (20-21 s measured);
#   local    a dataset on the local file system, in a mount namespace of
#            the test's own (tmpfs mounts that vanish with it):
#            - full TMPDIR: the build's shuffle spills to TMPDIR, a tmpfs
#              whose size is drawn below the spill's, so it runs out of
#              space at a random point of the shuffle;
#            - full dataset disk: the dataset on a tmpfs with a drawn part
#              of a segment's size left free, a build writing its segment
#              there; then a commit with a drawn few KB left;
#            - read-only dataset: the tmpfs remounted read-only at a random
#              point of a build (the first moment after it no file is open
#              for writing: remount refuses while one is), then a commit and
#              a cleanup on the read-only dataset;
#            - low fd limit: a build and a commit under `ulimit -n N`, N
#              drawn in [5, 32].
#
# Every fault is repeated LANCE_FAULT_REPEAT times (default: 4 for store
# and local, 3 link cuts and 2 lossy runs); the points are drawn stratified (repetition k of K in the k-th
# K-th of the stage) from a seeded generator: the seed is printed, and
# LANCE_FAULT_SEED=<seed> replays the same draws.  For every run:
#   - the call ends with exit 0 or the documented code (12, LANCE_ERR_IO,
#     for a storage or network fault; a read-only dataset's build, commit
#     and cleanup must fail with it), never 16 (INTERNAL), 19 (PANIC) or a
#     signal, and within CALL_BOUND seconds (`timeout`; a call past it is
#     a hang and fails the test);
#   - k-NN through the committed index (every partition probed) equals
#     brute force, after the faulted call and after the retry;
#   - after `lance-index cleanup --older-than 0 --delete-unverified`,
#     nothing is left of a failed build: every _indices/<uuid>/ in the
#     bucket (or the directory) belongs to a committed segment, and the
#     worker's TMPDIR holds no lance-c-process-* directory;
#   - a retry after the fault cleared (fresh UUID) builds and commits.
# The closing figures count faults injected (and how many landed while the
# call ran), outcomes by exit code, broken indexes, hangs, leftovers and
# failed retries; each must be 0.
#
# Storage options of every call (docs/object-storage.md explains them):
#   connect_timeout=1s, timeout=10s, client_max_retries=2,
#   client_retry_timeout=10, lance_aimd_max_retries=1.
#
# Needs root, iproute2 (tc), curl, util-linux (unshare, mount), SeaweedFS
# (scripts/setup.sh); fails, never skips, without.
set -euo pipefail
CASE=${1:?case: store, network or local}
TOOL=$(realpath "${2:?lance-index}")
DATA=$(realpath "${3:?s3_dataset}")
LOSSY=$(realpath "${4:?lossy_link}")
HERE=$(cd "$(dirname "$0")" && pwd)

# The local case runs in a mount namespace of its own: its tmpfs mounts are
# seen by no other process and end with it, whatever ends the test.
if [ "$CASE" = local ] && [ -z "${LANCE_FAULTS_UNSHARED:-}" ]; then
  [ "$(id -u)" -eq 0 ] || { echo "FAIL: the local faults mount tmpfs and need root" >&2; exit 1; }
  command -v unshare >/dev/null || { echo "FAIL: unshare (util-linux) is missing" >&2; exit 1; }
  LANCE_FAULTS_UNSHARED=1 exec unshare --mount --propagation private -- bash "$0" "$@"
fi
source "$HERE/lib.sh"

CALL_BOUND=90        # seconds a call may take, with the options below
DEAD_STORE_BOUND=60  # seconds a build may take to give up on a store it cannot reach
FAULT_OPTIONS="connect_timeout=1s,timeout=10s,client_max_retries=2,client_retry_timeout=10,lance_aimd_max_retries=1"

SEED=${LANCE_FAULT_SEED:-$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')}
RANDOM=$SEED
echo "seed $SEED (replay: LANCE_FAULT_SEED=$SEED ctest -R '^test_faults_$CASE\$')"

T_START=$(s3_now)

# ---- draws ----

# draw VAR K N LO HI: VAR = a point of [LO, HI) in the K-th (from 0) of N
# equal strata, from the seeded generator.  Never call it inside $(...): a
# subshell's draws do not advance this shell's sequence.
draw() {
  local a=$RANDOM b=$RANDOM
  printf -v "$1" '%s' "$(awk -v k="$2" -v n="$3" -v lo="$4" -v hi="$5" -v a="$a" -v b="$b" \
    'BEGIN { printf "%.3f", lo + (hi - lo) * (k + (a * 32768 + b) / 1073741824) / n }')"
}
# draw_int VAR K N LO HI: an integer of [LO, HI] in the K-th of N strata.
draw_int() {
  draw "$1" "$2" "$3" "$4" "$(($5 + 1))"
  printf -v "$1" '%d' "${!1%.*}"
}


# ---- figures ----

injected=0 landed=0 broken=0 hangs=0 crashes=0 leftovers=0 failed_retries=0 bad_codes=0 max_call=0
declare -A outcomes=()

# outcome WHAT RC SECONDS ALLOWED...: records a faulted call's end; a code
# outside ALLOWED, a signal or a hang counts (and fails the test).
outcome() {
  local what=$1 rc=$2 secs=$3
  shift 3
  outcomes[$rc]=$((${outcomes[$rc]:-0} + 1))
  max_call=$(awk -v a="$max_call" -v b="$secs" 'BEGIN { print (b > a) ? b : a }')
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    hangs=$((hangs + 1))
    check "$what: ended within $CALL_BOUND s (it hung and was killed)" false
    return
  fi
  local ok=false c how=""
  for c in "$@"; do [ "$rc" = "$c" ] && ok=true; done
  $ok || bad_codes=$((bad_codes + 1))
  if [ "$rc" -gt 128 ]; then
    crashes=$((crashes + 1))
    how=" (killed by SIG$(kill -l $((rc - 128)) 2>/dev/null || echo $((rc - 128))))"
  fi
  check "$what: exit $rc$how after $secs s is one of {$(tr ' ' , <<<"$*")}" $ok
}

figures() {
  local codes="" c
  for c in $(printf '%s\n' "${!outcomes[@]}" | sort -n); do codes+="${codes:+, }exit $c: ${outcomes[$c]}"; done
  echo "figures ($CASE, seed $SEED): faults injected $injected ($landed landed while the call ran);" \
    "outcomes ${codes:-none}; longest faulted call $max_call s (bound $CALL_BOUND s);" \
    "broken indexes $broken; hangs $hangs; killed by a signal $crashes; wrong codes $bad_codes (signals included);" \
    "leftovers after cleanup $leftovers;" \
    "failed retries $failed_retries"
  check "closing figures: 0 broken indexes" test "$broken" -eq 0
  check "closing figures: 0 hangs" test "$hangs" -eq 0
  check "closing figures: 0 calls killed by a signal" test "$crashes" -eq 0
  check "closing figures: every code as documented" test "$bad_codes" -eq 0
  check "closing figures: nothing left after cleanup" test "$leftovers" -eq 0
  check "closing figures: every retry succeeded" test "$failed_retries" -eq 0
}

finish() {
  figures
  echo "$CASE: $checks checks, $failures failed, $(s3_elapsed "$T_START") s in all"
  echo "$((checks - failures)) passed, $failures failed"
  [ "$failures" -eq 0 ]
}

# call_bg LOG [--fds N] CMD...: CMD in the background (CALL_PID), its stdout
# in LOG.out, its stderr in LOG, the moment it ended in LOG.end; with --fds,
# under `ulimit -n N`.  wait_call sets CALL_RC and CALL_SECS (how long the
# call ran, not how long the test waited for it).
CALL_PID= CALL_T0= CALL_RC= CALL_SECS= CALL_LOG=
# Closes every descriptor above stderr the shell inherited (a lock held by
# whoever runs ctest, a pipe of ctest's), so that a limit of N descriptors
# leaves the command N - 3 of its own, whatever its parents left open.
close_inherited_fds() {
  local fd
  for fd in /proc/$BASHPID/fd/*; do
    fd=${fd##*/}
    [ "$fd" -gt 2 ] && eval "exec $fd>&-"
  done
  return 0
}
call_bg() {
  local log=$1 lim=
  shift
  if [ "$1" = --fds ]; then
    lim=$2
    shift 2
  fi
  CALL_LOG=$log
  rm -f "$log.end"
  CALL_T0=$(s3_now)
  (
    rc=0
    ( [ -z "$lim" ] || { close_inherited_fds; ulimit -n "$lim"; }; "$@" ) >"$log.out" 2>"$log" || rc=$?
    s3_now >"$log.end"
    exit $rc
  ) &
  CALL_PID=$!
}
wait_call() {
  CALL_RC=0
  wait "$CALL_PID" || CALL_RC=$?
  local end
  end=$(cat "$CALL_LOG.end" 2>/dev/null || s3_now)
  CALL_SECS=$(awk -v a="$CALL_T0" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
  CALL_PID=
}
# wait_stage LOG STAGE: until the call logs STAGE's start (or ends).
wait_stage() {
  local i
  for i in $(seq 1 $((CALL_BOUND * 100))); do
    grep -q "^$2: started" "$1" 2>/dev/null && return 0
    kill -0 "$CALL_PID" 2>/dev/null || return 1
    sleep 0.01
  done
  return 1
}
# stage_secs LOG STAGE: the stage's duration from the tool's "STAGE: done in S s".
stage_secs() { sed -n "s/^$2: done in \([0-9.]*\) s.*/\1/p" "$1" | tail -n 1; }
# A landed fault: the call was still running when it was injected.
alive() { kill -0 "$CALL_PID" 2>/dev/null; }
# first_line FILE: the first 240 characters of a call's message.
first_line() { { grep -v ': started\|: done in\|^train\|segment built' "$1" 2>/dev/null | head -n 1 | cut -c1-240; } || true; }

# ---- the index and what is left: common to s3:// and local ----

# committed URI HOST: the UUIDs of the committed segments, one a line.
committed() { { on_host "$2" "$TOOL" list "$1" --json | grep -o '"uuid":"[^"]*"' | cut -d'"' -f4 | sort -u; } || true; }

# knn WHAT: k-NN through the index equals brute force (a broken index counts).
knn() {
  local out rc=0
  out=$(on_host "$CHECK_HOST" "$DATA" check "$URI" "$ROWS" "$DIM" "$SEED_DATA" "$PARTS" 2>&1) || rc=$?
  local ok=true
  if [ "$rc" -ne 0 ] || [ "$(json_field "$out" mismatches)" != 0 ]; then
    ok=false
    broken=$((broken + 1))
  fi
  check "$1: k-NN through the index equals brute force ($out)" $ok
}

# leftovers_check WHAT: after a cleanup, every index directory belongs to a
# committed segment and no host's TMPDIR holds a process directory.
leftovers_check() {
  local dirs uuids orphans tmp
  uuids=$(committed "$URI" "$CHECK_HOST")
  dirs=$(index_dirs | sort -u)
  orphans=$(comm -23 <(echo "$dirs") <(echo "$uuids") | grep . || true)
  tmp=$(tmp_leftovers)
  if [ -n "$orphans" ] || [ -n "$tmp" ]; then
    leftovers=$((leftovers + 1))
    check "$1: nothing left after cleanup (orphaned index directories: $(echo $orphans); temporary: $(echo $tmp))" false
  else
    check "$1: nothing left after cleanup ($(echo "$dirs" | grep -c .) index directories, all committed; no temporary directory)" true
  fi
}

# retried WHAT RC LOG: a retry once the fault cleared must succeed.
retried() {
  local ok=true
  if [ "$2" -ne 0 ]; then
    ok=false
    failed_retries=$((failed_retries + 1))
  fi
  check "$1 (exit $2$([ "$2" -eq 0 ] || echo ": $(first_line "$3")"))" $ok
}

cleanup_dataset() {
  local out rc=0
  out=$(on_host "$CHECK_HOST" "$TOOL" cleanup "$URI" --older-than 0 --delete-unverified 2>&1) || rc=$?
  [ "$rc" -eq 0 ] || check "cleanup after $1 succeeds (exit $rc: $out)" false
}

# ==== object storage ====

on_host() { on "$@"; }

s3_setup() { # HOSTS...
  S3_SPLIT_GATEWAY=1
  s3_hosts "$@"
  S3_OPTIONS+=",$FAULT_OPTIONS"
  s3_start
  s3_log "object store up in $S3_START_SECONDS s (gateway apart: s3_gateway_kill / s3_gateway_start)"
  ROWS=16000 DIM=32 FRAGS=16 PARTS=16 SEED_DATA=7
  URI="s3://$S3_BUCKET/faults/vectors.lance"
  PREFIX="faults/vectors.lance/"
  CHECK_HOST=client
  on coord "$DATA" write "$URI" "$ROWS" "$DIM" "$FRAGS" "$SEED_DATA" >/dev/null || s3_fail "writing $URI"
  local plan
  plan=$(on coord "$TOOL" plan "$URI" --groups 4) || s3_fail "planning"
  GROUPS_=()
  while read -r g; do GROUPS_+=("$g"); done < <(grep -o '"fragments": \[[^]]*\]' <<<"$plan" | sed 's/.*\[\(.*\)\]/\1/; s/ //g')
  on coord "$TOOL" train "$URI" --column vec --type IVF_FLAT --partitions "$PARTS" --quiet \
    -o "$(s3_dir coord)/model.bin" >/dev/null || s3_fail "training"
  local h
  for h in "${S3_HOSTS[@]}"; do
    case $h in store | coord) ;; *) cp "$(s3_dir coord)/model.bin" "$(s3_dir "$h")/model.bin" ;; esac
  done
  # The committed index the faults must never break: one segment per group.
  local segs=() g u
  for g in 0 1 2 3; do
    u=$(uuid)
    on coord "$TOOL" build "$URI" --column vec --model "$(s3_dir coord)/model.bin" --fragments "${GROUPS_[g]}" \
      --uuid "$u" --quiet -o "$(s3_dir coord)/base-$g.bin" || s3_fail "building group $g"
    segs+=("$(s3_dir coord)/base-$g.bin")
  done
  on coord "$TOOL" commit "$URI" --name vec_idx --column vec "${segs[@]}" >/dev/null || s3_fail "committing the base index"
  s3_log "dataset $ROWS x $DIM in $FRAGS fragments, 4 groups, index vec_idx of 4 segments committed"
  knn "the base index"
}

index_dirs() { s3_list "${PREFIX}_indices/" | sed -n "s|^${PREFIX}_indices/\([^/]*\)/.*|\1|p"; }
# store_settled: after a failed call, until the listing of _indices/ has
# not changed for 3 s (30 s at most).  A PUT whose client gave up after its
# body was sent is still carried out by the store: measured with seed 2000's
# first link cut, an index file landed 0.3-0.6 s after the build returned,
# in the same second as the cleanup that followed, which could not remove
# what it had not listed.  The documented cleanup runs once no write of the
# dataset can land (docs/engine-integration.md, "Failed builds").
store_settled() {
  local last now stable=0 i
  last=$(s3_list "${PREFIX}_indices/" | md5sum)
  for i in $(seq 1 60); do
    sleep 0.5
    now=$(s3_list "${PREFIX}_indices/" | md5sum)
    if [ "$now" = "$last" ]; then
      stable=$((stable + 1))
      [ "$stable" -lt 6 ] || return 0
    else
      s3_log "the store was still writing after the failed call: its listing changed $(awk -v i="$i" 'BEGIN { print i / 2 }') s after the call's checks began"
      stable=0 last=$now
    fi
  done
  s3_log "the store's listing kept changing for 30 s after the failed call"
}
tmp_leftovers() {
  local h
  for h in "${S3_HOSTS[@]}"; do
    [ "$h" = store ] && continue
    find "$(s3_dir "$h")/tmp" -mindepth 1 -maxdepth 1 -name 'lance-c-process-*' 2>/dev/null
  done
}

# build_bg HOST GROUP UUID OUT LOG [OPTS]: a build in the background (CALL_PID).
build_bg() {
  call_bg "$5" on "$1" timeout -k 5 "$CALL_BOUND" "$TOOL" build "$URI" --column vec \
    --model "$(s3_dir "$1")/model.bin" --fragments "${GROUPS_[$2]}" --uuid "$3" -o "$(s3_dir "$1")/$4"
}
commit_bg() { # HOST LOG JOB SEGMENT...
  local h=$1 log=$2 job=$3
  shift 3
  call_bg "$log" on "$h" timeout -k 5 "$CALL_BOUND" "$TOOL" commit "$URI" --name vec_idx --column vec --replace \
    --job-id "$job" "$@"
}

# after_build WHAT HOST GROUP FILE RC: the run's aftermath.  A segment that
# was built is committed; a failed one is cleaned up and built again (the
# retry, on HOST, fault cleared) and committed.  Then cleanup, k-NN, and
# nothing left.
after_build() {
  local what=$1 h=$2 g=$3 file=$4 rc=$5
  knn "$what, right after the fault"
  if [ "$rc" -ne 0 ]; then
    store_settled
    cleanup_dataset "$what"
    leftovers_check "$what, after the failed build"
    local u2 rrc=0
    u2=$(uuid)
    on "$h" timeout -k 5 "$CALL_BOUND" "$TOOL" build "$URI" --column vec --model "$(s3_dir "$h")/model.bin" \
      --fragments "${GROUPS_[g]}" --uuid "$u2" --quiet -o "$(s3_dir "$h")/$file" 2>"$S3_WORK/retry.log" || rrc=$?
    retried "$what: the build retried on $h with a fresh UUID succeeds" "$rrc" "$S3_WORK/retry.log"
    [ "$rrc" -eq 0 ] || return 0
  fi
  cp "$(s3_dir "$h")/$file" "$(s3_dir coord)/commit-$file"
  local crc=0
  on coord timeout -k 5 "$CALL_BOUND" "$TOOL" commit "$URI" --name vec_idx --column vec --replace \
    "$(s3_dir coord)/commit-$file" >/dev/null 2>"$S3_WORK/commit.log" || crc=$?
  retried "$what: the segment commits once the fault cleared" "$crc" "$S3_WORK/commit.log"
  knn "$what, after the commit"
  cleanup_dataset "$what"
  leftovers_check "$what"
}

# -- store stopped mid-build --
fault_store_build() { # K N
  local k=$1 n=$2 what="store stopped mid-build $(($1 + 1))/$2"
  local g=$((k % 4)) u log=$S3_WORK/fb.log point outage
  u=$(uuid)
  draw point "$k" "$n" 0 "$BUILD_WRITE_SECS"
  draw outage 0 1 0.5 5
  build_bg w1 "$g" "$u" fb.bin "$log"
  if ! wait_stage "$log" merge_partitions; then
    wait_call
    check "$what: the build reached its writing stage (exit $CALL_RC: $(first_line "$log"))" false
    return
  fi
  gateway_outage "$point" "$outage"
  s3_log "$what: gateway killed $point s into merge_partitions (of ~$BUILD_WRITE_SECS s), back after $outage s; exit $CALL_RC after $CALL_SECS s$([ $HIT = 1 ] || echo ' (the build had ended)'): $(first_line "$log")"
  outcome "$what" "$CALL_RC" "$CALL_SECS" 0 12
  after_build "$what" w1 "$g" fb.bin "$CALL_RC"
}

# gateway_outage POINT OUTAGE: POINT s from now kills the store's S3
# gateway, brings it back OUTAGE s later and waits for the running call;
# HIT=1 when the call was still running at the kill.
gateway_outage() {
  sleep "$1"
  HIT=0
  alive && HIT=1
  s3_gateway_kill
  injected=$((injected + 1)) landed=$((landed + HIT))
  sleep "$2"
  s3_gateway_start
  wait_call
}

# -- store stopped mid-commit --
fault_store_commit() { # K N
  local k=$1 n=$2 what="store stopped mid-commit $(($1 + 1))/$2"
  local g=$((k % 4)) u log=$S3_WORK/fc.log point outage job
  u=$(uuid)
  job=fc-$k
  on coord "$TOOL" build "$URI" --column vec --model "$(s3_dir coord)/model.bin" --fragments "${GROUPS_[g]}" \
    --uuid "$u" --quiet -o "$(s3_dir coord)/fc.bin" || s3_fail "$what: building the segment"
  # (70 % of a clean commit, whose length varies from run to run)
  draw point "$k" "$n" 0 "$(awk -v c="$COMMIT_SECS" 'BEGIN { print c * 0.7 }')"
  draw outage 0 1 0.5 5
  commit_bg coord "$log" "$job" "$(s3_dir coord)/fc.bin"
  gateway_outage "$point" "$outage"
  s3_log "$what: gateway killed $point s into the commit (of ~$COMMIT_SECS s), back after $outage s; exit $CALL_RC after $CALL_SECS s$([ $HIT = 1 ] || echo ' (the commit had ended)'): $(first_line "$log") $(cat "$log.out")"
  outcome "$what" "$CALL_RC" "$CALL_SECS" 0 12
  knn "$what, right after the fault"
  # The retry: the same set, the same job (answered as already committed
  # when the faulted commit had landed).
  local rrc=0 out
  out=$(on coord timeout -k 5 "$CALL_BOUND" "$TOOL" commit "$URI" --name vec_idx --column vec --replace --job-id "$job" \
    "$(s3_dir coord)/fc.bin" 2>"$S3_WORK/retry.log") || rrc=$?
  retried "$what: the commit retried with the same segment and job succeeds ($out)" "$rrc" "$S3_WORK/retry.log"
  local listed=false
  committed "$URI" client | grep -qx "$(dashed_uuid "$u")" && listed=true
  check "$what: the segment is in the committed index" $listed
  knn "$what, after the retry"
  cleanup_dataset "$what"
  leftovers_check "$what"
}

case_store() {
  s3_setup store coord w1 client
  s3_limit_uplink w1 2mbit
  # Calibration: a clean build on w1 (how long it writes) and a clean commit.
  local u log=$S3_WORK/cal.log t0
  u=$(uuid)
  build_bg w1 0 "$u" cal.bin "$log"
  wait_call
  [ "$CALL_RC" -eq 0 ] || s3_fail "the calibration build failed: $(first_line "$log")"
  BUILD_WRITE_SECS=$(stage_secs "$log" merge_partitions)
  t0=$(s3_now)
  cp "$(s3_dir w1)/cal.bin" "$(s3_dir coord)/cal.bin"
  on coord "$TOOL" commit "$URI" --name vec_idx --column vec --replace "$(s3_dir coord)/cal.bin" >/dev/null ||
    s3_fail "the calibration commit failed"
  COMMIT_SECS=$(s3_elapsed "$t0")
  s3_log "calibration: a build on w1 writes its segment for $BUILD_WRITE_SECS s (build $CALL_SECS s); a commit takes $COMMIT_SECS s"
  cleanup_dataset calibration
  local n=${LANCE_FAULT_REPEAT:-4} k
  for k in $(seq 0 $((n - 1))); do fault_store_build "$k" "$n"; done
  for k in $(seq 0 $((n - 1))); do fault_store_commit "$k" "$n"; done
}

# -- the worker's link cut mid-build --
LINK_SIDE=
# link_set host|switch up|down: w1's interface, or its port on the switch.
link_set() {
  if [ "$1" = host ]; then
    ip -n "$(s3_ns w1)" link set eth0 "$2"
  else
    local i
    for i in "${!S3_HOSTS[@]}"; do [ "${S3_HOSTS[i]}" = w1 ] && break; done
    ip -n "$(s3_ns switch)" link set "${S3_TAG}p$i" "$2"
  fi
}
fault_link_cut() { # K N
  local k=$1 n=$2 what="link cut mid-build $(($1 + 1))/$2"
  local g=$((k % 4)) u log=$S3_WORK/lc.log point outage side
  u=$(uuid)
  draw point "$k" "$n" 0 "$BUILD_SECS"
  draw outage 0 1 1 8
  draw_int side 0 1 0 1
  side=$([ "$side" = 0 ] && echo host || echo switch)
  build_bg w1 "$g" "$u" lc.bin "$log"
  sleep "$point"
  local hit=0
  alive && hit=1
  link_set "$side" down
  injected=$((injected + 1)) landed=$((landed + hit))
  sleep "$outage"
  link_set "$side" up
  wait_call
  s3_log "$what: w1's link cut ($side side) $point s into the build (of ~$BUILD_SECS s), back after $outage s; exit $CALL_RC after $CALL_SECS s$([ $hit = 1 ] || echo ' (the build had ended)'): $(first_line "$log")"
  outcome "$what" "$CALL_RC" "$CALL_SECS" 0 12
  after_build "$what" w1 "$g" lc.bin "$CALL_RC"
}

# -- a lossy, slow uplink during build and commit --
LOSSY_PID=
lossy_up() { # LOSS DELAY_MS SEED: host lw's link through lossy_link
  local ns sw
  ns=$(s3_ns lw)
  sw=$(s3_ns switch)
  ip -n "$ns" link del eth0 2>/dev/null || true
  "$LOSSY" "$ns" "$sw" "${S3_TAG}L" "$1" "$2" "$3" >"$S3_WORK/lossy.out" 2>"$S3_WORK/lossy.err" &
  LOSSY_PID=$!
  local i
  for i in $(seq 1 500); do
    grep -q ready "$S3_WORK/lossy.out" 2>/dev/null && break
    kill -0 "$LOSSY_PID" 2>/dev/null || s3_fail "lossy_link failed: $(cat "$S3_WORK/lossy.err")"
    sleep 0.01
  done
  grep -q ready "$S3_WORK/lossy.out" || s3_fail "lossy_link did not set up the link"
  ip -n "$ns" addr add "$(s3_ip lw)/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$sw" link set "${S3_TAG}L" master br0 up
}
lossy_down() {
  [ -n "$LOSSY_PID" ] || return 0
  kill -TERM "$LOSSY_PID" 2>/dev/null || true
  wait "$LOSSY_PID" 2>/dev/null || true
  LOSSY_PID=
}
fault_lossy() { # K N
  local k=$1 n=$2 what="lossy link $(($1 + 1))/$2"
  local g=$((k % 4)) u log=$S3_WORK/ll.log loss lseed
  u=$(uuid)
  draw loss "$k" "$n" 5 20
  lseed=$RANDOM
  lossy_up "$loss" 200 "$lseed"
  build_bg lw "$g" "$u" ll.bin "$log"
  injected=$((injected + 1)) landed=$((landed + 1))
  wait_call
  local brc=$CALL_RC bsecs=$CALL_SECS crc=1 csecs=0
  s3_log "$what: lw's uplink loses $loss % (seed $lseed), delays 200 ms; build exit $brc after $bsecs s: $(first_line "$log")"
  outcome "$what, build" "$brc" "$bsecs" 0 12
  if [ "$brc" -eq 0 ]; then
    commit_bg lw "$log.c" "ll-$k" "$(s3_dir lw)/ll.bin"
    injected=$((injected + 1)) landed=$((landed + 1))
    wait_call
    crc=$CALL_RC csecs=$CALL_SECS
    s3_log "$what: commit from lw exit $crc after $csecs s: $(first_line "$log.c") $(cat "$log.c.out")"
    outcome "$what, commit" "$crc" "$csecs" 0 12
  fi
  lossy_down
  s3_log "$what: the link carried $(tail -n 1 "$S3_WORK/lossy.out")"
  # The fault cleared: the same link without loss or delay.
  lossy_up 0 0 0
  if [ "$brc" -eq 0 ] && [ "$crc" -eq 0 ]; then
    knn "$what, after the commit"
    cleanup_dataset "$what"
    leftovers_check "$what"
  elif [ "$brc" -eq 0 ]; then
    # Built, the commit failed: the retried commit of the same segment.
    knn "$what, right after the failed commit"
    local rrc=0
    on lw timeout -k 5 "$CALL_BOUND" "$TOOL" commit "$URI" --name vec_idx --column vec --replace --job-id "ll-$k" \
      "$(s3_dir lw)/ll.bin" >/dev/null 2>"$S3_WORK/retry.log" || rrc=$?
    retried "$what: the commit retried over a clean link succeeds" "$rrc" "$S3_WORK/retry.log"
    knn "$what, after the retry"
    cleanup_dataset "$what"
    leftovers_check "$what"
  else
    after_build "$what" lw "$g" ll.bin "$brc"
  fi
  lossy_down
}

# -- a dead store: the bound the options give --
fault_dead_store() {
  local what="build with w1's switch port down for the whole call" u log=$S3_WORK/ds.log
  u=$(uuid)
  link_set switch down
  build_bg w1 0 "$u" ds.bin "$log"
  injected=$((injected + 1)) landed=$((landed + 1))
  wait_call
  link_set switch up
  s3_log "$what: exit $CALL_RC after $CALL_SECS s: $(first_line "$log")"
  outcome "$what" "$CALL_RC" "$CALL_SECS" 12
  check "$what: gave up within $DEAD_STORE_BOUND s (after $CALL_SECS s)" \
    awk -v s="$CALL_SECS" -v b="$DEAD_STORE_BOUND" 'BEGIN { exit !(s <= b) }'
  knn "$what"
  cleanup_dataset "$what"
  leftovers_check "$what"
}

case_network() {
  s3_setup store coord w1 lw client
  s3_limit_uplink w1 2mbit
  local u log=$S3_WORK/cal.log
  u=$(uuid)
  build_bg w1 0 "$u" cal.bin "$log"
  wait_call
  [ "$CALL_RC" -eq 0 ] || s3_fail "the calibration build failed: $(first_line "$log")"
  BUILD_SECS=$CALL_SECS
  s3_log "calibration: a build on w1 takes $BUILD_SECS s"
  cleanup_dataset calibration
  local n=${LANCE_FAULT_REPEAT:-3} k
  for k in $(seq 0 $((n - 1))); do fault_link_cut "$k" "$n"; done
  local nl=${LANCE_FAULT_REPEAT:-2}
  for k in $(seq 0 $((nl - 1))); do fault_lossy "$k" "$nl"; done
  fault_dead_store
}

# ==== the local file system ====

MOUNTS=()
local_cleanup() {
  local rc=$? m
  set +e
  for m in "${MOUNTS[@]}"; do umount -l "$m" 2>/dev/null; done
  (exit $rc)
  s3_cleanup
}

local_setup() {
  trap local_cleanup EXIT
  # What the shared checks use, here on the local file system.
  on_host() { shift; "$@"; }
  index_dirs() { find "$URI/_indices" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' 2>/dev/null || true; }
  tmp_leftovers() { find "$TMP" -mindepth 1 -maxdepth 1 2>/dev/null || true; }
  # Nothing mounted here propagates out of this namespace.
  mount --make-rprivate / || s3_fail "cannot make the mounts private"
  ROWS=64000 DIM=64 FRAGS=16 PARTS=16 SEED_DATA=7
  DS=$S3_WORK/ds
  TMP=$S3_WORK/tmp
  mkdir -p "$DS" "$TMP"
  mount -t tmpfs -o size=256m,mode=0755 lance-faults-ds "$DS" || s3_fail "cannot mount a tmpfs"
  MOUNTS+=("$DS")
  mount -t tmpfs -o size=256m,mode=1777 lance-faults-tmp "$TMP" || s3_fail "cannot mount a tmpfs"
  MOUNTS+=("$TMP")
  URI=$DS/vectors.lance
  CHECK_HOST=local
  export TMPDIR=$TMP
  "$DATA" write "$URI" "$ROWS" "$DIM" "$FRAGS" "$SEED_DATA" >/dev/null || s3_fail "writing $URI"
  local plan
  plan=$("$TOOL" plan "$URI" --groups 4) || s3_fail "planning"
  GROUPS_=()
  while read -r g; do GROUPS_+=("$g"); done < <(grep -o '"fragments": \[[^]]*\]' <<<"$plan" | sed 's/.*\[\(.*\)\]/\1/; s/ //g')
  MODEL=$S3_WORK/model.bin
  "$TOOL" train "$URI" --column vec --type IVF_FLAT --partitions "$PARTS" --quiet -o "$MODEL" >/dev/null ||
    s3_fail "training"
  local segs=() g
  for g in 0 1 2 3; do
    "$TOOL" build "$URI" --column vec --model "$MODEL" --fragments "${GROUPS_[g]}" --uuid "$(uuid)" --quiet \
      -o "$S3_WORK/base-$g.bin" || s3_fail "building group $g"
    segs+=("$S3_WORK/base-$g.bin")
  done
  "$TOOL" commit "$URI" --name vec_idx --column vec "${segs[@]}" >/dev/null || s3_fail "committing the base index"
  # A segment's size on disk: the largest index directory.
  SEG_KB=$(du -sk "$URI"/_indices/* | sort -n | tail -n 1 | cut -f1)
  s3_log "dataset $ROWS x $DIM in $FRAGS fragments on a tmpfs, index vec_idx of 4 segments (~$SEG_KB KB each) committed"
  knn "the base index"
}


lbuild_bg() { # GROUP UUID OUT LOG [FD_LIMIT]
  call_bg "$4" ${5:+--fds "$5"} timeout -k 5 "$CALL_BOUND" "$TOOL" build "$URI" --column vec --model "$MODEL" \
    --fragments "${GROUPS_[$1]}" --uuid "$2" -o "$S3_WORK/$3"
}
lcommit() { # LOG FD_LIMIT|"" SEGMENT...: in the foreground; sets CALL_RC, CALL_SECS
  local log=$1 lim=$2
  shift 2
  call_bg "$log" ${lim:+--fds "$lim"} timeout -k 5 "$CALL_BOUND" "$TOOL" commit "$URI" --name vec_idx --column vec \
    --replace "$@"
  wait_call
}
free_kb() { df -k --output=avail "$DS" | tail -n 1 | tr -d ' '; }
used_kb() { df -k --output=used "$DS" | tail -n 1 | tr -d ' '; }
ds_size() { mount -o "remount,size=$1" "$DS" || s3_fail "cannot resize the dataset's tmpfs to $1"; }

# lafter WHAT GROUP FILE RC: as after_build, locally.
lafter() {
  local what=$1 g=$2 file=$3 rc=$4
  knn "$what, right after the fault"
  if [ "$rc" -ne 0 ]; then
    cleanup_dataset "$what"
    leftovers_check "$what, after the failed build"
    local rrc=0
    "$TOOL" build "$URI" --column vec --model "$MODEL" --fragments "${GROUPS_[g]}" --uuid "$(uuid)" --quiet \
      -o "$S3_WORK/$file" 2>"$S3_WORK/retry.log" || rrc=$?
    retried "$what: the build retried with a fresh UUID succeeds" "$rrc" "$S3_WORK/retry.log"
    [ "$rrc" -eq 0 ] || return 0
  fi
  lcommit "$S3_WORK/lcommit.log" "" "$S3_WORK/$file"
  retried "$what: the segment commits once the fault cleared" "$CALL_RC" "$S3_WORK/lcommit.log"
  knn "$what, after the commit"
  cleanup_dataset "$what"
  leftovers_check "$what"
}

# -- a full TMPDIR under the shuffle --
fault_full_tmp() { # K N
  local k=$1 n=$2 what="full TMPDIR $(($1 + 1))/$2"
  local g=$((k % 4)) spill_kb size_kb log=$S3_WORK/ft.log
  spill_kb=$((ROWS / 4 * (DIM * 4 + 8) / 1024))   # a group's vectors and row ids
  draw_int size_kb "$k" "$n" 64 "$spill_kb"
  mount -o "remount,size=${size_kb}k" "$TMP" || s3_fail "cannot resize TMPDIR's tmpfs"
  lbuild_bg "$g" "$(uuid)" ft.bin "$log"
  injected=$((injected + 1)) landed=$((landed + 1))
  wait_call
  s3_log "$what: TMPDIR holds $size_kb KB of a ~$spill_kb KB spill; exit $CALL_RC after $CALL_SECS s: $(first_line "$log")"
  outcome "$what" "$CALL_RC" "$CALL_SECS" 0 12
  check "$what: TMPDIR is empty once the build ended ($(echo $(tmp_leftovers)))" test -z "$(tmp_leftovers)"
  mount -o remount,size=256m "$TMP"
  lafter "$what" "$g" ft.bin "$CALL_RC"
}

# -- a full disk under the dataset --
fault_full_ds() { # K N
  local k=$1 n=$2 what="full dataset disk $(($1 + 1))/$2"
  local g=$((k % 4)) free log=$S3_WORK/fd.log
  draw_int free "$k" "$n" 0 "$SEG_KB"
  ds_size "$(($(used_kb) + free))k"
  lbuild_bg "$g" "$(uuid)" fd.bin "$log"
  injected=$((injected + 1)) landed=$((landed + 1))
  wait_call
  s3_log "$what: $free KB free for a ~$SEG_KB KB segment; exit $CALL_RC after $CALL_SECS s: $(first_line "$log")"
  outcome "$what" "$CALL_RC" "$CALL_SECS" 0 12
  ds_size 256m
  lafter "$what" "$g" fd.bin "$CALL_RC"
  # A commit with a few KB left: the transaction file and manifest.
  local few seg=$S3_WORK/fd2.bin
  "$TOOL" build "$URI" --column vec --model "$MODEL" --fragments "${GROUPS_[g]}" --uuid "$(uuid)" --quiet -o "$seg" ||
    s3_fail "$what: building the segment to commit"
  draw_int few 0 1 0 16
  ds_size "$(($(used_kb) + few))k"
  lcommit "$S3_WORK/fdc.log" "" "$seg"
  injected=$((injected + 1)) landed=$((landed + 1))
  s3_log "$what: a commit with $few KB free: exit $CALL_RC after $CALL_SECS s: $(first_line "$S3_WORK/fdc.log") $(cat "$S3_WORK/fdc.log.out")"
  outcome "$what, commit" "$CALL_RC" "$CALL_SECS" 0 12
  ds_size 256m
  knn "$what, after the commit on a full disk"
  if [ "$CALL_RC" -ne 0 ]; then
    lcommit "$S3_WORK/fdc.log" "" "$seg"
    retried "$what: the commit retried with space succeeds" "$CALL_RC" "$S3_WORK/fdc.log"
    knn "$what, after the retried commit"
  fi
  cleanup_dataset "$what"
  leftovers_check "$what, commit"
}

# -- a read-only dataset --
fault_read_only() { # K N
  local k=$1 n=$2 what="read-only dataset $(($1 + 1))/$2"
  local g=$((k % 4)) log=$S3_WORK/ro.log point
  draw point "$k" "$n" 0 "$LBUILD_SECS"
  # Before: a commit, so that there is an old version for the cleanup to
  # remove, and a segment for the commit on the read-only dataset.
  "$TOOL" build "$URI" --column vec --model "$MODEL" --fragments "${GROUPS_[g]}" --uuid "$(uuid)" --quiet \
    -o "$S3_WORK/ro-a.bin" || s3_fail "$what: building a segment"
  lcommit "$S3_WORK/ro-a.log" "" "$S3_WORK/ro-a.bin"
  [ "$CALL_RC" -eq 0 ] || s3_fail "$what: committing a segment: $(first_line "$S3_WORK/ro-a.log")"
  "$TOOL" build "$URI" --column vec --model "$MODEL" --fragments "${GROUPS_[g]}" --uuid "$(uuid)" --quiet \
    -o "$S3_WORK/ro-b.bin" || s3_fail "$what: building a segment"
  lbuild_bg "$g" "$(uuid)" ro.bin "$log"
  sleep "$point"
  # Read-only from the first moment no file of the dataset is open for
  # writing (the kernel refuses the remount while one is).
  local hit=0 ro=0
  while :; do
    if alive; then hit=1; else hit=0; fi
    mount -o remount,ro "$DS" 2>/dev/null && { ro=1; break; }
    [ "$hit" = 1 ] || break
    sleep 0.005
  done
  [ "$ro" = 1 ] || mount -o remount,ro "$DS" || s3_fail "cannot remount the dataset read-only"
  injected=$((injected + 1)) landed=$((landed + hit))
  wait_call
  local brc=$CALL_RC
  s3_log "$what: read-only from $point s into the build (of ~$LBUILD_SECS s)$([ $hit = 1 ] || echo ' (the build had ended)'); exit $brc after $CALL_SECS s: $(first_line "$log")"
  outcome "$what, build" "$brc" "$CALL_SECS" 0 12
  knn "$what, read-only"
  # A commit and a cleanup on the read-only dataset: both must fail.
  lcommit "$S3_WORK/roc.log" "" "$S3_WORK/ro-b.bin"
  injected=$((injected + 1)) landed=$((landed + 1))
  s3_log "$what: a commit on the read-only dataset: exit $CALL_RC: $(first_line "$S3_WORK/roc.log") $(cat "$S3_WORK/roc.log.out")"
  outcome "$what, commit" "$CALL_RC" "$CALL_SECS" 12
  local out rc=0 t0
  t0=$(s3_now)
  out=$(timeout -k 5 "$CALL_BOUND" "$TOOL" cleanup "$URI" --older-than 0 --delete-unverified 2>&1) || rc=$?
  injected=$((injected + 1)) landed=$((landed + 1))
  s3_log "$what: a cleanup on the read-only dataset (an old version to remove): exit $rc: $out"
  outcome "$what, cleanup" "$rc" "$(s3_elapsed "$t0")" 12
  knn "$what, read-only, after the commit and the cleanup"
  mount -o remount,rw "$DS" || s3_fail "cannot remount the dataset read-write"
  lafter "$what" "$g" ro.bin "$brc"
}

# -- a low file-descriptor limit --
fault_fds() { # K N
  local k=$1 n=$2 what="fd limit $(($1 + 1))/$2"
  local g=$((k % 4)) lim log=$S3_WORK/fl.log
  draw_int lim "$k" "$n" 5 32
  lbuild_bg "$g" "$(uuid)" fl.bin "$log" "$lim"
  injected=$((injected + 1)) landed=$((landed + 1))
  wait_call
  s3_log "$what: build under ulimit -n $lim: exit $CALL_RC after $CALL_SECS s: $(first_line "$log")"
  outcome "$what, build (ulimit -n $lim)" "$CALL_RC" "$CALL_SECS" 0 12
  check "$what: TMPDIR is empty once the build ended ($(echo $(tmp_leftovers)))" test -z "$(tmp_leftovers)"
  local brc=$CALL_RC
  # A commit under the same limit (of a segment built without it).
  local seg=$S3_WORK/fl2.bin
  "$TOOL" build "$URI" --column vec --model "$MODEL" --fragments "${GROUPS_[g]}" --uuid "$(uuid)" --quiet -o "$seg" ||
    s3_fail "$what: building the segment to commit"
  lcommit "$S3_WORK/flc.log" "$lim" "$seg"
  injected=$((injected + 1)) landed=$((landed + 1))
  s3_log "$what: commit under ulimit -n $lim: exit $CALL_RC after $CALL_SECS s: $(first_line "$S3_WORK/flc.log") $(cat "$S3_WORK/flc.log.out")"
  outcome "$what, commit (ulimit -n $lim)" "$CALL_RC" "$CALL_SECS" 0 12
  knn "$what, after the commit under the limit"
  if [ "$CALL_RC" -ne 0 ]; then
    lcommit "$S3_WORK/flc.log" "" "$seg"
    retried "$what: the commit retried without the limit succeeds" "$CALL_RC" "$S3_WORK/flc.log"
  fi
  lafter "$what" "$g" fl.bin "$brc"
}

case_local() {
  local_setup
  local log=$S3_WORK/cal.log
  lbuild_bg 0 "$(uuid)" cal.bin "$log"
  wait_call
  [ "$CALL_RC" -eq 0 ] || s3_fail "the calibration build failed: $(first_line "$log")"
  LBUILD_SECS=$CALL_SECS
  s3_log "calibration: a build of one group takes $LBUILD_SECS s"
  local n=${LANCE_FAULT_REPEAT:-4} k
  for k in $(seq 0 $((n - 1))); do fault_full_tmp "$k" "$n"; done
  for k in $(seq 0 $((n - 1))); do fault_full_ds "$k" "$n"; done
  for k in $(seq 0 $((n - 1))); do fault_read_only "$k" "$n"; done
  for k in $(seq 0 $((n - 1))); do fault_fds "$k" "$n"; done
}

case "$CASE" in
  store | network | local) "case_$CASE" ;;
  *) s3_fail "unknown case $CASE" ;;
esac
finish
