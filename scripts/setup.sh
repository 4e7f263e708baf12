#!/usr/bin/env bash
# Installs what building and testing lance-c needs, only what is missing.
# Idempotent; run as root (or with sudo available) on Debian.
#   setup.sh [--build | --test | --check]
# --build: what the build needs (its Debian packages, the Rust toolchain
# check).  --test: what only the tests need (their Debian packages, pylance,
# the Maven artifacts, the storage emulators), which scripts/test.sh
# installs while cargo builds.  Without either: both.  --test builds two of
# the emulators with Go 1.26 or newer, which it does not install
# (docs/building.md "Prerequisites"); as a user other than root it leaves the
# emulators out (below).
# Every phase first checks what it cannot install itself, and that it can
# install the rest, before it installs, downloads or builds anything; it
# stops naming each missing prerequisite and how to get it.  --check runs
# only those checks, for both phases (scripts/test.sh runs it first, so that
# a missing prerequisite stops it in seconds rather than after the build).
set -euo pipefail
phase=${1:-all}
case $phase in
  all | --build | --test | --check) ;;
  *) echo "usage: setup.sh [--build | --test | --check]" >&2; exit 2 ;;
esac
# The storage emulators' pinned versions (built below; the preflight asks
# whether they must be, which needs Go), and where they go.
seaweedfs_module=github.com/seaweedfs/seaweedfs
seaweedfs_version=v0.0.0-20261109003541-7506e5f91cd6
weed_stamp="$seaweedfs_version (test plugins only)"
weed_dir=$HOME/.cache/lance-c/bin
fake_gcs_module=github.com/fsouza/fake-gcs-server
fake_gcs_version=v1.56.1
venv=${LANCE_C_VENV:-$HOME/.cache/lance-c/venv}
# Runs a command with its output set aside, printed only if it fails (Go
# prints a line for every module it downloads).
quiet() {
  local log rc=0
  log=$(mktemp)
  "$@" >"$log" 2>&1 || rc=$?
  [ "$rc" -eq 0 ] || cat "$log" >&2
  rm -f "$log"
  return "$rc"
}
need=()
if [ "$phase" != --test ]; then
  command -v protoc >/dev/null || need+=(protobuf-compiler)
  command -v cmake >/dev/null || need+=(cmake)
  command -v ninja >/dev/null || need+=(ninja-build)
  { command -v cc && command -v c++ && command -v make; } >/dev/null || need+=(build-essential)
  command -v pkg-config >/dev/null || need+=(pkg-config)
  command -v nm >/dev/null || need+=(binutils)
  # scripts/package.sh compresses with xz.
  command -v xz >/dev/null || need+=(xz-utils)
fi
if [ "$phase" != --build ]; then
  command -v valgrind >/dev/null || need+=(valgrind) # the failure suite's memcheck tests
  [ -x /usr/bin/time ] || need+=(time) # the bench scripts' smoke tests measure peak memory with it
  # The formatting check (scripts/check_format.sh): clang-format 14, Debian
  # 12's, which .clang-format is tuned for (installed as clang-format-14,
  # with clang-format naming it).
  command -v clang-format-14 >/dev/null || command -v clang-format >/dev/null || need+=(clang-format)
  # test_link_static links an engine's own zstd and lz4 (static libraries)
  # next to lance-c's archive.
  dpkg -s libzstd-dev >/dev/null 2>&1 || need+=(libzstd-dev)
  dpkg -s liblz4-dev >/dev/null 2>&1 || need+=(liblz4-dev)
  # test_cpu_level runs the library on an emulated older CPU (x86-64 hosts).
  [ "$(uname -m)" != x86_64 ] || command -v qemu-x86_64 >/dev/null || need+=(qemu-user)
  # The object-storage tests (tests/stores/): network namespaces as hosts, and
  # signed S3 requests to list the bucket; tc shapes a host's uplink.
  { command -v ip && command -v tc; } >/dev/null || need+=(iproute2)
  command -v curl >/dev/null || need+=(curl)
  # The Azure Blob test (tests/stores/): Azurite runs on Node.js and comes from
  # npm; openssl signs the request that creates its container.
  command -v npm >/dev/null || need+=(npm)
  command -v openssl >/dev/null || need+=(openssl)
  # The Java coordinator's test (java/): JDK 17 or newer, and Maven.
  java_major=$( (javac -version 2>&1 || true) | sed -n 's/^javac \([0-9]*\).*/\1/p')
  [ "${java_major:-0}" -ge 17 ] 2>/dev/null || need+=(openjdk-17-jdk-headless)
  command -v mvn >/dev/null || need+=(maven)
  # pylance's virtual environment (below), when there is none yet: Debian's
  # python3 makes one only with python3-venv (ensurepip).
  if [ ! -x "$venv/bin/python" ]; then
    command -v python3 >/dev/null || need+=(python3)
    python3 -c 'import ensurepip, venv' 2>/dev/null || need+=(python3-venv)
  fi
fi

# The Go toolchain the storage emulators are built with: go on PATH, else
# /usr/local/go (where Go's release archive is unpacked), and its minor
# version (empty when there is none).  No script installs it (Debian 12's
# golang-go is Go 1.19).
go_bin=$(command -v go || echo /usr/local/go/bin/go)
go_minor() { ("$go_bin" env GOVERSION 2>/dev/null || true) | sed -n 's/^go1\.\([0-9]*\).*/\1/p'; }
# Whether this set-up builds the emulators: they serve only tests that need
# root, so as another user only with LANCE_C_SETUP_STORES=1 (below).
stores=false
if [ "$(id -u)" -eq 0 ] || [ "${LANCE_C_SETUP_STORES:-0}" = 1 ]; then stores=true; fi

# ---- Preflight: what cannot be installed here, and whether the rest can.
problems=()
if [ ${#need[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null; then
    problems+=("the Debian packages ${need[*]} are missing and there is no apt-get to install them: install them (or their equivalents) yourself")
  elif [ "$(id -u)" -ne 0 ] && ! sudo -n true 2>/dev/null && ! { [ -t 0 ] && command -v sudo >/dev/null; }; then
    problems+=("the Debian packages ${need[*]} are missing and installing them needs root: run this as root, or as a user who may use sudo")
  fi
fi
if [ "$phase" != --test ]; then
  cargo_bin=$(command -v cargo || echo "$HOME/.cargo/bin/cargo")
  cargo_minor=$( ("$cargo_bin" -V 2>/dev/null || true) | sed -n 's/^cargo 1\.\([0-9]*\).*/\1/p')
  [ "${cargo_minor:-0}" -ge 95 ] ||
    problems+=("a Rust toolchain, cargo 1.95 or newer (found: ${cargo_minor:+1.}${cargo_minor:-none}): install it with rustup, which no script here runs")
fi
if [ "$phase" != --build ] && $stores; then
  if [ ! -x "$weed_dir/weed" ] || [ "$(cat "$weed_dir/weed.version" 2>/dev/null)" != "$weed_stamp" ] ||
     [ ! -x "$weed_dir/fake-gcs-server" ] ||
     [ "$(cat "$weed_dir/fake-gcs-server.version" 2>/dev/null)" != "$fake_gcs_version" ]; then
    minor=$(go_minor)
    [ "${minor:-0}" -ge 26 ] ||
      problems+=("Go 1.26 or newer, to build the object-storage tests' emulators (found: ${minor:+1.}${minor:-none}): unpack Go's release archive for this system at /usr/local/go, or put its go on PATH")
  fi
fi
# The tests that need root (ctest label needs-root) make network and mount
# namespaces (ip netns, unshare --net --mount, tmpfs mounts): a container
# without those privileges runs as root but cannot.
if [ "$phase" != --build ] && [ "$(id -u)" -eq 0 ]; then
  scratch=$(mktemp -d)
  unshare --net --mount --propagation private -- mount -t tmpfs tmpfs "$scratch" 2>"$scratch.err" ||
    problems+=("network and mount namespaces (unshare --net --mount, then a tmpfs mount: $(head -c 200 "$scratch.err")): the tests labelled needs-root need them; run on a host or VM that allows them (a container needs --privileged), or run scripts/test.sh -LE needs-root as a user other than root")
  if command -v ip >/dev/null && ! { ip netns add "lance-c-check-$$" && ip netns del "lance-c-check-$$"; } 2>/dev/null; then
    problems+=("ip netns add (the object-store tests' hosts): not allowed here; run on a host or VM that allows it")
  fi
  rm -rf "$scratch" "$scratch.err"
fi
if [ ${#problems[@]} -gt 0 ]; then
  echo "setup: cannot go on; missing:" >&2
  printf '  - %s\n' "${problems[@]}" >&2
  exit 1
fi
[ "$phase" != --check ] || exit 0

if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  echo "setup: installing ${need[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
[ "$phase" != --build ] || exit 0
# The cross-SDK tests run against pylance of the Lance version the library
# pins, in a virtual environment of their own; the Ray cluster test
# (test_s3_ray) and the Ray example use Ray from the same environment.
pylance_version=14.0.2
ray_version=2.60.0
# The bench suite's smoke test (test_bench_smoke) also plots with matplotlib
# and embeds text with the model inside the wordllama package.
wordllama_version=0.4.0.post1
if ! "$venv/bin/python" -c "import lance, numpy, ray, matplotlib, wordllama, sys
from importlib.metadata import version
sys.exit(lance.__version__ != '$pylance_version' or ray.__version__ != '$ray_version'
         or version('wordllama') != '$wordllama_version')" 2>/dev/null; then
  python3 -c 'import ensurepip, venv' 2>/dev/null ||
    { echo "setup: $(command -v python3 || echo python3) cannot make a virtual environment for the cross-SDK tests (no venv or ensurepip module; on Debian, the python3-venv package)" >&2
      exit 1; }
  echo "setup: installing pylance $pylance_version and Ray $ray_version into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "pylance==$pylance_version" numpy "ray==$ray_version" matplotlib \
    "wordllama==$wordllama_version"
fi
# FAISS's environment for bench/faiss_bench.sh (its smoke test,
# test_bench_smoke_faiss, then runs without the network): faiss-cpu, numpy
# and pylance at the versions that script pins, in
# ~/.cache/lance-c/faiss-venv; nothing when it is there.
bash "$(dirname "$0")/../bench/faiss_bench.sh" --setup
# The Java coordinator's Maven artifacts (the Lance Java SDK and its
# dependencies, JUnit, the plugins a test run loads), fetched once into
# ~/.m2 so that ctest runs Maven offline.  A stamp per pom content says they
# are complete; a short run of the pure-Java tests fetches what a run loads.
# The repository is named explicitly, here and in ctest's Maven command
# (tests/conformance/CMakeLists.txt): Maven's default follows Java's user.home, which is the
# account's home directory, not $HOME, when the two differ.
root=$(cd "$(dirname "$0")/.." && pwd)
m2=$HOME/.m2
stamp="$m2/repository/.lance-c-java-$(sha256sum "$root/java/pom.xml" | cut -c1-16).ok"
if [ ! -f "$stamp" ]; then
  echo "setup: fetching the Java coordinator's Maven artifacts into $m2"
  scratch=$(mktemp -d)
  mvn -B -q -f "$root/java/pom.xml" -Dmaven.repo.local="$m2/repository" dependency:go-offline test \
      -Dtest='RoaringBitmapsTest' -Dlance.java.build.dir="$scratch" >"$scratch.log" 2>&1 ||
    { cat "$scratch.log" >&2; echo "setup: fetching the Maven artifacts failed" >&2; exit 1; }
  rm -rf "$scratch" "$scratch.log"
  touch "$stamp"
fi
# The storage emulators below serve only tests that need root (network
# namespaces; ctest label needs-root), so another user's set-up leaves them
# out (and needs no Go or npm), unless LANCE_C_SETUP_STORES=1.
if ! $stores; then
  echo "setup: not root: the object-store emulators (SeaweedFS, fake-gcs-server, Azurite) are left out, since only tests that need root use them (ctest -LE needs-root runs the others); LANCE_C_SETUP_STORES=1 sets them up anyway"
  exit 0
fi
# The object-storage tests' S3 server: SeaweedFS, built from its Go module
# at one pinned version into $HOME/.cache/lance-c/bin (once; a stamp names the
# version built).  `go install weed@VERSION` refuses the module (its go.mod has a
# replace directive), so the module is downloaded and its weed command built
# from a copy of it (below).  Needs Go 1.26 or newer (the module's go.mod asks
# for it; the preflight checked it).
if [ ! -x "$weed_dir/weed" ] || [ "$(cat "$weed_dir/weed.version" 2>/dev/null)" != "$weed_stamp" ]; then
  go=$go_bin
  echo "setup: building SeaweedFS $seaweedfs_version into $weed_dir"
  started=$(date +%s)
  mkdir -p "$weed_dir"
  src=$("$go" mod download -json "$seaweedfs_module@$seaweedfs_version" |
        sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -d "$src" ] || { echo "setup: downloading $seaweedfs_module@$seaweedfs_version failed" >&2; exit 1; }
  # Built from a copy without the plugins the tests never configure (filer
  # stores other than its default leveldb2, replication sinks, notification
  # queues, cloud KMS, the Postgres credential store), whose SDKs and
  # database clients no test needs: 230 s instead of 272 s from empty Go
  # caches (docs/object-storage.md).
  scratch=$(mktemp -d)
  cp -r "$src/." "$scratch"
  chmod -R u+w "$scratch"
  plugins='filer/(arangodb|cassandra2?|elastic/v7|etcd|foundationdb|hbase|mongodb|mysql2?|postgres2?|redis[23]?|sqlite|tarantool|tikv|ydb)'
  plugins+='|replication/sink/(azuresink|b2sink|gcssink|s3sink)|notification/(aws_sqs|gocdk_pub_sub|google_pub_sub|kafka)'
  plugins+='|kms/(aws|gcp|openbao)|credential/postgres'
  grep -rlE --include='*.go' "^[[:space:]]*_ \"$seaweedfs_module/weed/($plugins)\"" "$scratch/weed" |
    xargs sed -i -E "\#^[[:space:]]*_ \"$seaweedfs_module/weed/($plugins)\"#d"
  (cd "$scratch" && quiet env GOTOOLCHAIN=local "$go" build -o "$weed_dir/weed.tmp" ./weed)
  rm -rf "$scratch"
  mv "$weed_dir/weed.tmp" "$weed_dir/weed"
  echo "$weed_stamp" >"$weed_dir/weed.version"
  echo "setup: SeaweedFS built in $(( $(date +%s) - started )) s"
fi
# The Google Cloud Storage emulator of test_gcs_loop (tests/stores/):
# fake-gcs-server, built from its Go module at one pinned version into the
# same directory (once; a stamp names the version built).
if [ ! -x "$weed_dir/fake-gcs-server" ] ||
   [ "$(cat "$weed_dir/fake-gcs-server.version" 2>/dev/null)" != "$fake_gcs_version" ]; then
  go=$go_bin
  echo "setup: building fake-gcs-server $fake_gcs_version into $weed_dir"
  started=$(date +%s)
  scratch=$(mktemp -d)
  quiet env GOBIN="$scratch" GOTOOLCHAIN=local "$go" install "$fake_gcs_module@$fake_gcs_version"
  mkdir -p "$weed_dir"
  mv "$scratch/fake-gcs-server" "$weed_dir/fake-gcs-server"
  rm -rf "$scratch"
  echo "$fake_gcs_version" >"$weed_dir/fake-gcs-server.version"
  echo "setup: fake-gcs-server built in $(( $(date +%s) - started )) s"
fi
# The Azure Blob emulator of test_azure_loop: Azurite from npm at one pinned
# version (3.35.0 is the last that runs on Node.js older than 21), installed
# into its own directory (once; a stamp names the version installed).
azurite_version=3.35.0
azurite_dir=$HOME/.cache/lance-c/azurite
if [ ! -x "$azurite_dir/node_modules/.bin/azurite-blob" ] ||
   [ "$(cat "$azurite_dir/azurite.version" 2>/dev/null)" != "$azurite_version" ]; then
  echo "setup: installing Azurite $azurite_version into $azurite_dir"
  started=$(date +%s)
  mkdir -p "$azurite_dir"
  npm install --prefix "$azurite_dir" --no-audit --no-fund --omit=dev --loglevel=error \
    "azurite@$azurite_version" >/dev/null
  echo "$azurite_version" >"$azurite_dir/azurite.version"
  echo "setup: Azurite installed in $(( $(date +%s) - started )) s"
fi
