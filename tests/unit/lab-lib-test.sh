#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/lib/lab.sh's helpers, on stubs: counters and counters_rose,
# device counters summed over nodes, and which of them went up between
# two readings; kernel_reports, what a node's kernel reported since a
# case began.
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

# kernel_reports on a node whose kernel log is $out/dmesg
mkdir -p "$out/bin"
printf '#!/bin/sh\ncat "%s/dmesg"\n' "$out" > "$out/bin/dmesg"
chmod +x "$out/bin/dmesg"
on() { shift 2; PATH=$out/bin:$PATH "$@"; }
warning() {	# function: a WARNING report, whole
	printf '%s\n' "[  9.1] WARNING: CPU: 0 PID: 7 at kernel/workqueue.c:3765 check_flush_dependency.part.0+0xbe/0x130" \
		"[  9.1] Workqueue: $2" "[  9.1] RIP: 0010:check_flush_dependency.part.0+0xbe/0x130" \
		"[  9.1]  __flush_work+0xe6/0x350" "[  9.1]  $1+0xd4/0x220" "[  9.1] ---[ end trace 0000000000000000 ]---"
}
{
	# an earlier case's warning, then this case's mark
	warning softhca_destroy_qp "events softhca_work"
	echo "[  8.0] softhca-case: m1"
	echo "[  8.1] softhca0: port 1 ACTIVE"
} > "$out/dmesg"
# rdma-peer-reset failed on ulp-iser's warning, logged before it began
check kernel-reports-earlier-case-not-counted 'rc 0' kernel_reports 1 m1
warning softhca_destroy_qp "events softhca_work" >> "$out/dmesg"
check kernel-reports-warning "$(printf '%s\n' "--- node 1's kernel reported:"
	warning softhca_destroy_qp "events softhca_work"; echo 'rc 1')" kernel_reports 1 m1
# the iSCSI transport's own, noted; after it a BUG, reported
{
	echo "[  8.0] softhca-case: m2"
	warning __iscsi_unbind_session "iscsi_ctrl_0:1 __iscsi_unbind_session [scsi_transport_iscsi]"
	echo "[ 10.0] BUG: kernel NULL pointer dereference, address: 0000000000000008"
} > "$out/dmesg"
check kernel-reports-iscsi-transport-warning-noted "$(
	echo "# node 2, a warning of Linux's iSCSI transport, not softhca's: $(warning x y | head -n 1)"
	echo "--- node 2's kernel reported:"
	echo "[ 10.0] BUG: kernel NULL pointer dereference, address: 0000000000000008"
	echo 'rc 1')" kernel_reports 2 m2
check kernel-reports-no-mark $'node 1: no mark m3 in its kernel log\nrc 1' kernel_reports 1 m3

# tests/lib/agent.sh with a client that does not build: the script stops
# there and says why, not at its first agent call with an empty QGA
mkdir -p "$out/top/tests/agent"
printf '#!/bin/sh\necho "cc: error" >&2\nexit 1\n' > "$out/top/tests/agent/build.sh"
chmod +x "$out/top/tests/agent/build.sh"
agent_unbuilt() {
	(unset QGA; SOFTHCA_TOP=$out/top; . "$top/tests/lib/agent.sh"; echo "went on, QGA '$QGA'")
}
check agent-client-unbuilt-stops $'cc: error\nsofthca: the guest agent client did not build (tests/agent/build.sh)\nrc 1' \
	agent_unbuilt
exit "$fail"
