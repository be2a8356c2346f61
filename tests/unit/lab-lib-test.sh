#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/lib/lab.sh's helpers, on stubs: counters and counters_rose,
# device counters summed over nodes, and which of them went up between
# two readings.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/common.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
. "$top/tests/lib/lab.sh"

fail=0

# check NAME WANT COMMAND...: COMMAND's output and exit status, "rc N"
# last, are WANT.
check() {
	local name=$1 want=$2 got
	shift 2
	got=$("$@" 2>&1; echo "rc $?")
	if [ "$got" = "$want" ]; then
		echo "PASS unit/lab-lib/$name"
	else
		echo "FAIL unit/lab-lib/$name"
		diff <(echo "$want") <(echo "$got") | sed 's/^/    /'
		fail=1
	fi
}
# the nodes' counters: NODE NAME VALUE
hw_counter() { awk -v n="$1" -v k="$3" '$1 == n && $2 == k { print $3 }' "$out/counters"; }
printf '%s\n' "1 rx 1" "1 tx 10" "2 rx 2" "2 tx 20" "1 odd 5" > "$out/counters"
check counters-summed $'rx 3\ntx 30\nrc 0' counters 1,2 softhca0 rx tx
check counters-one-node $'tx 20\nrc 0' counters 2 softhca0 tx
check counters-missing $'rx 3\nnode 2: softhca0 has no counter odd\nrc 1' counters 1,2 softhca0 rx odd
check counters-rose $'rx: 3 -> 4\ntx: 30 -> 31\nrc 0' counters_rose $'rx 3\ntx 30' $'rx 4\ntx 31'
check counters-stayed $'rx: 3 -> 3\nrx did not go up\ntx: 30 -> 31\nrc 1' \
	counters_rose $'rx 3\ntx 30' $'rx 3\ntx 31'
check counters-stayed-unasked $'rx: 3 -> 3\ntx: 30 -> 31\nrc 0' \
	counters_rose $'rx 3\ntx 30' $'rx 3\ntx 31' tx
exit "$fail"
