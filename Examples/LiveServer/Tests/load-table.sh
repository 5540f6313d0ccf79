#!/usr/bin/env bash
# The load table of README.md ("Load run"), before and after, in one run, with release builds:
#
#   bash Tests/load-table.sh BEFORE [RUNS]
#
# BEFORE is a commit of this repository. It is checked out (detached) in /tmp/load-table-SHORTSHA and
# built there, once (kept for the next run; `git worktree remove` it when done); this checkout is built
# as "after". Then, RUNS times (1 unless given), each row runs before and after in turn, the two builds
# alternating which goes first from one run to the next, so a machine that warms up or gets busier
# favours neither. The last row is the first again with the data folder on a RAM disk (/dev/shm, where
# an fsync costs nothing), a folder per build and run, removed after it. Prints the load average at the start and, per row, the two lines live-load ends
# with (its markdown row), labelled; every live-load output is kept in /tmp/load-table.log.
# Run it on a quiet machine: a build or a test beside it moves the CPU and latency figures.
# Exit status: 0 when every run's replicas were equal, 1 when one was not, 2 for a bad argument.
set -euo pipefail
before=${1:-}
runs=${2:-1}
if [ -z "$before" ] || ! [[ "$runs" =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: load-table.sh BEFORE-COMMIT [RUNS]" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")/.." && pwd)
root=$(git -C "$here" rev-parse --show-toplevel)
if ! short=$(git -C "$root" rev-parse --short "$before^{commit}" 2>/dev/null); then
    echo "load-table.sh: $before is not a commit of $root" >&2
    exit 2
fi
tree=/tmp/load-table-$short
[ -d "$tree" ] || git -C "$root" worktree add --detach "$tree" "$short" >&2
for dir in "$tree/Examples/LiveServer" "$here"; do
    echo "building $dir (release)" >&2
    (cd "$dir" && swift build -c release --product live-server >&2 && swift build -c release --product live-load >&2)
done
rows=(
    "--clients 100 --actions 10000 --rate 2000 --patch-interval-ms 10"
    "--clients 1000 --actions 10000 --rate 500 --patch-interval-ms 100"
    "--clients 10000 --actions 100 --rate 10 --patch-interval-ms 100"
    "--clients 100 --actions 10000 --rate 2000 --patch-interval-ms 10 --data /dev/shm/load-table-DATA"
)
log=/tmp/load-table.log
: > "$log"
status=0
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg); before $short, after $(git -C "$root" rev-parse --short HEAD)"
for run in $(seq "$runs"); do
    order=(before after)
    [ $((run % 2)) -eq 0 ] && order=(after before)
    for row in "${rows[@]}"; do
        for build in "${order[@]}"; do
            dir=$here
            [ "$build" = before ] && dir=$tree/Examples/LiveServer
            args=${row//DATA/$build-$run-$$}
            echo "== run $run, $build: live-load $args" >> "$log"
            # shellcheck disable=SC2086 # the row is a list of arguments
            if ! output=$(cd "$dir" && .build/release/live-load $args 2>&1); then status=1; fi
            rm -rf "/dev/shm/load-table-$build-$run-$$"
            echo "$output" >> "$log"
            echo "run $run, $build: $args: $(echo "$output" | tail -1)"
        done
    done
done
exit $status
