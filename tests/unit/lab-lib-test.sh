#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/lib/lab.sh's helpers against a stub lab.
#
# pair_long with a server node whose agent no longer answers (tests/qga.py
# exits 125): the wait for both sides ends at once, with the node named,
# and the pair fails; it used to poll the running client until its
# timeout, each poll of a hung guest taking the agent's own 60 s.
#
# counters and counters_rose: device counters summed over nodes, and
# which of them went up between two readings.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/common.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
. "$top/tests/lib/lab.sh"

# tests/lab exec as pair_long calls it: node 2's agent gives up, node 1's
# client is still running.  The polls of node 1 are counted.
cat > "$out/lab" <<END
#!/bin/sh
[ "\$1" = exec ] || exit 2
shift
[ "\$1" = -b ] && exit 0
node=\$1
shift 2
if [ "\$node" = 2 ]; then
	echo "qga: node2.qga: timed out" >&2
	exit 125
fi
[ "\$*" = "test -e /tmp/cli.rc" ] || exit 0
echo poll >> "$out/polls"
exit 1
END
chmod +x "$out/lab"
lab=$out/lab
: > "$out/polls"
pair_long 2 1 server client 5 true > "$out/log" 2>&1
rc=$?
fail=0
if [ "$rc" != 0 ] && [ "$(wc -l < "$out/polls")" = 1 ] &&
	grep -qx 'the agent of node 2 does not answer' "$out/log"; then
	echo "PASS unit/lab-lib/pair-long-agent-gone"
else
	echo "FAIL unit/lab-lib/pair-long-agent-gone: exit $rc, $(wc -l < "$out/polls") polls of the client"
	sed 's/^/    /' "$out/log"
	fail=1
fi

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
