# SPDX-License-Identifier: GPL-2.0-or-later
# The device on its own and between two softhca nodes (sourced by
# tests/vm/run): its port and addresses, the verbs conformance cases, the
# fabric, the driver reloaded, the data path without system calls, and
# ATOMIC WRITE and FLUSH.

# ibv_devinfo -v on node I: PORT_ACTIVE, Ethernet, its addresses as RoCE v2
devinfo() {
	local i=$1 dev=$2 info
	info=$(on "$i" -- ibv_devinfo -v -d "$dev") || return 1
	echo "$info"
	grep -Eq 'state:[[:space:]]+PORT_ACTIVE' <<< "$info" &&
	grep -Eq 'link_layer:[[:space:]]+Ethernet' <<< "$info" &&
	grep -Eq "GID\[ *[0-9]+\]:[[:space:]]+::ffff:10\.0\.0\.$i, RoCE v2" <<< "$info" &&
	grep -Eq "GID\[ *[0-9]+\]:[[:space:]]+fd00::$i, RoCE v2" <<< "$info"
}

verbs_smoke() {
	on "$1" -- verbs-smoke softhca0 "::ffff:10.0.0.$1"
}

# verbs_conformance NODE CASE: a case of tests/guest/verbs-conformance.c,
# its QPs looped back on node NODE's device.
verbs_conformance() {
	on "$1" -- verbs-conformance -d softhca0 -c "$2"
}

# ud-unknown-qpn: the two datagrams to QPNs no QP has are dropped at the
# receiver, node 1 itself, and counted in rx_dropped.
verbs_ud_unknown_qpn() {
	local d0 d1
	d0=$(hw_counter 1 softhca0 rx_dropped) && [ -n "$d0" ] || return 1
	verbs_conformance 1 ud-unknown-qpn || return 1
	d1=$(hw_counter 1 softhca0 rx_dropped) || return 1
	echo "# node 1: rx_dropped $d0 -> $d1"
	[ $((d1 - d0)) -ge 2 ]
}

# ucx-rc-rtr-flow-label: UCX gives a QP's path a flow label of 32 bits set;
# the driver keeps its 20 bits, as RoCE drivers do, and RTR succeeds.
qp_flow_label() {
	on "$1" -- qp-flow-label softhca0 "$(gid_index "$1" softhca0 "::ffff:10.0.0.$1")"
}

# Three echoes each way, 0.2 s apart: ping's default of 1 s made each
# call wait 2 s.
ping_both() {	# node peer-index
	on "$1" -- ping -c 3 -i 0.2 -W 5 "10.0.0.$2" &&
		on "$1" -- ping -6 -c 3 -i 0.2 -W 5 "fd00::$2"
}

# The fabric between nodes i and j works both ways.
ping_pair() {
	ping_both "$1" "$2" && ping_both "$2" "$1"
}

rdma_link() {
	local links
	links=$(on "$1" -- rdma link show) || return 1
	echo "$links"
	grep -Eq "link $2/1 state ACTIVE physical_state LINK_UP netdev eth0" <<< "$links"
}

# Unload and load the driver 10 times: no oops or warning, and afterwards
# the device comes back with its port and its link.
module_reload() {
	local i=$1 mark=reload-$$-$RANDOM
	kernel_mark "$i" "$mark" || return 1
	on "$i" -- sh -c '
		for n in 1 2 3 4 5 6 7 8 9 10; do
			rmmod softhca || exit 1
			modprobe softhca || exit 1
		done' && "$lab" fabric "$i" || return 1
	kernel_reports "$i" "$mark" || return 1
	devinfo "$i" softhca0 && ping_pair 1 "$i"
}

all_pairs_ping() {
	local n=$1 i j
	for i in $(seq 1 "$n"); do
		for j in $(seq 1 "$n"); do
			[ "$i" = "$j" ] || on "$i" -- ping -c 1 -W 5 "10.0.0.$j" || return 1
		done
	done
	on 1 -- ping -6 -c 2 -i 0.2 -W 5 "fd00::$n" && on "$n" -- ping -6 -c 2 -i 0.2 -W 5 fd00::1
}

softhca_pair() { verbs_pair "$1" softhca0 "${@:2}"; }

# Kernel bypass: post_send, post_recv and poll_cq make no system call, so
# a pingpong of 500 iterations makes exactly as many as one of 10.
bypass_syscalls() {
	local n count=()
	for n in 10 500; do
		softhca_pair 4 "strace -f -c -o /tmp/strace.$n ibv_rc_pingpong" -n "$n" -s 64 >/dev/null || return 1
		count+=("$(on 1 -- sh -c "awk '\$NF == \"total\" { print \$4 }' /tmp/strace.$n")")
	done
	echo "system calls: ${count[0]} for 10 iterations, ${count[1]} for 500"
	[ -n "${count[0]}" ] && [ "${count[0]}" = "${count[1]}" ]
}

# aw_flush FAMILY SERVER SDEV CLIENT CDEV ARGS...: tests/guest/aw-flush.c,
# RDMA ATOMIC WRITE and FLUSH from the client into the server's MR; both
# sides end with "ok".
aw_flush() {
	local log
	log=$(dev_pair "$1" "$2" "$3" "$4" "$5" "timeout 120 aw-flush" "${@:6}" 2>&1)
	local rc=$?
	echo "$log"
	[ "$rc" = 0 ] && grep -q '^client: ok$' <<< "$log" &&
		grep -q '^server: ok$' <<< "$log"
}
