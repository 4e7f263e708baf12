#!/usr/bin/env bash
# Runs a command in a network namespace of its own whose only interface is
# loopback (issue 24's object-store tests):
#
#   tests/stores/isolated.sh [--host NAME]... CMD [ARG...]
#
# The emulators these tests start listen on fixed ports of 127.0.0.1, and the
# clients point every endpoint at them or at closed ports there; in a private
# namespace two runs never share a port, and nothing a client or an emulator
# might try on its own (Azurite's telemetry, a cloud SDK's metadata-service
# lookup for credentials) can leave the machine.  Each --host NAME resolves
# to 127.0.0.1 inside (a private /etc/hosts, in a mount namespace of its
# own), for the clients that put the bucket in the host name.  The
# namespaces end with the command.  Needs root (unshare); fails, never
# skips, without.
set -euo pipefail
hosts=""
while [ "${1:-}" = --host ]; do
  hosts+=" ${2:?--host needs a name}"
  shift 2
done
[ $# -gt 0 ] || { echo "usage: isolated.sh [--host NAME]... CMD [ARG...]" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "FAIL: $1 runs in a network namespace of its own and needs root" >&2; exit 1; }
command -v unshare >/dev/null || { echo "FAIL: unshare (util-linux) is missing" >&2; exit 1; }
command -v ip >/dev/null || { echo "FAIL: ip (iproute2) is missing: run scripts/setup.sh" >&2; exit 1; }
# The mount namespace is private (unshare's default propagation), so the
# bind mount over /etc/hosts is seen by the command alone.
exec env ISOLATED_HOSTS="$hosts" unshare --net --mount -- sh -c '
  ip link set lo up || exit 1
  if [ -n "$ISOLATED_HOSTS" ]; then
    f=$(mktemp) || exit 1
    printf "127.0.0.1 localhost%s\n::1 localhost\n" "$ISOLATED_HOSTS" >"$f"
    mount --bind "$f" /etc/hosts || { echo "FAIL: cannot give the namespace its own /etc/hosts" >&2; exit 1; }
    rm -f "$f"
  fi
  exec "$@"' isolated "$@"
