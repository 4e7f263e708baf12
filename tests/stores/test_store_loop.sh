#!/usr/bin/env bash
# The distributed index build on Google Cloud Storage and Azure Blob storage,
# each against a local emulator (issue 24): test_s3.sh's loop on gs:// and
# az:// instead of s3://.
#
#   tests/stores/test_store_loop.sh STORE LANCE_INDEX S3_DATASET
#
# STORE is
#   gcs    fake-gcs-server (HTTP, filesystem backend).  Lance reaches gs://
#          through one of two clients: object_store's, the default, which
#          speaks GCS's XML API, and OpenDAL's (use_opendal=true), which
#          speaks the JSON API.  fake-gcs-server serves the JSON API and XML
#          reads and listings, but no XML uploads (its issue 331), so the
#          loop writes through OpenDAL, and the k-NN check reads through
#          both clients.  OpenDAL's client in Lance 14.0.2 puts a dataset
#          below a path in the bucket at that path twice (the defect Lance
#          fixed for oss:// and OpenDAL's s3://, not for gs://), so the loop's
#          dataset is the root of bucket "lance", where both clients agree.
#          Two more checks pin what keeps the loop there, and fail when a
#          re-pin changes it: a write through the default client fails with
#          LANCE_ERR_IO naming the refused upload, and a dataset OpenDAL
#          writes to gs://nested/deep/vectors.lance lies under
#          deep/vectors.lance/deep/vectors.lance/ in bucket "nested".
#   azure  Azurite's blob service (account devstoreaccount1, container
#          "lance", created with a Shared Key request).  The loop uses the
#          options that reach any account (name, key, endpoint); the k-NN
#          check also reads through the emulator switch
#          (azure_storage_use_emulator=true) and through abfss://.  One
#          more check pins that OpenDAL's client (use_opendal=true) cannot
#          be built on az:// in Lance 14.0.2: the open fails with
#          LANCE_ERR_INVALID_ARGUMENT before any request.
#
# The loop: the dataset written (16 fragments), planned into 4 groups, a
# shared IVF_FLAT model trained; 4 worker processes build one segment each,
# all at once; the coordinator commits them, and commits again (a retry,
# answered as already committed); the coverage shows 4 segments over every
# fragment; the emulator's own listing holds each segment's files; k-NN
# through the index (every partition probed) equals brute force.  Every
# process reaches the dataset only through the store's URI.
#
# The emulator and every client run on 127.0.0.1 in a network namespace of
# their own (isolated.sh), so the fixed ports never clash with another run
# and nothing leaves the machine.  Needs root, iproute2, curl and the
# emulator scripts/setup.sh installs (Azurite also Node.js and openssl);
# fails, never skips, without.
set -euo pipefail
STORE=${1:?store: gcs or azure}
TOOL=$(realpath "${2:?lance-index}")
DATA=$(realpath "${3:?s3_dataset}")
HERE=$(cd "$(dirname "$0")" && pwd)
if [ -z "${LANCE_STORES_ISOLATED:-}" ]; then
  LANCE_STORES_ISOLATED=1 exec bash "$HERE/isolated.sh" bash "$0" "$STORE" "$TOOL" "$DATA"
fi
source "$HERE/lib.sh"

BIN=$HOME/.cache/lance-c/bin
FAKE_GCS=${LANCE_C_FAKE_GCS:-$BIN/fake-gcs-server}
AZURITE=${LANCE_C_AZURITE:-$HOME/.cache/lance-c/azurite/node_modules/.bin/azurite-blob}
STORE_LOG=$S3_WORK/emulator.log
STORE_PID=
BUCKET=lance
CLIENT=$S3_WORK/client # what the clients keep locally: models, segments, TMPDIR
mkdir -p "$CLIENT/tmp"

# On EXIT: the emulator stopped (its log shown after a failure), then
# lib.sh's cleanup (the test's directory removed, the exit code kept).
store_cleanup() {
  local rc=$?
  # A background job of this script (a worker) exits with its own code only.
  [ "$BASHPID" = "$$" ] || exit $rc
  set +e
  stop_process STORE_PID 50
  if [ $rc -ne 0 ] && [ -s "$STORE_LOG" ]; then
    echo "--- last lines of the emulator's log ---" >&2
    tail -n 30 "$STORE_LOG" >&2
  fi
  (exit $rc)
  s3_cleanup
}
trap store_cleanup EXIT


# client OPTIONS CMD...: CMD with these storage options, as one client process.
client() {
  local opts=$1
  shift
  env TMPDIR="$CLIENT/tmp" LANCE_STORAGE_OPTIONS="$opts" "$@"
}

# wait_for DESCRIPTION COMMAND...: until COMMAND succeeds, 60 s at most,
# failing at once when the emulator exited.
wait_for() {
  local what=$1 deadline=$((SECONDS + 60))
  shift
  until "$@"; do
    kill -0 "$STORE_PID" 2>/dev/null || s3_fail "the emulator exited at start (see its log)"
    [ $SECONDS -lt $deadline ] || s3_fail "$what: not within 60 s"
    sleep 0.1
  done
}

# ---- Google Cloud Storage: fake-gcs-server ----
GCS_URL=http://127.0.0.1:4443
# The default client (object_store): a service account key file naming the
# emulator ("gcs_base_url") and sending requests without a token
# ("disable_oauth"), plain HTTP allowed.  (google_skip_signature=true would
# do for reads only: object_store 0.14.2 still asks for a token to upload.)
GCS_KEY_FILE=$S3_WORK/gcs-key.json
GCS_NATIVE="google_service_account=$GCS_KEY_FILE,allow_http=true"
# OpenDAL's client: its endpoint option, unsigned requests, and no lookup of
# the VM metadata service for credentials.
GCS_OPENDAL="use_opendal=true,endpoint=$GCS_URL,google_skip_signature=true,disable_vm_metadata=true"

gcs_buckets_created() {
  local b code
  for b in "$BUCKET" nested; do
    code=$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
      -d "{\"name\": \"$b\"}" "$GCS_URL/storage/v1/b" 2>/dev/null) || true
    [ "$code" = 200 ] || [ "$code" = 409 ] || return 1
  done
}

gcs_start() {
  [ -x "$FAKE_GCS" ] || s3_fail "fake-gcs-server ($FAKE_GCS) is missing: run scripts/setup.sh"
  mkdir -p "$S3_WORK/gcs"
  printf '{"private_key": "unused", "private_key_id": "unused", "client_email": "%s",\n %s}\n' \
    lance-test@example.invalid "\"gcs_base_url\": \"$GCS_URL\", \"disable_oauth\": true" >"$GCS_KEY_FILE"
  "$FAKE_GCS" -scheme http -host 127.0.0.1 -port 4443 -public-host 127.0.0.1:4443 \
    -backend filesystem -filesystem-root "$S3_WORK/gcs" >>"$STORE_LOG" 2>&1 &
  STORE_PID=$!
  wait_for "creating the buckets on fake-gcs-server" gcs_buckets_created
}

# gcs_list [BUCKET] PREFIX: the bucket's keys under PREFIX, one a line (the
# JSON API's listing; BUCKET defaults to the loop's).
gcs_list() {
  local bucket=$BUCKET
  [ $# -eq 2 ] && { bucket=$1; shift; }
  curl -sS --fail --max-time 30 -G "$GCS_URL/storage/v1/b/$bucket/o" --data-urlencode "prefix=$1" \
    --data-urlencode "maxResults=1000" | grep -o '"name": *"[^"]*"' | sed 's/.*"\([^"]*\)"$/\1/' || true
}

# ---- Azure Blob storage: Azurite ----
AZ_ACCOUNT=devstoreaccount1
# The emulator's well-known account key (published with Azurite).
AZ_KEY='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
AZ_ENDPOINT=http://127.0.0.1:10000/$AZ_ACCOUNT
AZ_API_VERSION=2021-08-06
# Account, key and endpoint: the options that reach any account.
AZ_OPTIONS="azure_storage_account_name=$AZ_ACCOUNT,azure_storage_account_key=$AZ_KEY"
AZ_OPTIONS+=",azure_storage_endpoint=$AZ_ENDPOINT,allow_http=true"
# The emulator switch: object_store's Azurite defaults (127.0.0.1:10000, the
# well-known key); Lance still wants the account's name.
AZ_EMULATOR="azure_storage_use_emulator=true,azure_storage_account_name=$AZ_ACCOUNT"

# Creates the container, readable without a signature (so that the test can
# list it with curl), by a request signed with the account's Shared Key.
az_container_created() {
  local date headers sts key_hex sig code
  date=$(LC_ALL=C TZ=GMT date '+%a, %d %b %Y %H:%M:%S GMT')
  headers="x-ms-blob-public-access:container"$'\n'"x-ms-date:$date"$'\n'"x-ms-version:$AZ_API_VERSION"
  # The verb, 11 empty standard headers, the x-ms- headers sorted, and the
  # resource (the account twice: once for the account, once in the path).
  sts="PUT"$'\n\n\n\n\n\n\n\n\n\n\n\n'"$headers"$'\n'"/$AZ_ACCOUNT/$AZ_ACCOUNT/$BUCKET"$'\n'"restype:container"
  key_hex=$(base64 -d <<<"$AZ_KEY" | od -An -tx1 -v | tr -d ' \n')
  sig=$(printf '%s' "$sts" | openssl dgst -sha256 -mac HMAC -macopt "hexkey:$key_hex" -binary | base64 -w0)
  code=$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' -X PUT -H 'Content-Length: 0' \
    -H "x-ms-blob-public-access: container" -H "x-ms-date: $date" -H "x-ms-version: $AZ_API_VERSION" \
    -H "Authorization: SharedKey $AZ_ACCOUNT:$sig" "$AZ_ENDPOINT/$BUCKET?restype=container" 2>/dev/null) || true
  [ "$code" = 201 ] || [ "$code" = 409 ]
}

azure_start() {
  [ -x "$AZURITE" ] || s3_fail "Azurite ($AZURITE) is missing: run scripts/setup.sh"
  command -v node >/dev/null || s3_fail "Node.js is missing (Azurite runs on it): run scripts/setup.sh"
  command -v openssl >/dev/null || s3_fail "openssl is missing: run scripts/setup.sh"
  mkdir -p "$S3_WORK/azurite"
  "$AZURITE" --blobHost 127.0.0.1 --blobPort 10000 --location "$S3_WORK/azurite" --disableTelemetry \
    >>"$STORE_LOG" 2>&1 &
  STORE_PID=$!
  wait_for "creating container $BUCKET on Azurite" az_container_created
}

# The container's blobs under PREFIX, one a line (List Blobs, unsigned).
azure_list() {
  curl -sS --fail --max-time 30 -G "$AZ_ENDPOINT/$BUCKET" --data-urlencode restype=container \
    --data-urlencode comp=list --data-urlencode "prefix=$1" | grep -o '<Name>[^<]*</Name>' |
    sed 's/<Name>\(.*\)<\/Name>/\1/' || true
}

# ---- the loop ----
ROWS=16000
DIM=32
FRAGS=16
PARTS=16
SEED=7

# knn_check DESCRIPTION OPTIONS URI: k-NN through one client equals brute force at version 2.
knn_check() {
  local out t0
  t0=$(s3_now)
  out=$(client "$2" "$DATA" check "$3" "$ROWS" "$DIM" "$SEED" "$PARTS") || true
  s3_log "k-NN $1: $(s3_elapsed "$t0") s: $out"
  check "k-NN $1 (every partition probed) equals brute force for 50 queries" \
    test "$(json_field "$out" mismatches)-$(json_field "$out" version)" = 0-2
}

# loop OPTIONS URI PREFIX LIST: the whole loop with OPTIONS on URI, whose
# objects the emulator lists (LIST KEY_PREFIX) under PREFIX.
loop() {
  local opts=$1 uri=$2 prefix=$3 list=$4 t0 out plan version
  t0=$(s3_now)
  client "$opts" "$DATA" write "$uri" "$ROWS" "$DIM" "$FRAGS" "$SEED" >/dev/null || s3_fail "writing $uri"
  s3_log "wrote $ROWS x $DIM in $FRAGS fragments to $uri: $(s3_elapsed "$t0") s"
  plan=$(client "$opts" "$TOOL" plan "$uri" --groups 4) || s3_fail "planning $uri"
  version=$(json_field "$plan" dataset_version)
  local groups=()
  while read -r g; do groups+=("$g"); done < <(grep -o '"fragments": \[[^]]*\]' <<<"$plan" | sed 's/.*\[\(.*\)\]/\1/; s/ //g')
  [ "${#groups[@]}-$version" = 4-1 ] || s3_fail "planning $uri gave ${#groups[@]} groups at version $version, not 4 at 1"
  t0=$(s3_now)
  client "$opts" "$TOOL" train "$uri" --column vec --type IVF_FLAT --partitions "$PARTS" --quiet \
    -o "$CLIENT/model.bin" >/dev/null || s3_fail "training on $uri"
  s3_log "trained the shared model: $(s3_elapsed "$t0") s"
  local pids=() uuids=() segs=() failed=0
  t0=$(s3_now)
  for g in 0 1 2 3; do
    uuids[g]=$(uuid)
    segs[g]=$CLIENT/seg-$g.bin
    client "$opts" "$TOOL" build "$uri" --column vec --model "$CLIENT/model.bin" --fragments "${groups[g]}" \
      --uuid "${uuids[g]}" --version "$version" --quiet -o "${segs[g]}" &
    pids[g]=$!
  done
  for g in 0 1 2 3; do wait "${pids[g]}" || failed=$((failed + 1)); done
  check "4 worker processes built their segments" test "$failed" -eq 0
  s3_log "4 segments built at once: $(s3_elapsed "$t0") s"
  t0=$(s3_now)
  out=$(client "$opts" "$TOOL" commit "$uri" --name vec_idx --column vec --job-id loop "${segs[@]}")
  s3_log "committed: $(s3_elapsed "$t0") s: $out"
  check "the commit made version 2" test "$(commit_answer "$out")" = 2-false
  out=$(client "$opts" "$TOOL" commit "$uri" --name vec_idx --column vec --job-id loop --attempt-id 2 "${segs[@]}")
  check "a retried commit is answered as already committed in version 2" test "$(commit_answer "$out")" = 2-true
  out=$(client "$opts" "$TOOL" coverage "$uri" --name vec_idx --json)
  check "coverage: 4 segments, every fragment indexed" test "$(coverage_answer "$out")" = 4-1
  check_segments_stored "$list" "$prefix" "${uuids[@]}"
  # Incomplete multipart uploads are listed on s3:// only: elsewhere the
  # cleanup says it did not look, and names the store's own cure.
  out=$(client "$opts" "$TOOL" cleanup "$uri" --older-than 3600 --delete-unverified 2>"$CLIENT/cleanup.err")
  check "cleanup on ${uri%%:*}:// reports uploads as not looked at (null), naming the lifecycle rule" \
    test "$(json_field "$out" uploads_aborted)" = null -a -n "$(grep 'lifecycle rule' "$CLIENT/cleanup.err" || true)"
}

case_gcs() {
  local t0
  t0=$(s3_now)
  gcs_start
  s3_log "fake-gcs-server up in $(s3_elapsed "$t0") s"
  local uri="gs://$BUCKET"
  loop "$GCS_OPENDAL" "$uri" "" gcs_list
  knn_check "through OpenDAL's client" "$GCS_OPENDAL" "$uri"
  knn_check "through the default client (object_store)" "$GCS_NATIVE" "$uri"
  local rc=0 err
  err=$(client "$GCS_NATIVE" "$DATA" write "gs://nested/xml/vectors.lance" 100 8 1 1 2>&1 >/dev/null) || rc=$?
  s3_log "a write through the default client: exit $rc: $err"
  check "fake-gcs-server refuses the default client's upload: LANCE_ERR_IO naming the PUT" \
    grep -q "(error 2): .*PUT http://127.0.0.1:4443/nested/xml.* 400 Bad Request" <<<"$err"
  client "$GCS_OPENDAL" "$DATA" write "gs://nested/deep/vectors.lance" 100 8 1 1 >/dev/null ||
    s3_fail "writing gs://nested/deep/vectors.lance through OpenDAL"
  check "OpenDAL's client writes gs://nested/deep/vectors.lance under deep/vectors.lance/deep/vectors.lance/" \
    test -n "$(gcs_list nested deep/vectors.lance/deep/vectors.lance/_versions/)" -a \
    -z "$(gcs_list nested deep/vectors.lance/_versions/)"
}

case_azure() {
  local t0
  t0=$(s3_now)
  azure_start
  s3_log "Azurite up in $(s3_elapsed "$t0") s"
  local uri="az://$BUCKET/loop/vectors.lance"
  loop "$AZ_OPTIONS" "$uri" loop/vectors.lance/ azure_list
  knn_check "with account, key and endpoint" "$AZ_OPTIONS" "$uri"
  knn_check "with the emulator switch" "$AZ_EMULATOR" "$uri"
  knn_check "through abfss://" "$AZ_OPTIONS" "abfss://$BUCKET@$AZ_ACCOUNT.dfs.core.windows.net/loop/vectors.lance"
  local err
  err=$(client "use_opendal=true,$AZ_OPTIONS" "$DATA" rows "$uri" 2>&1 >/dev/null) || true
  s3_log "an open through OpenDAL's client: $(head -c 300 <<<"$err" | tr '\n' ' ')"
  check "OpenDAL's client cannot be built on az://: LANCE_ERR_INVALID_ARGUMENT" \
    grep -q "(error 1): .*Failed to create Azure Blob operator" <<<"$err"
}

T_START=$(s3_now)
case "$STORE" in
  gcs | azure) "case_$STORE" ;;
  *) s3_fail "unknown store $STORE (gcs or azure)" ;;
esac
check "no client holds a dataset file locally" \
  test -z "$(find "$CLIENT" -name '*.lance' -o -name '*.manifest' -o -name '*.idx')"
echo "$STORE: $checks checks, $failures failed, $(s3_elapsed "$T_START") s in all"
echo "$((checks - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
