#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Run one build stage quietly:
#
#   scripts/stage.sh NAME "WHAT IT DOES" CMD [ARG...]
#
# prints one line, "softhca: WHAT IT DOES ... 12 s, 20 s of CPU", and sends
# CMD's output to $SOFTHCA_CACHE/logs/NAME.log.  When CMD fails: its last
# lines, the log's path, and CMD's exit status.  SOFTHCA_VERBOSE=1 shows
# everything.  With SOFTHCA_STAGE_PARALLEL=1 (stages run at once, make -j)
# the line is printed whole when the stage ends, so that lines do not mix.
set -uo pipefail
. "$(dirname "$0")/common.sh"

name=${1:?stage name}
what=${2:?what the stage does}
shift 2
logdir=$SOFTHCA_CACHE/logs
mkdir -p "$logdir"
log=$logdir/$name.log

if [ "${SOFTHCA_VERBOSE:-0}" = 1 ]; then
	"$@" 2>&1 | tee "$log"
	exit "${PIPESTATUS[0]}"
fi

start=$SECONDS
head="softhca: $what ... "
[ "${SOFTHCA_STAGE_PARALLEL:-0}" = 1 ] || { printf %s "$head"; head=; }
# the CPU the stage took, its own and its children's: the time it would
# take on one core, which says where a cold build's time goes
TIMEFORMAT='%3U %3S'
{ time "$@" > "$log" 2>&1; } 2> "$log.cpu"
rc=$?
cpu=$(awk '{ printf "%.0f", $1 + $2 }' "$log.cpu")
rm -f "$log.cpu"
if [ "$rc" = 0 ]; then
	echo "$head$((SECONDS - start)) s, $cpu s of CPU"
	exit 0
fi
echo "${head}FAILED after $((SECONDS - start)) s (exit $rc); the log's last lines:"
tail -n 25 "$log" | sed 's/^/    /'
echo "softhca: the whole log: $log"
exit "$rc"
