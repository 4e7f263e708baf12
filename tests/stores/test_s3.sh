#!/usr/bin/env bash
# The distributed index build on object storage, across hosts (issue 16).
#
#   tests/stores/test_s3.sh CASE LANCE_INDEX S3_DATASET
#
# CASE is one of
#   conditional_put  the object store honours PUT with If-None-Match: *, the
#                    conditional write Lance's commit on s3:// relies on
#                    (object_store's PutMode::Create): a second PUT of a key
#                    gets 412 and leaves the object as it was; two hosts
#                    racing on one key, 20 times: exactly one wins
#   loop             write, plan and train on host coord; 4 workers on hosts
#                    w1 and w2 build segments (separate processes); commit on
#                    coord; k-NN from host client equals brute force
#                    (IVF_FLAT, every partition probed)
#   kill             host w1 (slow uplink, two tasks in turn) SIGKILLed
#                    after its first task's files reached the bucket, while
#                    its second writes its partitions: the dataset is
#                    readable at its version, the retry with fresh UUIDs
#                    commits, cleanup removes the orphaned objects (the
#                    bucket listed before and after); then a build there
#                    cancelled (SIGTERM) while writing exits 20 and leaves
#                    nothing of its UUID; one cancelled in its shuffle
#                    stops at once and writes nothing, then or later;
#                    one cancelled mid-writing stops at once and leaves no
#                    file and no incomplete upload, then or later
#   race             coordinators on hosts coord and coord2 commit at the
#                    same moment, 20 rounds of each: the same segment set
#                    (one version, the other answered as already committed)
#                    and different sets under one name (one wins, the other
#                    exits 18, LANCE_ERR_COMMIT_CONFLICT, or 15 when it
#                    opened the dataset after the winner's commit)
#   restart          the object store restarted between build and commit:
#                    a commit while it is down fails with LANCE_ERR_IO (exit
#                    12) and writes nothing; after the restart it succeeds
#   uploads          builds SIGKILLed mid-upload on host w1 (slow uplink)
#                    leave incomplete multipart uploads; a cleanup with a
#                    cutoff younger than they are keeps them, `cleanup
#                    --delete-unverified` aborts every one, and the dataset
#                    then indexes and answers k-NN exactly
#   ray              a real Ray cluster over the hosts: the head node on
#                    host head (`ray start --head --node-ip-address` its
#                    address, resource {"head": 1}, --temp-dir under the
#                    test's directory), worker nodes on w1 and w2 joined to
#                    it (`ray start --address`, {"worker": 2} each, started
#                    one after the other), waited for until the GCS lists 3
#                    live nodes; examples/ray_build.py, the driver on head,
#                    runs plan, the coordinator of the training and commit
#                    on head, the 4 training actors (lance-index
#                    train-worker processes) and the 4 builds on w1 and w2, the dataset on s3:// only and the storage
#                    options handed to the tasks by the job (the raylets
#                    never had them); then the example's maintenance job
#                    (--maintain --max-segments 2 --target-rows 8000: the
#                    4000-row segments are not small, 4 are too many):
#                    plan-maintenance on
#                    head, 2 merges of 2 committed segments each on w1 and
#                    w2, one commit --replace on head.  Checks the versions
#                    committed, where each task ran (the IPs the tasks
#                    report), the 2 segments left with every fragment
#                    indexed, k-NN from client against brute force
#                    (IVF_FLAT, every partition probed), no dataset file on
#                    any host, every process in a namespace, and none left
#                    once Ray is stopped
#
# Every process reaches the dataset only through s3://; what a coordinator
# sends a worker (the model) and a worker hands back (the segment's
# metadata) is copied between the hosts' own directories, as a scheduler
# would carry it (in case ray, Ray's object store carries them).  Needs root,
# iproute2, curl, SeaweedFS and Ray 2.60.0 in the project's Python
# environment (scripts/setup.sh installs them); fails, never skips, without.
set -euo pipefail
case_name=${1:?case}
TOOL=$(realpath "${2:?lance-index}")
DATA=$(realpath "${3:?s3_dataset}")
source "$(dirname "$0")/lib.sh"

finish() {
  echo "$case_name: $checks checks, $failures failed, $(s3_elapsed "$T_START") s in all (object store start $S3_START_SECONDS s)"
  echo "$((checks - failures)) passed, $failures failed"
  [ "$failures" -eq 0 ]
}
T_START=$(s3_now)

ROWS=16000
DIM=32
FRAGS=16
PARTS=16
SEED=7
# await_line PATTERN FILE PID: waits (up to 3 min) until a line of FILE
# matches PATTERN, or process PID has ended.
await_line() {
  for _ in $(seq 1 18000); do
    grep -q -- "$1" "$2" 2>/dev/null && break
    kill -0 "$3" 2>/dev/null || break
    sleep 0.01
  done
}

# write URI [HOST]: the dataset, written from host coord (or HOST).
write_dataset() {
  local t0
  t0=$(s3_now)
  on "${2:-coord}" "$DATA" write "$1" "$ROWS" "$DIM" "$FRAGS" "$SEED" >/dev/null || s3_fail "writing $1"
  s3_log "wrote $ROWS x $DIM in $FRAGS fragments to $1: $(s3_elapsed "$t0") s"
}

# train URI: the shared IVF_FLAT model, trained on coord and sent to w1, w2.
train_model() {
  local t0
  t0=$(s3_now)
  on coord "$TOOL" train "$1" --column vec --type IVF_FLAT --partitions "$PARTS" --quiet \
    -o "$(s3_dir coord)/model.bin" >/dev/null || s3_fail "training on $1"
  for h in w1 w2; do cp "$(s3_dir coord)/model.bin" "$(s3_dir "$h")/model.bin"; done
  s3_log "trained the shared model on coord: $(s3_elapsed "$t0") s"
}

# plan URI N: the fragment groups, one "0,1,2" line each; PLAN_VERSION set.
plan_groups() {
  local plan
  plan=$(on coord "$TOOL" plan "$1" --groups "$2") || s3_fail "planning $1"
  PLAN_VERSION=$(json_field "$plan" dataset_version)
  GROUPS_=()
  while read -r g; do GROUPS_+=("$g"); done < <(grep -o '"fragments": \[[^]]*\]' <<<"$plan" | sed 's/.*\[\(.*\)\]/\1/; s/ //g')
}

# build HOST URI FRAGMENTS UUID OUT: one segment, built on HOST (foreground).
build_on() {
  on "$1" "$TOOL" build "$2" --column vec --model "$(s3_dir "$1")/model.bin" --fragments "$3" \
    --uuid "$4" --version "$PLAN_VERSION" --quiet -o "$(s3_dir "$1")/$5"
}

# Hands worker segment files back to coord: prints their paths there.
collect() { # collect HOST:FILE...
  for hf in "$@"; do
    cp "$(s3_dir "${hf%%:*}")/${hf#*:}" "$(s3_dir coord)/${hf#*:}"
    echo "$(s3_dir coord)/${hf#*:}"
  done
}

case_conditional_put() {
  s3_hosts store a b
  s3_start
  s3_log "object store up in $S3_START_SECONDS s"
  echo first >"$S3_WORK/first"
  echo second >"$S3_WORK/second"
  check "the first conditional PUT creates the object (200)" test "$(s3_put_if_absent cp/one "$S3_WORK/first")" = 200
  check "a second conditional PUT of the key is refused (412)" \
    test "$(s3_put_if_absent cp/one "$S3_WORK/second")" = 412
  check "the object is still the first one's" test "$(s3_curl "$S3_ENDPOINT/$S3_BUCKET/cp/one")" = first
  # Two hosts at the same moment, 20 keys: exactly one 200 per key, and the
  # object holds the winner's bytes.
  local rounds=20 exact=0
  for i in $(seq 1 "$rounds"); do
    echo "a$i" >"$S3_WORK/a"
    echo "b$i" >"$S3_WORK/b"
    rm -f "$S3_WORK/go"
    local racers=()
    for h in a b; do
      (while [ ! -e "$S3_WORK/go" ]; do sleep 0.001; done
       s3_put_if_absent "cp/race-$i" "$S3_WORK/$h" "$h" >"$S3_WORK/status-$h") &
      racers+=($!)
    done
    sleep 0.05
    touch "$S3_WORK/go"
    wait "${racers[@]}"
    local sa sb body
    sa=$(cat "$S3_WORK/status-a")
    sb=$(cat "$S3_WORK/status-b")
    body=$(s3_curl "$S3_ENDPOINT/$S3_BUCKET/cp/race-$i")
    if { [ "$sa" = 200 ] && [ "$sb" = 412 ] && [ "$body" = "a$i" ]; } ||
       { [ "$sb" = 200 ] && [ "$sa" = 412 ] && [ "$body" = "b$i" ]; }; then
      exact=$((exact + 1))
    else
      echo "round $i: statuses a=$sa b=$sb, object holds \"$body\"" >&2
    fi
  done
  check "racing conditional PUTs: one 200 and one 412 and the winner's bytes in $exact of $rounds rounds" \
    test "$exact" -eq "$rounds"
}

case_loop() {
  s3_hosts store coord w1 w2 client
  s3_start
  s3_log "object store up in $S3_START_SECONDS s"
  local uri="s3://$S3_BUCKET/loop/vectors.lance"
  write_dataset "$uri"
  local t0
  t0=$(s3_now)
  plan_groups "$uri" 4
  check "4 groups planned at version 1" test "${#GROUPS_[@]}-$PLAN_VERSION" = 4-1
  train_model "$uri"
  # Workers 0, 1 on w1, workers 2, 3 on w2, all at once.
  local hosts=(w1 w1 w2 w2) pids=() uuids=() files=()
  t0=$(s3_now)
  for g in 0 1 2 3; do
    uuids[g]=$(uuid)
    build_on "${hosts[g]}" "$uri" "${GROUPS_[g]}" "${uuids[g]}" "seg-$g.bin" &
    pids[g]=$!
    files[g]="${hosts[g]}:seg-$g.bin"
  done
  local failed=0
  for g in 0 1 2 3; do wait "${pids[g]}" || failed=$((failed + 1)); done
  check "4 worker processes on w1 and w2 built their segments" test "$failed" -eq 0
  s3_log "4 segments built on 2 worker hosts: $(s3_elapsed "$t0") s"
  mapfile -t segs < <(collect "${files[@]}")
  t0=$(s3_now)
  local out
  out=$(on coord "$TOOL" commit "$uri" --name vec_idx --column vec --job-id loop "${segs[@]}")
  s3_log "committed on coord: $(s3_elapsed "$t0") s: $out"
  check "the commit made version 2" test "$(commit_answer "$out")" = 2-false
  out=$(on coord "$TOOL" commit "$uri" --name vec_idx --column vec --job-id loop --attempt-id 2 "${segs[@]}")
  check "a retried commit is answered as already committed in version 2" test "$(commit_answer "$out")" = 2-true
  out=$(on client "$TOOL" coverage "$uri" --name vec_idx --json)
  check "seen from client: 4 segments, every fragment indexed" test "$(coverage_answer "$out")" = 4-1
  check_segments_stored s3_list loop/vectors.lance/ "${uuids[@]}"
  t0=$(s3_now)
  out=$(on client "$DATA" check "$uri" "$ROWS" "$DIM" "$SEED" "$PARTS") || true
  s3_log "k-NN from client: $(s3_elapsed "$t0") s: $out"
  check "k-NN from client (every partition probed) equals brute force for 50 queries" \
    test "$(json_field "$out" mismatches)-$(json_field "$out" version)" = 0-2
  check "no host holds a dataset file locally" \
    test -z "$(find "$S3_WORK/hosts" -name '*.lance' -o -name '*.manifest' -o -name '*.idx')"
}

# cancel_at_stage STAGE WHAT URI PREFIX WHEN: `s3_dataset cancel-at STAGE`
# on host w1 with a fresh UUID: the call returns CANCELLED, the build
# stopped at once.  The removal of what it wrote (its claim, files, open
# uploads) runs after the return (lance.h "Cancellation").  WHEN "1s": the
# process lingers 3 s after the return, and nothing of its UUID, no file
# and no incomplete upload, is in the bucket 1 s after the return; "exit":
# the process exits right after the return, and nothing is left once it
# has ended (it waits for that removal).  Either way nothing is there 3 s
# after the return, and with the process alive its temporary directory
# was gone 1 s after the return.
cancel_at_stage() {
  local stage=$1 what=$2 uri=$3 prefix=$4 when=$5 u dashed pid rc=0 out now linger=3000 spill
  u=$(uuid)
  dashed=$(dashed_uuid "$u")
  out=$S3_WORK/cancel-$u
  left() { echo "$(s3_list "$prefix" | grep -e "$dashed" || true)$(s3_list_uploads "$prefix" | grep -e "$dashed" || true)"; }
  [ "$when" = exit ] && linger=0
  on w1 "$DATA" cancel-at "$stage" "$uri" "$PARTS" "$u" "$linger" >"$out.out" 2>"$out.err" &
  pid=$!
  await_line '"code"' "$out.out" "$pid"
  if [ "$when" = exit ]; then
    wait "$pid" || rc=$?
    now=$(left)
  fi
  # Within 1 s the computation the cancel did not wait for has ended and
  # removed its temporary directory (lance.h "Temporary files"): only the
  # process's own directory, empty, remains under the host's TMPDIR.
  sleep 1
  spill=$(find "$(s3_dir w1)/tmp" -mindepth 2 2>/dev/null | head -n 3)
  [ "$when" = 1s ] && now=$(left)
  [ "$when" = exit ] || { wait "$pid" || rc=$?; }
  s3_log "cancel $what: $(cat "$out.out") $(cat "$out.err")"
  check "a build cancelled $what on s3:// returns CANCELLED, stopped at once (exit $rc)" \
    grep -qx '{"code": 1000, "abandoned": 0, "ms": [0-9.]*}' "$out.out"
  local at="1 s after the call returned, the process still alive"
  [ "$when" = exit ] && at="once the process, exiting right after the return, had ended"
  check "nothing of its UUID (file or incomplete upload) was in the bucket $at (found: ${now:-nothing})" test -z "$now"
  local later="nor 3 s after the return, when the process ended"
  [ "$when" = exit ] && later="nor 1 s later"
  check "$later" test -z "$(left)"
  [ "$when" = exit ] ||
    check "its temporary directory was gone 1 s after the return, the process still alive (found: ${spill:-nothing})" \
      test -z "$spill"
}

case_kill() {
  s3_hosts store coord w1 w2 client
  s3_start
  s3_log "object store up in $S3_START_SECONDS s"
  local uri="s3://$S3_BUCKET/kill/vectors.lance" prefix="kill/vectors.lance/"
  ROWS=64000
  DIM=64
  write_dataset "$uri"
  plan_groups "$uri" 4
  train_model "$uri"
  local before
  before=$(s3_list "$prefix" | sort)
  # Host w1 works through its two tasks (groups 0, 1) one after the other,
  # as a worker with one build slot does, over a slow uplink (8 Mbit/s:
  # each segment's ~4 MB of index files take seconds to upload); w2 builds
  # groups 2, 3 side by side.  w1 dies once its first task has finished
  # (its segment files are in the bucket, its segment never reached the
  # coordinator) while its second is building.  Waiting for the first task
  # makes the kill land mid-build on every machine: the second task cannot
  # finish before its own upload, which the slow link stretches to seconds.
  s3_limit_uplink w1 8mbit
  local pids=() uuids=() dashed=()
  for g in 0 1 2 3; do
    uuids[g]=$(uuid)
    dashed[g]=$(dashed_uuid "${uuids[g]}")
  done
  local w1dir
  w1dir=$(s3_dir w1)
  (for g in 0 1; do
     on w1 "$TOOL" build "$uri" --column vec --model "$w1dir/model.bin" --fragments "${GROUPS_[g]}" \
       --uuid "${uuids[g]}" --version "$PLAN_VERSION" -o "$w1dir/seg-$g.bin" 2>"$S3_WORK/build-$g.log" || exit 1
   done) &
  pids[0]=$!
  for g in 2 3; do
    (on w2 "$TOOL" build "$uri" --column vec --model "$(s3_dir w2)/model.bin" --fragments "${GROUPS_[g]}" \
       --uuid "${uuids[g]}" --version "$PLAN_VERSION" -o "$(s3_dir w2)/seg-$g.bin" 2>"$S3_WORK/build-$g.log") &
    pids[g]=$!
  done
  # Wait for the first task's segment (written after its files are in the
  # bucket), then for the second task to write its partitions (its
  # "merge_partitions" stage: the files are written and uploaded there) and
  # a second more, inside the upload the slow link stretches to ~4 s;
  # freeze everything on w1, see what was running, and SIGKILL it.
  local t0 w1pids
  t0=$(s3_now)
  for _ in $(seq 1 18000); do
    [ -s "$w1dir/seg-0.bin" ] && break
    kill -0 "${pids[0]}" 2>/dev/null || break # w1's tasks ended (failed)
    sleep 0.01
  done
  await_line "^merge_partitions: started" "$S3_WORK/build-1.log" "${pids[0]}"
  sleep 1
  w1pids=$(ip netns pids "$(s3_ns w1)")
  [ -n "$w1pids" ] && kill -STOP $w1pids 2>/dev/null || true
  local alive=0
  for p in $w1pids; do
    # Alive and not yet reaped as a zombie: state R, S, D or T.
    if grep -q -- "${uuids[1]}" "/proc/$p/cmdline" 2>/dev/null &&
       ! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null; then
      alive=$((alive + 1))
    fi
  done
  [ -n "$w1pids" ] && kill -9 $w1pids 2>/dev/null || true
  s3_log "SIGKILLed w1 $(s3_elapsed "$t0") s after its tasks began, with its second task's build running ($alive process)"
  check "w1's first task finished its segment before the host died" test -s "$w1dir/seg-0.bin"
  check "w1's second task was writing its partitions when killed" \
    grep -q "^merge_partitions: started" "$S3_WORK/build-1.log"
  check "w1's second task was building when killed" test "$alive" -eq 1
  wait "${pids[0]}" || true
  check "w1's second task never wrote its segment" test ! -e "$w1dir/seg-1.bin"
  local failed=0
  wait "${pids[2]}" || failed=1
  wait "${pids[3]}" || failed=1
  check "w2's workers finished" test "$failed" -eq 0
  local out
  out=$(on client "$DATA" rows "$uri") || true
  check "the dataset stays readable at version 1 with every row" test "$out" = "{\"version\": 1, \"rows\": $ROWS}"
  check "no index was committed" test "$(on client "$TOOL" list "$uri" --json)" = "[]"
  local after_kill orphans
  after_kill=$(s3_list "$prefix" | sort)
  orphans=$(comm -13 <(echo "$before") <(echo "$after_kill") | grep -e "${dashed[0]}" -e "${dashed[1]}" || true)
  s3_log "objects left by the killed builds: $(grep -c . <<<"$orphans" || true)"
  echo "$orphans" | sed 's/^/    /'
  check "the killed builds left objects in the bucket" test -n "$orphans"
  # The retry: fresh UUIDs for the killed groups, built on w2.
  local segs=()
  for g in 0 1; do
    uuids[g]=$(uuid)
    cp "$(s3_dir coord)/model.bin" "$(s3_dir w2)/model.bin"
    build_on w2 "$uri" "${GROUPS_[g]}" "${uuids[g]}" "retry-$g.bin" || s3_fail "retry of group $g"
  done
  mapfile -t segs < <(collect w2:retry-0.bin w2:retry-1.bin w2:seg-2.bin w2:seg-3.bin)
  out=$(on coord "$TOOL" commit "$uri" --name vec_idx --column vec --job-id kill "${segs[@]}")
  check "the retry with fresh UUIDs commits version 2" test "$(json_field "$out" version)" = 2
  out=$(on coord "$TOOL" cleanup "$uri" --older-than 0 --delete-unverified)
  s3_log "cleanup: $out"
  local after
  after=$(s3_list "$prefix" | sort)
  check "cleanup removed every orphaned object" test -z "$(comm -12 <(echo "$orphans") <(echo "$after"))"
  check "nothing of the killed UUIDs is left in the bucket" \
    test -z "$(grep -e "${dashed[0]}" -e "${dashed[1]}" <<<"$after" || true)"
  out=$(on client "$DATA" check "$uri" "$ROWS" "$DIM" "$SEED" "$PARTS") || true
  check "k-NN after cleanup equals brute force ($out)" test "$(json_field "$out" mismatches)" = 0
  # A cancel on the object store (SIGTERM, which lance-index turns into a
  # cancel) once the build writes its partitions: exit 20, and nothing of
  # its UUID is left in the bucket.
  local cuuid cdashed rc=0
  cuuid=$(uuid)
  cdashed=$(dashed_uuid "$cuuid")
  on w1 "$TOOL" build "$uri" --column vec --model "$w1dir/model.bin" --fragments "${GROUPS_[1]}" \
    --uuid "$cuuid" -o "$w1dir/cancelled.bin" 2>"$S3_WORK/build-cancel.log" &
  local cpid=$!
  await_line "^merge_partitions: started" "$S3_WORK/build-cancel.log" "$cpid"
  kill -TERM $(ip netns pids "$(s3_ns w1)") 2>/dev/null || true
  wait "$cpid" || rc=$?
  check "a build cancelled on s3:// while writing exits 20 (cancelled)" test "$rc" -eq 20
  check "nothing of the cancelled build's UUID is in the bucket" \
    test -z "$(s3_list "$prefix" | grep -e "$cdashed" || true)"
  # A cancel while the build shuffles (its files then go to a local temp
  # directory only; the store holds only its claim): the call returns at
  # once, the build stopped with its runtime (a segment build on s3:// runs
  # on one of its own).  Nothing of its UUID is in the bucket 1 s after the
  # return, nor after the process lived on 3 s more.
  cancel_at_stage shuffle "in its shuffle" "$uri" "$prefix" 1s
  # A cancel in the middle of writing (half its partitions written, its
  # upload crawling over w1's slow link): the build is stopped at once, not
  # at a checkpoint, at its gate: nothing more of it is written, and the
  # removal of its files and the aborts of its incomplete uploads, which
  # run after the return, leave nothing of its UUID in the bucket 1 s later
  # (the process alive) nor 3 s later; and where the process exits right
  # after the return, nothing once it has ended (it waits for them).
  cancel_at_stage "merge_partitions+$((PARTS / 2))" "mid-writing" "$uri" "$prefix" 1s
  cancel_at_stage "merge_partitions+$((PARTS / 2))" "mid-writing, exiting at once" "$uri" "$prefix" exit
}

case_race() {
  s3_hosts store coord coord2 w1 w2
  s3_start
  s3_log "object store up in $S3_START_SECONDS s"
  ROWS=4000
  DIM=16
  FRAGS=4
  PARTS=4
  local uri="s3://$S3_BUCKET/race/vectors.lance" rounds=${LANCE_S3_RACE_ROUNDS:-20}
  write_dataset "$uri"
  plan_groups "$uri" 1
  train_model "$uri"
  local all=${GROUPS_[0]} conflicts=0 same_ok=0 diff_ok=0 version=1
  # commit_both NAME FILE_A FILE_B: coord commits A, coord2 commits B, both
  # released at one moment; prints "codeA codeB|outA|outB".
  commit_both() {
    rm -f "$S3_WORK/go"
    local h f i=0 racers=()
    for h in coord coord2; do
      f=$([ $i -eq 0 ] && echo "$2" || echo "$3")
      (while [ ! -e "$S3_WORK/go" ]; do sleep 0.001; done
       set +e
       on "$h" "$TOOL" commit "$uri" --name "$1" --column vec "$f" >"$S3_WORK/out-$h" 2>"$S3_WORK/err-$h"
       echo $? >"$S3_WORK/rc-$h") &
      racers+=($!)
      i=1
    done
    sleep 0.05
    touch "$S3_WORK/go"
    wait "${racers[@]}"
  }
  local t0
  t0=$(s3_now)
  for r in $(seq 1 "$rounds"); do
    # Same set: one segment over every fragment, committed by both.
    local u
    u=$(uuid)
    build_on w1 "$uri" "$all" "$u" same.bin || s3_fail "build"
    cp "$(s3_dir w1)/same.bin" "$(s3_dir coord)/same.bin"
    cp "$(s3_dir w1)/same.bin" "$(s3_dir coord2)/same.bin"
    commit_both "same_$r" "$(s3_dir coord)/same.bin" "$(s3_dir coord2)/same.bin"
    local ra rb oa ob
    ra=$(cat "$S3_WORK/rc-coord") rb=$(cat "$S3_WORK/rc-coord2")
    oa=$(cat "$S3_WORK/out-coord") ob=$(cat "$S3_WORK/out-coord2")
    version=$((version + 1))
    if [ "$ra$rb" = 00 ] && [ "$(json_field "$oa" version)" = $version ] && [ "$(json_field "$ob" version)" = $version ] &&
       [ "$(json_field "$oa" already_committed)$(json_field "$ob" already_committed)" != truetrue ] &&
       [ "$(json_field "$oa" already_committed)$(json_field "$ob" already_committed)" != falsefalse ]; then
      same_ok=$((same_ok + 1))
    else
      echo "same set, round $r: coord rc $ra $oa $(cat "$S3_WORK/err-coord"); coord2 rc $rb $ob $(cat "$S3_WORK/err-coord2")" >&2
    fi
    # Different sets under one name: two segments over the same fragments,
    # one per coordinator.
    local ua ub
    ua=$(uuid)
    ub=$(uuid)
    build_on w1 "$uri" "$all" "$ua" a.bin &
    local pa=$!
    build_on w2 "$uri" "$all" "$ub" b.bin || s3_fail "build b"
    wait "$pa" || s3_fail "build a"
    cp "$(s3_dir w1)/a.bin" "$(s3_dir coord)/a.bin"
    cp "$(s3_dir w2)/b.bin" "$(s3_dir coord2)/b.bin"
    commit_both "diff_$r" "$(s3_dir coord)/a.bin" "$(s3_dir coord2)/b.bin"
    ra=$(cat "$S3_WORK/rc-coord") rb=$(cat "$S3_WORK/rc-coord2")
    version=$((version + 1))
    local winner="" loser_rc=""
    [ "$ra" = 0 ] && [ "$rb" != 0 ] && winner=$ua loser_rc=$rb
    [ "$rb" = 0 ] && [ "$ra" != 0 ] && winner=$ub loser_rc=$ra
    local listing
    listing=$(on w1 "$TOOL" coverage "$uri" --name "diff_$r" --json 2>/dev/null || true)
    local wdashed
    wdashed=$(dashed_uuid "$winner")
    if [ -n "$winner" ] && { [ "$loser_rc" = 18 ] || [ "$loser_rc" = 15 ]; } &&
       [ "$(grep -o '"uuid"' <<<"$listing" | wc -l)" = 1 ] && grep -q "$wdashed" <<<"$listing" &&
       [ "$(json_field "$listing" dataset_version)" = $version ] &&
       grep -q '"unindexed_fragments": *\[\]' <<<"$listing"; then
      diff_ok=$((diff_ok + 1))
      [ "$loser_rc" = 18 ] && conflicts=$((conflicts + 1))
    else
      echo "different sets, round $r: coord rc $ra $(cat "$S3_WORK/err-coord"); coord2 rc $rb $(cat "$S3_WORK/err-coord2"); coverage $listing" >&2
    fi
  done
  s3_log "$rounds rounds of each in $(s3_elapsed "$t0") s; the loser got LANCE_ERR_COMMIT_CONFLICT (18) in $conflicts of them, LANCE_ERR_INDEX (15, it opened after the winner committed) in the rest"
  check "same set from two hosts: one new version, the other answered as already committed, $same_ok of $rounds rounds" \
    test "$same_ok" -eq "$rounds"
  check "different sets from two hosts: one index with the winner's segment, the loser exits 18 or 15, $diff_ok of $rounds rounds" \
    test "$diff_ok" -eq "$rounds"
  check "at least one round raced into LANCE_ERR_COMMIT_CONFLICT (18)" test "$conflicts" -ge 1
  local out
  out=$(on w2 "$DATA" rows "$uri") || true
  check "the dataset ends at version $version with every row" test "$out" = "{\"version\": $version, \"rows\": $ROWS}"
}

case_restart() {
  s3_hosts store coord w1 w2 client
  s3_start
  s3_log "object store up in $S3_START_SECONDS s"
  local uri="s3://$S3_BUCKET/restart/vectors.lance" prefix="restart/vectors.lance/"
  write_dataset "$uri"
  plan_groups "$uri" 2
  train_model "$uri"
  local u0 u1
  u0=$(uuid)
  u1=$(uuid)
  build_on w1 "$uri" "${GROUPS_[0]}" "$u0" seg-0.bin || s3_fail "build 0"
  build_on w2 "$uri" "${GROUPS_[1]}" "$u1" seg-1.bin || s3_fail "build 1"
  mapfile -t segs < <(collect w1:seg-0.bin w2:seg-1.bin)
  local before
  before=$(s3_list "$prefix" | sort)
  s3_stop
  local t0 rc=0
  t0=$(s3_now)
  on coord "$TOOL" commit "$uri" --name vec_idx --column vec --job-id restart "${segs[@]}" \
    >"$S3_WORK/down.out" 2>"$S3_WORK/down.err" || rc=$?
  s3_log "commit with the object store down: exit $rc after $(s3_elapsed "$t0") s: $(head -c 300 "$S3_WORK/down.err")"
  check "a commit while the object store is down fails with LANCE_ERR_IO (exit 12)" test "$rc" = 12
  s3_start
  s3_log "object store restarted in $S3_START_SECONDS s (same data directory)"
  check "nothing was written while it was down" test "$(s3_list "$prefix" | sort)" = "$before"
  local out
  out=$(on coord "$TOOL" commit "$uri" --name vec_idx --column vec --job-id restart "${segs[@]}")
  check "after the restart the commit makes version 2" test "$(commit_answer "$out")" = 2-false
  out=$(on client "$DATA" check "$uri" "$ROWS" "$DIM" "$SEED" "$PARTS") || true
  check "k-NN from client equals brute force ($out)" test "$(json_field "$out" mismatches)" = 0
}

# ---- a Ray cluster across the hosts ----
VENV=${LANCE_C_VENV:-$HOME/.cache/lance-c/venv}
EXAMPLE=$(realpath "$(dirname "$0")/../../examples/ray_build.py")
RAY_PORT=6379
RAY_HOSTS=(head w1 w2)

# ray_on HOST CMD...: CMD on HOST with Ray's settings (usage statistics
# off; token authentication with this run's token, never ~/.ray's) and
# without the storage options, so that tasks get them only from the job.
ray_on() {
  local h=$1
  shift
  on "$h" env -u LANCE_STORAGE_OPTIONS RAY_USAGE_STATS_ENABLED=0 RAY_AUTH_MODE=token RAY_AUTH_TOKEN="$RAY_TOKEN" "$@"
}

# ray_fail MESSAGE: the end of Ray's own logs, then the failure.
ray_fail() {
  local f
  for f in "$S3_WORK"/ray/session_latest/logs/{gcs_server,raylet}*.{out,err}; do
    [ -s "$f" ] && { echo "--- last lines of $(basename "$f") ---"; grep -v '^\[state-dump\]' "$f" | tail -n 10; } >&2
  done
  s3_fail "$1"
}

# ray_rss_watch FILE: until FILE is removed, samples the resident memory of
# every process on the Ray hosts twice a second; then prints each host's
# largest total (MB) and process count.  A measurement only.
ray_rss_watch() {
  local h p kb n line
  declare -A peak=() count=()
  while [ -e "$1" ]; do
    for h in "${RAY_HOSTS[@]}"; do
      kb=0 n=0
      for p in $(ip netns pids "$(s3_ns "$h")"); do
        line=$({ grep '^VmRSS:' "/proc/$p/status"; } 2>/dev/null || true)
        [ -n "$line" ] && kb=$((kb + $(tr -dc 0-9 <<<"$line"))) n=$((n + 1))
      done
      [ "$kb" -gt "${peak[$h]:-0}" ] && peak[$h]=$kb count[$h]=$n
    done
    sleep 0.5
  done
  for h in "${RAY_HOSTS[@]}"; do echo "$h $((${peak[$h]:-0} / 1024)) MB in ${count[$h]:-0} processes"; done
}

# Every process of this run anywhere on the machine: each has TMPDIR under
# $S3_WORK/hosts in its environment (`on` sets it; Ray's daemons and their
# workers inherit it).  "PID NAMESPACE" lines.
run_pids() {
  local f p
  for f in /proc/[0-9]*/environ; do
    p=${f#/proc/}
    p=${p%/environ}
    { tr '\0' '\n' <"$f" | grep -q "^TMPDIR=$S3_WORK/hosts/"; } 2>/dev/null || continue
    echo "$p $(ip netns identify "$p" 2>/dev/null)"
  done
  return 0
}

# ray_term WHICH: SIGTERM to the processes on the Ray hosts that are WHICH
# (raylet, gcs, others), SIGKILL to those still there after 16 s (Ray's own
# grace period).  Prints "PID:NAME" of each that had to be killed.
ray_term() {
  local h p name pids=()
  for h in "${RAY_HOSTS[@]}"; do
    for p in $(ip netns pids "$(s3_ns "$h")"); do
      name=$(cat "/proc/$p/comm" 2>/dev/null) || continue
      case "$1:$name" in
        raylet:raylet | gcs:gcs_server) pids+=("$p") ;;
        others:raylet | others:gcs_server | raylet:* | gcs:*) ;;
        *) pids+=("$p") ;;
      esac
    done
  done
  [ ${#pids[@]} -gt 0 ] || return 0
  kill -TERM "${pids[@]}" 2>/dev/null || true
  local deadline=$((SECONDS + 16)) alive
  while :; do
    alive=()
    for p in "${pids[@]}"; do
      # Gone, or a zombie waiting for its parent: ended.
      grep -q '^State:.*[RSDT]' "/proc/$p/status" 2>/dev/null && alive+=("$p")
    done
    [ ${#alive[@]} -eq 0 ] && return 0
    [ $SECONDS -ge $deadline ] && break
    sleep 0.1
  done
  for p in "${alive[@]}"; do echo -n "$p:$(cat "/proc/$p/comm" 2>/dev/null) "; done
  kill -9 "${alive[@]}" 2>/dev/null || true
}

# Stops Ray on its hosts in the order `ray stop` uses (raylets, then the
# agents and monitors, then the GCS), but only the processes inside the
# hosts' namespaces: `ray stop` itself would stop every Ray process on the
# machine by name.
ray_stop() {
  ray_term raylet
  ray_term others
  ray_term gcs
}

case_ray() {
  { [ -x "$VENV/bin/ray" ] && "$VENV/bin/python" -c "import ray, sys; sys.exit(ray.__version__ != '2.60.0')"; } ||
    s3_fail "Ray 2.60.0 is missing from $VENV: run scripts/setup.sh"
  s3_hosts store head w1 w2 client
  s3_start
  s3_log "object store up in $S3_START_SECONDS s"
  RAY_TOKEN=$(uuid)
  local uri="s3://$S3_BUCKET/ray/vectors.lance" head_ip w1_ip w2_ip
  head_ip=$(s3_ip head) w1_ip=$(s3_ip w1) w2_ip=$(s3_ip w2)
  write_dataset "$uri" client
  # The head node on host head.  Its temporary directory (session, logs,
  # sockets) becomes the cluster's: the worker nodes take it from the head.
  local t0 ray_dir=$S3_WORK/ray
  t0=$(s3_now)
  ray_on head "$VENV/bin/ray" start --head --node-ip-address="$head_ip" --port=$RAY_PORT \
    --temp-dir="$ray_dir" --num-cpus=1 --resources='{"head": 1}' --object-store-memory=100000000 \
    --include-dashboard=false --disable-usage-stats >"$S3_WORK/ray-head.log" 2>&1 ||
    { cat "$S3_WORK/ray-head.log" >&2; ray_fail "ray start --head on head failed"; }
  s3_log "Ray head node up on head ($head_ip:$RAY_PORT): $(s3_elapsed "$t0") s"
  # Two worker nodes, each with 2 CPUs and 2 units of "worker", one after
  # the other: nodes on one machine share the head's session directory, and
  # two starting at once would pick the same socket names in it.
  local h
  for h in w1 w2; do
    t0=$(s3_now)
    ray_on "$h" "$VENV/bin/ray" start --address="$head_ip:$RAY_PORT" --node-ip-address="$(s3_ip "$h")" \
      --num-cpus=2 --resources='{"worker": 2}' --object-store-memory=100000000 \
      --disable-usage-stats >"$S3_WORK/ray-$h.log" 2>&1 ||
      { cat "$S3_WORK/ray-$h.log" >&2; ray_fail "ray start on $h failed"; }
    s3_log "Ray worker node up on $h: $(s3_elapsed "$t0") s"
  done
  # Formed when the head's GCS lists the 3 nodes alive.
  local nodes
  nodes=$(ray_on head timeout 120 "$VENV/bin/python" - "$head_ip:$RAY_PORT" 2>"$S3_WORK/nodes.err" <<'PY'
import sys, time
import ray
ray.init(address=sys.argv[1], log_to_driver=False, logging_level="ERROR")
deadline = time.time() + 60
while True:
    alive = sorted(n["NodeManagerAddress"] for n in ray.nodes() if n["Alive"])
    if len(alive) == 3 or time.time() > deadline:
        break
    time.sleep(0.2)
print(" ".join(alive))
PY
) || { tail -n 20 "$S3_WORK/nodes.err" >&2; ray_fail "cannot reach the Ray cluster at $head_ip:$RAY_PORT from head"; }
  [ "$(tr ' ' '\n' <<<"$nodes" | sort | xargs)" = "$(printf '%s\n' "$head_ip" "$w1_ip" "$w2_ip" | sort | xargs)" ] ||
    ray_fail "the Ray cluster did not show its 3 nodes alive within 60 s (alive: ${nodes:-none})"
  s3_log "Ray cluster of 3 nodes alive: $nodes"
  local strays
  strays=$(run_pids | grep -v -e " $(s3_ns head)\$" -e " $(s3_ns w1)\$" -e " $(s3_ns w2)\$" -e " $(s3_ns store)\$" || true)
  check "every process of the run is inside a host's namespace${strays:+ (outside: $(echo $strays))}" test -z "$strays"
  # The whole loop driven from head: the driver plans there and reduces
  # the training's rounds; commit needs "head", the 4 training actors and
  # the 4 builds "worker" (spread over w1 and w2).  Then the maintenance
  # job: its merges need "worker", its commit "head".
  # Only the driver has the storage options; its job hands them on.
  t0=$(s3_now)
  local out rc=0 watch=$S3_WORK/rss.watch rss
  touch "$watch"
  ray_rss_watch "$watch" >"$S3_WORK/rss" &
  local watcher=$!
  # A lost node or an unplaceable task would wait forever: 5 minutes at most.
  out=$(ray_on head env LANCE_STORAGE_OPTIONS="$S3_OPTIONS" timeout 300 "$VENV/bin/python" "$EXAMPLE" "$TOOL" \
    --address "$head_ip:$RAY_PORT" --uri "$uri" --workers 4 --index-type IVF_FLAT --partitions "$PARTS" \
    --train-resource head --build-resource worker --maintain --max-segments 2 --target-rows 8000 2>"$S3_WORK/driver.err") || rc=$?
  s3_log "Ray job from head: exit $rc after $(s3_elapsed "$t0") s"
  rm "$watch"
  wait "$watcher"
  s3_log "peak resident memory during the job: $(paste -sd ';' "$S3_WORK/rss" | sed 's/;/, /g')"
  echo "$out" | sed 's/^/    /'
  [ "$rc" -eq 0 ] || { tail -n 40 "$S3_WORK/driver.err" >&2; ray_fail "the Ray driver failed"; }
  local commit train builds
  commit=$(grep '"task": "commit"' <<<"$out" || true)
  train=$(grep '"task": "train"' <<<"$out" || true)
  builds=$(grep '"task": "build"' <<<"$out" | sed -n 's/.*"node_ip": "\([^"]*\)".*/\1/p' | sort)
  check "the Ray job's commit made version 2" \
    test "$(json_field "$commit" version)-$(json_field "$commit" already_committed)" = 2-false
  local trainers
  trainers=$(sed -n 's/.*"node_ip": "\([^"]*\)".*/\1/p' <<<"$train" | sort)
  check "the model was trained by 4 actors, each on w1 ($w1_ip) or w2 ($w2_ip): $(echo $trainers)" \
    test "$(grep -cx -e "$w1_ip" -e "$w2_ip" <<<"$trainers")" = 4
  check "the training took rounds" grep -q '"workers": 4, "rounds": [1-9]' <<<"$train"
  check "commit ran on head ($head_ip)" grep -q "\"node_ip\": \"$head_ip\"" <<<"$commit"
  check "4 builds ran, each on w1 ($w1_ip) or w2 ($w2_ip): $(echo $builds)" \
    test "$(grep -cx -e "$w1_ip" -e "$w2_ip" <<<"$builds")" = 4
  check "both worker hosts built segments" test "$(sort -u <<<"$builds" | wc -l)" = 2
  # The maintenance job: the 4 segments of 4000 rows, at most 2 kept, are
  # 2 merges of neighbours, committed in one version.
  local maintained merges pairs
  maintained=$(grep '"task": "maintain-commit"' <<<"$out" || true)
  merges=$(grep '"task": "maintain-merge"' <<<"$out" | sed -n 's/.*"node_ip": "\([^"]*\)".*/\1/p' | sort)
  pairs=$(grep -c '"task": "maintain-merge".*"segments": 2' <<<"$out" || true)
  check "the maintenance job committed version 3 with --replace: 4 segments before, 2 after" \
    test "$(json_field "$maintained" version)-$(json_field "$maintained" segments_before)-$(json_field \
      "$maintained" segments_after)" = 3-4-2
  check "its commit ran on head ($head_ip)" grep -q "\"node_ip\": \"$head_ip\"" <<<"$maintained"
  check "2 merges of 2 committed segments ran, each on w1 ($w1_ip) or w2 ($w2_ip): $(echo $merges)" \
    test "$(grep -cx -e "$w1_ip" -e "$w2_ip" <<<"$merges")-$pairs" = 2-2
  check "the maintenance job ran no build (nothing unindexed)" \
    test "$(grep -c '"task": "maintain-build"' <<<"$out")" = 0
  out=$(on client "$TOOL" coverage "$uri" --name vec_idx --json)
  check "seen from client: 2 segments, every fragment indexed" \
    test "$(grep -o '"uuid"' <<<"$out" | wc -l)-$(grep -c '"unindexed_fragments": *\[\]' <<<"$out")" = 2-1
  out=$(on client "$DATA" check "$uri" "$ROWS" "$DIM" "$SEED" "$PARTS") || true
  s3_log "k-NN from client: $out"
  check "k-NN from client (every partition probed) equals brute force for 50 queries" \
    test "$(json_field "$out" mismatches)-$(json_field "$out" version)" = 0-3
  check "no host, nor Ray's directory, holds a dataset file locally" \
    test -z "$(find "$S3_WORK/hosts" "$ray_dir" -name '*.lance' -o -name '*.manifest' -o -name '*.idx')"
  t0=$(s3_now)
  local killed
  killed=$(ray_stop)
  s3_log "Ray stopped on head, w1, w2: $(s3_elapsed "$t0") s${killed:+ (SIGKILLed after 16 s: $killed)}"
  check "Ray's processes ended on SIGTERM" test -z "$killed"
  local left
  left=$(run_pids | grep -v " $(s3_ns store)\$" || true)
  check "no process of the run is left but the object store's${left:+ (left: $(echo $left))}" test -z "$left"
}

# Incomplete multipart uploads left by builds SIGKILLed mid-upload: listed
# in the bucket, kept by a cleanup whose cutoff is younger than they are,
# aborted by `cleanup --delete-unverified` with an older one (0 left), and
# the dataset then indexes and answers k-NN exactly.
case_uploads() {
  s3_hosts store coord w1 w2 client
  s3_start
  s3_log "object store up in $S3_START_SECONDS s"
  local uri="s3://$S3_BUCKET/uploads/vectors.lance" prefix="uploads/vectors.lance/"
  # Each of the 2 groups' IVF_FLAT segments holds 8 MB of vectors: more
  # than the 5 MiB a writer buffers before it starts a multipart upload.
  ROWS=32000
  DIM=128
  write_dataset "$uri"
  plan_groups "$uri" 2
  train_model "$uri"
  s3_limit_uplink w1 16mbit
  local w1dir rounds=${LANCE_S3_UPLOAD_ROUNDS:-3} r killed=0
  w1dir=$(s3_dir w1)
  for r in $(seq 1 "$rounds"); do
    local before u pid
    before=$(s3_list_uploads "$prefix" | wc -l)
    u=$(uuid)
    on w1 "$TOOL" build "$uri" --column vec --model "$w1dir/model.bin" --fragments "${GROUPS_[$((r % 2))]}" \
      --uuid "$u" -o "$w1dir/killed-$r.bin" 2>"$S3_WORK/upload-$r.log" &
    pid=$!
    # SIGKILL the worker host once its upload is listed (the slow link
    # keeps it open for seconds).
    for _ in $(seq 1 6000); do
      [ "$(s3_list_uploads "$prefix" | wc -l)" -gt "$before" ] && break
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.01
    done
    kill -9 $(ip netns pids "$(s3_ns w1)") 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    [ ! -e "$w1dir/killed-$r.bin" ] && killed=$((killed + 1))
  done
  local uploads
  uploads=$(s3_list_uploads "$prefix")
  s3_log "incomplete uploads after $rounds builds SIGKILLed mid-upload: $(grep -c . <<<"$uploads" || true)"
  echo "$uploads" | sed 's/^/    /'
  check "every build was killed before it finished ($killed of $rounds)" test "$killed" -eq "$rounds"
  check "each killed build left an incomplete upload" test "$(grep -c . <<<"$uploads" || true)" -ge "$rounds"
  local out
  out=$(on coord "$TOOL" cleanup "$uri" --older-than 3600 --delete-unverified)
  check "a cleanup whose cutoff is an hour aborts none ($out)" test "$(json_field "$out" uploads_aborted)" = 0
  check "and the uploads are still there" test "$(s3_list_uploads "$prefix")" = "$uploads"
  out=$(on coord "$TOOL" cleanup "$uri" --older-than 0)
  check "a cleanup without --delete-unverified does not look ($out)" test "$(json_field "$out" uploads_aborted)" = null
  out=$(on coord "$TOOL" cleanup "$uri" --older-than 0 --delete-unverified)
  s3_log "cleanup: $out"
  check "cleanup --delete-unverified aborted every one" \
    test "$(json_field "$out" uploads_aborted)" = "$(grep -c . <<<"$uploads")"
  check "no incomplete upload is left under the dataset" test -z "$(s3_list_uploads "$prefix")"
  # The dataset indexes and answers as if nothing had happened.
  local segs=() g
  for g in 0 1; do
    cp "$(s3_dir coord)/model.bin" "$w1dir/model.bin"
    build_on w1 "$uri" "${GROUPS_[g]}" "$(uuid)" "seg-$g.bin" || s3_fail "building group $g"
  done
  mapfile -t segs < <(collect w1:seg-0.bin w1:seg-1.bin)
  out=$(on coord "$TOOL" commit "$uri" --name vec_idx --column vec "${segs[@]}")
  check "the segments built after the cleanup commit version 2" test "$(json_field "$out" version)" = 2
  out=$(on client "$DATA" check "$uri" "$ROWS" "$DIM" "$SEED" "$PARTS") || true
  check "k-NN equals brute force ($out)" test "$(json_field "$out" mismatches)" = 0
}

case "$case_name" in
  conditional_put | loop | kill | race | restart | ray | uploads) "case_$case_name" ;;
  *) s3_fail "unknown case $case_name" ;;
esac
finish
