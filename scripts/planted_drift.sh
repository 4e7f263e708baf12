# Sourced by the checks' --planted-drift modes (check_map.py, check_tool.sh):
# the verdict on a check run over a copy with drifts planted in it.
#   planted_verdict BEFORE AFTER STATUS WANT...
# BEFORE and AFTER are the check's reports on the copy without and with the
# drifts, STATUS the check's exit status on the drifted copy.  Passes (0)
# when that status is 1 and every WANT line is in AFTER and none in BEFORE;
# prints the drifted report either way.
planted_verdict() {
    local before=$1 after=$2 status=$3 fail=0 want
    shift 3
    if [[ $status -ne 1 ]]; then
        echo "FAIL: the check exited $status on a planted drift, not 1"; fail=1
    fi
    for want in "$@"; do
        if ! grep -qF "$want" "$after"; then
            echo "FAIL: the planted drift's report lacks: $want"; fail=1
        elif grep -qF "$want" "$before"; then
            echo "FAIL: the report says \"$want\" before the drift was planted"; fail=1
        fi
    done
    echo "--- the check's report on the planted drift:"
    cat "$after"
    [[ $fail -eq 0 ]] || return 1
    echo "planted drift: the $# planted disagreements reported, exit status 1"
}
