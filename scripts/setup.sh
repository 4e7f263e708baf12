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
