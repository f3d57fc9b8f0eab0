# Sourced by tests/*/both-modes.sh: run commands side by side, each one's
# output kept apart, and print them one after another when all are done.
#
#   run NAME COMMAND...   (in the background or not) keeps NAME's output,
#                         exit status and seconds
#   report NAME...        prints each NAME's output, then a summary (a
#                         line per NAME: its exit status and seconds),
#                         last, where a log's tail shows it; returns the
#                         first non-zero exit status of them
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

run() {
    local name=$1; shift
    local start
    start=$(date +%s)
    "$@" > "$out/$name.log" 2>&1
    echo $? > "$out/$name.rc"
    echo $(( $(date +%s) - start )) > "$out/$name.seconds"
}

# NAME's exit status; a run that left none (it was killed, or its
# command exited the shell that ran it) counts as failed: 1.
_status() {
    if [ -s "$out/$1.rc" ]; then cat "$out/$1.rc"; else echo 1; fi
}

_summary() {
    echo "$1: exit $(_status "$1"), $(cat "$out/$1.seconds" 2>/dev/null \
        || echo '?')s$([ -s "$out/$1.rc" ] || echo ' (no exit status)')"
}

report() {
    local status=0 name
    for name in "$@"; do
        echo "===== $(_summary "$name") ====="
        cat "$out/$name.log"
        [ "$status" -ne 0 ] || status=$(_status "$name")
    done
    echo "===== summary"
    for name in "$@"; do
        echo "  $(_summary "$name")"
        # A line of several commands (tier-runs.sh) names its failed ones.
        grep '^== FAILED' "$out/$name.log" | sed 's/^/    /'
    done
    return "$status"
}
