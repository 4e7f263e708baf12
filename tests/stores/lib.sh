# Test hosts and an object store for the object-storage tests (issue 16).
# Sourced by tests/stores/*.sh, bench/s3_bench.sh and bench/data_cache_bench.sh; needs root.
#
# Hosts are Linux network namespaces this script creates: a "switch"
# namespace holding a bridge, and one namespace per host joined to it by a
# veth pair.  Addresses exist only inside those namespaces (198.18.x.0/24,
# the range set aside for network benchmarks; no route leaves them, and
# the machine's own namespace gets no interface at all), so no packet of a
# test ever leaves them.  The object store is a SeaweedFS server (master,
# volume, filer and S3 gateway in one `weed server` process) on host
# "store", its data in the test's temporary directory.  s3_cleanup (run on
# EXIT, also after a failure) stops every process inside the namespaces,
# deletes them and the directory.
#
#   s3_hosts HOST...        creates the namespaces (store first)
#   s3_start / s3_stop      starts (and waits for) / stops the object store
#   s3_gateway_kill / s3_gateway_start   with S3_SPLIT_GATEWAY=1 set before
#                           s3_start: SIGKILLs / restarts (and waits for) the
#                           store's S3 gateway alone (see s3_start)
#   on HOST CMD...          runs CMD on HOST with the storage options set
#   s3_ip HOST              HOST's address
#   s3_limit_uplink HOST RATE   shapes what HOST sends to RATE (tc tbf, e.g. 8mbit)
#   s3_list PREFIX          the bucket's keys under PREFIX, one a line
#   s3_list_uploads PREFIX  its incomplete multipart uploads under PREFIX
#   check DESCRIPTION CMD...   an assertion, counted in $checks and $failures
#   s3_put_if_absent KEY FILE [HOST]   PUT with If-None-Match: *; prints the HTTP status
#   stop_process VAR TENTHS     stops the background process whose pid VAR holds
#   uuid / dashed_uuid HEX      a random UUID (32 hex digits) / its 8-4-4-4-12 form
#   commit_answer OUT / coverage_answer OUT   the tool's commit / coverage answer, short
#   check_segments_stored LIST PREFIX UUID...   each segment's files are in the store

set -euo pipefail

S3_WEED=${LANCE_C_WEED:-$HOME/.cache/lance-c/bin/weed}
S3_KEY=lancetestkey
S3_SECRET=lancetestsecret0123456789
S3_REGION=us-east-1
S3_BUCKET=lance
S3_PORT=8333
# One /24 per test run, from the pid, so two runs never share addresses.
S3_NET=198.18.$(( $$ % 250 + 1 ))
S3_TAG=lcs$$
S3_WORK=$(mktemp -d "${TMPDIR:-/tmp}/lance-s3.XXXXXX")
S3_HOSTS=()
S3_WEED_PID=
S3_GW_PID=
S3_ENDPOINT=

# check DESCRIPTION COMMAND...: runs COMMAND and prints "ok    DESCRIPTION"
# or, on failure, "FAIL  DESCRIPTION" on stderr; counts both (checks,
# failures) for the test's closing line.
checks=0
failures=0
check() {
  local what=$1
  shift
  checks=$((checks + 1))
  if "$@"; then
    echo "ok    $what"
  else
    echo "FAIL  $what" >&2
    failures=$((failures + 1))
  fi
}

s3_fail() {
  echo "FAIL: $*" >&2
  exit 1
}

s3_log() { echo "[$(date +%T)] $*"; }

# Seconds since the epoch with milliseconds.
s3_now() { date +%s.%N | cut -c1-14; }
s3_elapsed() { awk -v a="$1" -v b="$(s3_now)" 'BEGIN { printf "%.2f", b - a }'; }

s3_ns() { echo "$S3_TAG-$1"; }

s3_cleanup() {
  local rc=$?
  set +e
  s3_stop >/dev/null 2>&1
  for h in "${S3_HOSTS[@]}" switch; do
    local ns
    ns=$(s3_ns "$h")
    ip netns list 2>/dev/null | grep -qw "^$ns" || continue
    local pids
    pids=$(ip netns pids "$ns" 2>/dev/null)
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null
    ip netns del "$ns" 2>/dev/null
  done
  if [ $rc -ne 0 ] && [ -f "$S3_WORK/weed.log" ]; then
    echo "--- last lines of the object store's log ---" >&2
    tail -n 30 "$S3_WORK/weed.log" >&2
  fi
  rm -rf "$S3_WORK"
  exit $rc
}
trap s3_cleanup EXIT
trap 'exit 130' INT TERM

s3_require() {
  [ "$(id -u)" -eq 0 ] || s3_fail "these tests create network namespaces and need root"
  command -v ip >/dev/null || s3_fail "ip (iproute2) is missing: run scripts/setup.sh"
  command -v curl >/dev/null || s3_fail "curl is missing: run scripts/setup.sh"
  [ -x "$S3_WEED" ] || s3_fail "SeaweedFS ($S3_WEED) is missing: run scripts/setup.sh"
}

# Namespaces a run killed without its EXIT trap (SIGKILL, a ctest timeout)
# left behind: their processes stopped and the namespaces deleted.
s3_remove_stale() {
  local ns pid
  for ns in $(ip netns list 2>/dev/null | sed -n 's/^\(lcs[0-9]*-[a-z0-9]*\).*/\1/p'); do
    pid=${ns#lcs}
    pid=${pid%%-*}
    kill -0 "$pid" 2>/dev/null && continue
    local pids
    pids=$(ip netns pids "$ns" 2>/dev/null)
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null
    ip netns del "$ns" 2>/dev/null || true
  done
}

# s3_hosts store coord w1 ...: host i gets $S3_NET.(i+1); "store" must come first.
s3_hosts() {
  s3_require
  s3_remove_stale
  local sw
  sw=$(s3_ns switch)
  ip netns add "$sw"
  S3_HOSTS=()
  ip -n "$sw" link add br0 type bridge
  ip -n "$sw" link set br0 up
  local i=0
  for h in "$@"; do
    local ns=$(s3_ns "$h")
    S3_HOSTS+=("$h")
    ip netns add "$ns"
    ip link add "${S3_TAG}p$i" netns "$sw" type veth peer name eth0 netns "$ns"
    ip -n "$sw" link set "${S3_TAG}p$i" master br0 up
    ip -n "$ns" addr add "$S3_NET.$((i + 1))/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    mkdir -p "$S3_WORK/hosts/$h/tmp"
    i=$((i + 1))
  done
  S3_ENDPOINT="http://$S3_NET.1:$S3_PORT"
  S3_OPTIONS="aws_endpoint=$S3_ENDPOINT,aws_region=$S3_REGION,aws_access_key_id=$S3_KEY"
  S3_OPTIONS+=",aws_secret_access_key=$S3_SECRET,allow_http=true,aws_virtual_hosted_style_request=false"
}

# A slow uplink: HOST's sends (its uploads to the store) leave at RATE at
# most; what it receives is not shaped.  A token bucket on the host's end
# of its veth; fails the test when the kernel refuses it.
s3_limit_uplink() {
  ip netns exec "$(s3_ns "$1")" tc qdisc add dev eth0 root tbf rate "$2" burst 16kb latency 2s ||
    s3_fail "cannot shape $1's uplink (tc tbf)"
}

s3_ip() {
  local i
  for i in "${!S3_HOSTS[@]}"; do
    [ "${S3_HOSTS[i]}" = "$1" ] && { echo "$S3_NET.$((i + 1))"; return; }
  done
  s3_fail "no host $1"
}

# The host's own directory: what a process there keeps locally (the model it
# was sent, the segment it hands back, its TMPDIR).
s3_dir() { echo "$S3_WORK/hosts/$1"; }

on() {
  local h=$1
  shift
  ip netns exec "$(s3_ns "$h")" env TMPDIR="$(s3_dir "$h")/tmp" LANCE_STORAGE_OPTIONS="$S3_OPTIONS" "$@"
}

# A signed S3 request from host "store"'s neighbour namespace (the first
# non-store host), so the request crosses the bridge like every other.
s3_curl() {
  local from=${S3_CURL_HOST:-${S3_HOSTS[1]}}
  ip netns exec "$(s3_ns "$from")" curl -sS --max-time 30 --aws-sigv4 "aws:amz:$S3_REGION:s3" \
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" \
    --user "$S3_KEY:$S3_SECRET" "$@"
}

S3_START_SECONDS=
# With S3_SPLIT_GATEWAY=1 the S3 gateway runs as a process of its own
# (`weed s3`) beside a `weed server` holding master, volume and filer, so a
# test can take the store's S3 service away and bring it back
# (s3_gateway_kill, s3_gateway_start) in a fraction of a second, the data
# and the filer's metadata (multipart uploads in progress too) kept: a whole
# server needs 16-33 s to take writes again after a restart (its master's
# leader election), too long to repeat; and it stops at once (its volume
# server's 10 s grace before stopping, -volume.preStopSeconds, is 0).
s3_start() {
  local data=$S3_WORK/weed-data
  mkdir -p "$data"
  cat >"$S3_WORK/s3.json" <<EOF
{"identities": [{"name": "lance-test", "credentials": [{"accessKey": "$S3_KEY", "secretKey": "$S3_SECRET"}],
  "actions": ["Admin", "Read", "List", "Tagging", "Write"]}]}
EOF
  local t0
  t0=$(s3_now)
  # weed puts its gRPC sockets at fixed paths in /tmp, which every namespace
  # shares: the tests run one at a time (ctest RESOURCE_LOCK), and a socket
  # a killed run left behind would take the new server's place.
  rm -f /tmp/seaweedfs-{master,volume,filer,s3}-grpc-{19333,18080,18888,18333}.sock
  if [ "${S3_SPLIT_GATEWAY:-0}" = 1 ]; then
    ip netns exec "$(s3_ns store)" "$S3_WEED" server -ip="$S3_NET.1" -dir="$data" -filer \
      -master.telemetry=false -master.volumeSizeLimitMB=256 -volume.max=0 -volume.preStopSeconds=0 \
      -filer.localSocket="$S3_WORK/filer.sock" >>"$S3_WORK/weed.log" 2>&1 &
    S3_WEED_PID=$!
    s3_gateway_launch
  else
    ip netns exec "$(s3_ns store)" "$S3_WEED" server -ip="$S3_NET.1" -dir="$data" -filer -s3 \
      -s3.port=$S3_PORT -s3.config="$S3_WORK/s3.json" -s3.port.iceberg=0 -s3.port.lance=0 \
      -master.telemetry=false -master.volumeSizeLimitMB=256 -volume.max=0 \
      -filer.localSocket="$S3_WORK/filer.sock" -s3.localSocket="$S3_WORK/s3.sock" \
      >>"$S3_WORK/weed.log" 2>&1 &
    S3_WEED_PID=$!
  fi
  # Ready when an authenticated request for the bucket is answered: create it
  # (200) or find it there after a restart (409).
  local code=000 deadline=$((SECONDS + 60))
  while [ $SECONDS -lt $deadline ]; do
    kill -0 "$S3_WEED_PID" 2>/dev/null || s3_fail "the object store exited at start (see its log)"
    [ -z "$S3_GW_PID" ] || kill -0 "$S3_GW_PID" 2>/dev/null || s3_fail "the S3 gateway exited at start (see its log)"
    code=$(s3_curl --max-time 5 -o /dev/null -w '%{http_code}' -X PUT "$S3_ENDPOINT/$S3_BUCKET" 2>/dev/null || true)
    [ "$code" = 200 ] || [ "$code" = 409 ] && break
    sleep 0.1
  done
  [ "$code" = 200 ] || [ "$code" = 409 ] || s3_fail "the object store did not answer within 60 s (last status $code)"
  # The volume server takes a moment longer than the gateway: wait until an
  # object can be written and read back.
  echo ready >"$S3_WORK/probe"
  deadline=$((SECONDS + 60))
  while [ $SECONDS -lt $deadline ]; do
    code=$(s3_curl --max-time 5 -o /dev/null -w '%{http_code}' -X PUT --data-binary @"$S3_WORK/probe" \
      "$S3_ENDPOINT/$S3_BUCKET/_probe" 2>/dev/null || true)
    [ "$code" = 200 ] && break
    sleep 0.1
  done
  [ "$code" = 200 ] || s3_fail "the object store does not take writes within 60 s (last status $code)"
  s3_curl -o /dev/null -X DELETE "$S3_ENDPOINT/$S3_BUCKET/_probe"
  S3_START_SECONDS=$(s3_elapsed "$t0")
}

s3_gateway_launch() {
  rm -f /tmp/seaweedfs-s3-grpc-18333.sock
  ip netns exec "$(s3_ns store)" "$S3_WEED" s3 -filer="$S3_NET.1:8888" -ip="$S3_NET.1" -port=$S3_PORT \
    -config="$S3_WORK/s3.json" -port.iceberg=0 -port.lance=0 -localSocket="$S3_WORK/s3.sock" \
    >>"$S3_WORK/weed.log" 2>&1 &
  S3_GW_PID=$!
}

# The gateway gone at once: connections in flight are reset, new ones refused.
s3_gateway_kill() {
  [ -n "$S3_GW_PID" ] || s3_fail "s3_gateway_kill needs S3_SPLIT_GATEWAY=1 and a running gateway"
  kill -9 "$S3_GW_PID" 2>/dev/null || true
  wait "$S3_GW_PID" 2>/dev/null || true
  S3_GW_PID=
}

# Restarts the gateway and waits (30 s at most) until it lists the bucket.
s3_gateway_start() {
  s3_gateway_launch
  local code=000 deadline=$((SECONDS + 30))
  while [ $SECONDS -lt $deadline ]; do
    kill -0 "$S3_GW_PID" 2>/dev/null || s3_fail "the S3 gateway exited at its restart (see its log)"
    code=$(s3_curl --max-time 5 -o /dev/null -w '%{http_code}' "$S3_ENDPOINT/$S3_BUCKET?list-type=2&max-keys=1" 2>/dev/null || true)
    [ "$code" = 200 ] && return 0
    sleep 0.05
  done
  s3_fail "the S3 gateway did not answer within 30 s of its restart (last status $code)"
}

# stop_process VAR TENTHS: stops the background process whose pid the
# variable VAR holds (nothing when it is empty): SIGTERM, up to TENTHS
# tenths of a second to exit, then SIGKILL; reaped, and VAR emptied.
stop_process() {
  local pid=${!1}
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 "$2"); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  printf -v "$1" '%s' ""
}

s3_stop() {
  if [ -n "$S3_GW_PID" ]; then
    kill -TERM "$S3_GW_PID" 2>/dev/null || true
    wait "$S3_GW_PID" 2>/dev/null || true
    S3_GW_PID=
  fi
  stop_process S3_WEED_PID 100
}

# RFC 3986 percent-encoding of everything but the unreserved characters, as
# the S3 signature's canonical query string wants it.
s3_urlencode() {
  local s=$1 out="" c i
  for ((i = 0; i < ${#s}; i++)); do
    c=${s:i:1}
    case $c in
      [A-Za-z0-9._~-]) out+=$c ;;
      *) out+=$(printf '%%%02X' "'$c") ;;
    esac
  done
  echo "$out"
}

# Every key of the bucket under PREFIX (ListObjectsV2, all pages).  The
# query is written out already encoded and in sorted order: curl's signer
# (7.88) signs it as it is.
s3_list() {
  local prefix=$1 token="" page query
  while :; do
    query="list-type=2&max-keys=${S3_LIST_PAGE:-1000}&prefix=$(s3_urlencode "$prefix")"
    [ -n "$token" ] && query="continuation-token=$(s3_urlencode "$token")&$query"
    page=$(s3_curl --fail "$S3_ENDPOINT/$S3_BUCKET?$query") || s3_fail "listing s3://$S3_BUCKET/$prefix failed"
    grep -o '<Key>[^<]*</Key>' <<<"$page" | sed 's/<Key>\(.*\)<\/Key>/\1/' || true
    grep -q '<IsTruncated>true</IsTruncated>' <<<"$page" || break
    token=$(grep -o '<NextContinuationToken>[^<]*' <<<"$page" | sed 's/<NextContinuationToken>//')
  done
}

# The incomplete multipart uploads of the bucket under PREFIX
# (ListMultipartUploads, one page: the tests make a handful), as "KEY
# UPLOADID" lines.
s3_list_uploads() {
  local page
  page=$(s3_curl --fail "$S3_ENDPOINT/$S3_BUCKET?prefix=$(s3_urlencode "$1")&uploads=") ||
    s3_fail "listing the uploads under s3://$S3_BUCKET/$1 failed"
  grep -o '<Upload>.*</Upload>' <<<"$page" | sed 's/<\/Upload>/&\n/g' |
    sed -n 's/.*<Key>\([^<]*\)<\/Key>.*<UploadId>\([^<]*\)<\/UploadId>.*/\1 \2/p' || true
}

s3_put_if_absent() {
  local key=$1 file=$2
  S3_CURL_HOST=${3:-} s3_curl -o /dev/null -w '%{http_code}' -X PUT -H 'If-None-Match: *' \
    --data-binary @"$file" "$S3_ENDPOINT/$S3_BUCKET/$key"
}

# JSON field of a one-line JSON object (numbers and booleans).
json_field() { sed -n "s/.*\"$2\": *\([^,}]*\).*/\1/p" <<<"$1"; }

# commit_answer OUT: "<version>-<already_committed>" of the tool's commit answer OUT.
commit_answer() { echo "$(json_field "$1" version)-$(json_field "$1" already_committed)"; }
# coverage_answer OUT: "<segments>-<1 when no fragment is unindexed, else 0>"
# of the tool's `coverage --json` answer OUT.
coverage_answer() { echo "$(grep -o '"uuid"' <<<"$1" | wc -l)-$(grep -c '"unindexed_fragments": *\[\]' <<<"$1")"; }

# uuid: a random UUID as 32 hex digits.
uuid() { tr -d - </proc/sys/kernel/random/uuid; }
# dashed_uuid HEX: the 8-4-4-4-12 form, as Lance names a segment's directory.
dashed_uuid() { sed 's/\(........\)\(....\)\(....\)\(....\)\(............\)/\1-\2-\3-\4-\5/' <<<"$1"; }

# check_segments_stored LIST PREFIX UUID...: the command LIST (LIST KEY_PREFIX
# prints the keys under it) lists files of each segment UUID (32 hex
# digits) under PREFIX_indices/<its dashed UUID>/.
check_segments_stored() {
  local list=$1 prefix=$2 g=0 u dashed
  shift 2
  for u in "$@"; do
    dashed=$(dashed_uuid "$u")
    check "segment $g's files are in the store under ${prefix}_indices/$dashed/" \
      test -n "$("$list" "${prefix}_indices/$dashed/")"
    g=$((g + 1))
  done
}
