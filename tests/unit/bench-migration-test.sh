#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# make bench's migration figures (tests/bench/migration.sh) when perftest
# could not calibrate its clock, and so reported 0 MB/s: the ib_write_bw
# runs again, the migration with it, and the figure is the run that
# measured; after three such runs the figure is a failure, never 0.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/common.sh"
here=$top/tests/bench
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
. "$here/migration.sh"
fail=0

# The traffic: its first $uncalibrated runs cannot calibrate the clock.
# It runs in a subshell: the runs are counted in a file.
mig_bw() {
	echo run >> "$out/runs"
	if [ "$(wc -l < "$out/runs")" -le "$uncalibrated" ]; then
		echo "Conflicting CPU frequency values detected: 2000.000000 != 2994.000000."
		echo "Correlation coefficient r^2: 0.84 < 0.9"
		echo " 65536      0            0.00               0.00               0.000000"
	else
		echo " 65536      9000         600.00             500.00             0.008000"
	fi
}
migrate_under() { "$2"; echo "# migration 1, node $1: downtime 40 ms"; }

for case in "1 524.3 3" "6 fail 6"; do
	read -r uncalibrated want want_runs <<< "$case"
	: > "$out/runs"
	mig_measure softhca0 mig_bw 2 2> "$out/err"
	runs=$(wc -l < "$out/runs")
	if [ "${mig[softhca0,mig_bw,still]}" = "$want" ] &&
		[ "${mig[softhca0,mig_bw,moved]}" = "$want" ] && [ "$runs" = "$want_runs" ]; then
		echo "PASS unit/bench-migration/uncalibrated-$uncalibrated"
	else
		echo "FAIL unit/bench-migration/uncalibrated-$uncalibrated: still ${mig[softhca0,mig_bw,still]}," \
			"moved ${mig[softhca0,mig_bw,moved]}, $runs runs; want $want, $want_runs runs"
		sed 's/^/    /' "$out/err"
		fail=1
	fi
done
exit "$fail"
