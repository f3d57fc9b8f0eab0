# Sourced by tests/*/both-modes.sh: run commands side by side, each one's
# output kept apart, and print them one after another when all are done.
#
#   run NAME COMMAND...   (in the background or not) keeps NAME's output,
#                         exit status and seconds
#   report NAME...        prints each NAME's output; returns the first
#                         non-zero exit status of them
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

report() {
    local status=0 name
    for name in "$@"; do
        echo "===== $name: exit $(cat "$out/$name.rc")," \
             "$(cat "$out/$name.seconds")s ====="
        cat "$out/$name.log"
        [ "$status" -ne 0 ] || status=$(cat "$out/$name.rc")
    done
    return "$status"
}
