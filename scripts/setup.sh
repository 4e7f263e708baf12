#!/usr/bin/env bash
# Installs what building and testing lance-c needs, only what is missing.
# Idempotent; run as root (or with sudo available) on Debian.
set -euo pipefail
need=()
command -v protoc >/dev/null || need+=(protobuf-compiler)
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
command -v cc >/dev/null || need+=(build-essential)
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v nm >/dev/null || need+=(binutils)
command -v valgrind >/dev/null || need+=(valgrind) # the failure suite's memcheck tests
# The Java coordinator's test (java/): JDK 17 or newer, and Maven.
java_major=$( (javac -version 2>&1 || true) | sed -n 's/^javac \([0-9]*\).*/\1/p')
[ "${java_major:-0}" -ge 17 ] 2>/dev/null || need+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null || need+=(maven)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  echo "setup: installing ${need[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! command -v cargo >/dev/null && [ ! -x "$HOME/.cargo/bin/cargo" ]; then
  echo "setup: a Rust toolchain (cargo 1.94 or newer) is required; install it with rustup" >&2
  exit 1
fi
# The cross-SDK tests run against pylance of the Lance version the library
# pins, in a virtual environment of their own.
venv=${LANCE_C_VENV:-$HOME/.cache/lance-c/venv}
pylance_version=14.0.2
if ! "$venv/bin/python" -c "import lance, numpy, sys; sys.exit(lance.__version__ != '$pylance_version')" 2>/dev/null; then
  command -v python3 >/dev/null || { echo "setup: python3 is required for the cross-SDK tests" >&2; exit 1; }
  echo "setup: installing pylance $pylance_version into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "pylance==$pylance_version" numpy
fi
# The Java coordinator's Maven artifacts (the Lance Java SDK and its
# dependencies, JUnit, the plugins a test run loads), fetched once into
# ~/.m2 so that ctest runs Maven offline.  A stamp per pom content says they
# are complete; a short run of the pure-Java tests fetches what a run loads.
root=$(cd "$(dirname "$0")/.." && pwd)
m2=$HOME/.m2
stamp="$m2/repository/.lance-c-java-$(sha256sum "$root/java/pom.xml" | cut -c1-16).ok"
if [ ! -f "$stamp" ]; then
  echo "setup: fetching the Java coordinator's Maven artifacts into $m2"
  scratch=$(mktemp -d)
  mvn -B -q -f "$root/java/pom.xml" dependency:go-offline test \
      -Dtest='RoaringBitmapsTest' -Dlance.java.build.dir="$scratch" >"$scratch.log" 2>&1 ||
    { cat "$scratch.log" >&2; echo "setup: fetching the Maven artifacts failed" >&2; exit 1; }
  rm -rf "$scratch" "$scratch.log"
  touch "$stamp"
fi
