#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# perftest_mibs (scripts/common.sh), the figure of make run's demo: a run
# whose clock perftest could not calibrate printed 0 MiB/s, and the demo
# showed no figure for it and no ratio, which failed vm/make-run-demo.
# Such a run's figure is its messages over the window its alarms counted
# them in.  The rows are ib_write_bw's (perftest 25.x).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/common.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
check() {	# name size seconds want < output
	local got
	cat > "$out/log"
	got=$(perftest_mibs "$out/log" "$2" "$3")
	if [ "$got" = "$4" ]; then
		echo "PASS unit/perftest-mibs/$1"
	else
		echo "FAIL unit/perftest-mibs/$1: got '$got', want '$4'"
		fail=1
	fi
}

header=' #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]'
check calibrated 65536 3 512.37 <<EOF2
$header
 65536      24594            0.00               512.37             0.008198
EOF2
# -D 3: no margin (3/4 is 0), 4800 messages of 64 KiB in 3 s
check uncalibrated-rxe-demo 65536 3 100.00 <<EOF2
Correlation coefficient r^2: 0.41 < 0.9
$header
 65536      4800             0.00               0.00               0.000000
EOF2
# -D 20: a margin of 5 s at each end, so a 10-s window
check uncalibrated-margins 65536 20 40.00 <<EOF2
Correlation coefficient r^2: 0.73 < 0.9
$header
 65536      6400             0.00               0.00               0.000000
EOF2
# the row of the size asked for, and none where the run printed none
check other-size 4096 3 "" <<EOF2
$header
 65536      24594            0.00               512.37             0.008198
EOF2
exit "$fail"
