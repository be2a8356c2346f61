# SPDX-License-Identifier: GPL-2.0-or-later
# Data integrity and the RC transport's errors (sourced by tests/vm/run):
# tests/guest/rdma-verify.c clean and under injected faults,
# tests/guest/rdma-negative.c, a peer lost, the device unplugged under
# traffic, and the soak of many QPs under faults.

# rv_run TOOL ARGS...: TOOL between node 2 (server) and node 1 (client) on
# softhca0 over IPv4 GIDs, each side bounded by busybox timeout.
rv_run() {
	local tool=$1
	shift
	verbs_pair 4 softhca0 "timeout 900 $tool" "$@"
}

# rdma-verify ARGS...: both sides pass, report no error, and end with the
# same checksum over all the data they checked.
rdma_verify() {
	local log sums
	log=$(rv_run rdma-verify "$@" 2>&1)
	local rc=$?
	echo "$log"
	[ "$rc" = 0 ] || return 1
	sums=$(sed -n 's/^\(client\|server\): [0-9]* rounds in .*checksum \(0x[0-9a-f]*\), errors 0$/\2/p' <<< "$log")
	[ "$(wc -l <<< "$sums")" = 2 ] && [ "$(sort -u <<< "$sums" | wc -l)" = 1 ] ||
		{ echo "no matching error-free summaries from both sides"; return 1; }
}

# The injected faults, and the transport's recovery from them.
fault_names=(fault_dropped fault_duplicated fault_reordered retransmits duplicates)

# rdma-verify under the lab's injected faults; afterwards the device shows
# faults injected, and the transport recovered from them: retransmits and
# duplicates both went up.
rdma_verify_faults() {
	local before after i ok=0
	before=$(counters 1,2 softhca0 "${fault_names[@]}") || return 1
	rdma_verify "$@" || ok=1
	after=$(counters 1,2 softhca0 "${fault_names[@]}") || return 1
	counters_rose "$before" "$after" || ok=1
	for i in 1 2; do
		echo "--- node $i:"
		on "$i" -- rdma statistic show link softhca0/1
	done
	return "$ok"
}

# rdma_negative CASE [ARGS...]: tests/guest/rdma-negative.c's CASE.
rdma_negative() {
	local which=$1
	shift
	rv_run rdma-negative -c "$which" "$@"
}

# rdma_peer_lost kill|reset: node 2 dies while node 1 streams WRITEs to
# it, its QEMU killed or the machine reset (QMP system_reset): node 1's QP
# gets RETRY_EXC_ERR, the rest flushed, within its bound, and node 1 stays
# healthy.  After a reset node 2 comes back and new connections work.
# kill is the last case of its layout.
rdma_peer_lost() {
	local how=$1 g1 g2 t pid rc mark=peer-lost-$$-$RANDOM
	kernel_mark 1 "$mark" || return 1
	g1=$(gid_index 1 softhca0 ::ffff:10.0.0.1) && g2=$(gid_index 2 softhca0 ::ffff:10.0.0.2) &&
		[ -n "$g1" ] && [ -n "$g2" ] || return 1
	on -b 2 -- sh -c "rdma-negative -d softhca0 -g $g2 -c killed > /tmp/srv.log 2>&1"
	for t in $(seq 40); do
		on 2 -- sh -c 'ss -ltn | grep -q :18515' && break
		sleep 0.5
	done
	on -b 1 -- sh -c "rm -f /tmp/kill.rc; timeout 300 rdma-negative -d softhca0 -g $g1 -c killed 10.0.0.2 > /tmp/kill.log 2>&1; echo \$? > /tmp/kill.rc"
	for t in $(seq 120); do
		on 1 -- grep -q streaming /tmp/kill.log 2>/dev/null && break
		sleep 0.5
	done
	on 1 -- cat /tmp/kill.log
	on 1 -- grep -q streaming /tmp/kill.log || { echo "the client never streamed"; return 1; }
	echo "--- server on node 2:"
	on 2 -- cat /tmp/srv.log
	if [ "$how" = kill ]; then
		pid=$(cat "$LAB_DIR/node2.pid") && grep -qsF "$LAB_DIR/" "/proc/$pid/cmdline" ||
			{ echo "no QEMU of node 2"; return 1; }
		echo "killing node 2 (QEMU pid $pid)"
		kill -KILL "$pid"
	else
		echo "resetting node 2"
		# the lab runs QEMU with -no-reboot: make this reset a reset
		"$lab" qmp 2 '{"execute": "set-action", "arguments": {"reboot": "reset"}}' \
			'{"execute": "system_reset"}' || return 1
	fi
	for t in $(seq 120); do
		on 1 -- test -e /tmp/kill.rc && break
		sleep 0.5
	done
	echo "--- client on node 1 after the $how:"
	on 1 -- cat /tmp/kill.log
	rc=$(on 1 -- cat /tmp/kill.rc) || { echo "the client did not finish in 60 s"; return 1; }
	kernel_reports 1 "$mark" || return 1
	[ "$rc" = 0 ] && on 1 -- ibv_devinfo -d softhca0 | grep -q PORT_ACTIVE || return 1
	[ "$how" = kill ] && return 0
	"$lab" wait 2 && softhca_pair 4 ibv_rc_pingpong -n 100 -s 4096
}

# device_del node 1's softhca while RC traffic runs (an ibv_rc_pingpong
# waiting for CQ events, bounded by timeout): the driver unbinds, its user
# contexts disassociated, and the client's wait ends in an error at once,
# not at its timeout.  The guest and QEMU live on, and device_add brings
# the device back with its port and RDMA working.
hot_unplug() {
	local t rc mark=unplug-$$-$RANDOM
	kernel_mark 1 "$mark" || return 1
	on -b 2 -- sh -c 'timeout 120 ibv_rc_pingpong -e -d softhca0 -g 1 -n 1000000 -s 4096 > /tmp/hp-srv.log 2>&1'
	sleep 2
	on -b 1 -- sh -c 'timeout 120 ibv_rc_pingpong -e -d softhca0 -g 1 -n 1000000 -s 4096 10.0.0.2 > /tmp/hp-cli.log 2>&1; echo $? > /tmp/hp.rc'
	sleep 5
	echo "device_del on node 1 while the pingpong runs"
	"$lab" qmp 1 --event DEVICE_DELETED --timeout 90 \
		'{"execute": "device_del", "arguments": {"id": "fabdev"}}' || return 1
	for t in $(seq 60); do
		on 1 -- test -e /tmp/hp.rc && break
		sleep 1
	done
	rc=$(on 1 -- cat /tmp/hp.rc)
	echo "--- the client on node 1 (exit $rc):"
	on 1 -- cat /tmp/hp-cli.log
	case $rc in
	0 | 124 | "") echo "the client did not end in an error of its own"; return 1 ;;
	esac
	on 1 -- sh -c 'rdma link show; ls /sys/class/infiniband'
	on 1 -- sh -c '! ls /sys/class/infiniband | grep -q softhca' ||
		{ echo "softhca0 is still there"; return 1; }
	echo "device_add on node 1"
	"$lab" qmp 1 '{"execute": "device_add", "arguments": {"driver": "softhca",
		"id": "fabdev", "bus": "rp0", "netdev": "fab", "mac": "52:54:00:00:00:01"}}' ||
		return 1
	for t in $(seq 60); do
		on 1 -- sh -c 'ls /sys/class/infiniband | grep -q softhca0' && break
		sleep 1
	done
	"$lab" fabric 1 || return 1
	kernel_since 1 "$mark" | grep -E 'softhca|pciehp' | tail -20
	kernel_reports 1 "$mark" || return 1
	devinfo 1 softhca0 && ping_pair 1 2 && softhca_pair 4 ibv_rc_pingpong -n 100 -s 4096
}

# 2 % of the frames dropped, duplicated and reordered, both ways, both nodes.
rv_faults=fault-tx-drop=20,fault-tx-dup=20,fault-tx-reorder=20
rv_faults+=,fault-rx-drop=20,fault-rx-dup=20,fault-rx-reorder=20,fault-seed=4242

# --- the soak: many QPs in several processes, under faults -------------

# soak SECONDS PROCS QPS: PROCS pairs of rdma-soak (tests/guest/rdma-soak.c),
# servers on node 2 and clients on node 1, each with QPS RC QPs, play their
# checked turns for SECONDS under the lab's injected faults.  Every process
# ends with errors 0, and the device dropped, duplicated and reordered
# frames and retransmitted.
soak() {
	local secs=$1 procs=$2 nqp=$3 g1 g2 p t ok=0 before after i
	g1=$(gid_index 1 softhca0 ::ffff:10.0.0.1) && g2=$(gid_index 2 softhca0 ::ffff:10.0.0.2) &&
		[ -n "$g1" ] && [ -n "$g2" ] || return 1
	before=$(counters 1,2 softhca0 "${fault_names[@]}") || return 1
	for p in $(seq "$procs"); do
		on -b 2 -- sh -c "timeout $((secs + 600)) rdma-soak -d softhca0 -g $g2 \
			-p $((18600 + p)) -q $nqp > /tmp/soak-$p.log 2>&1; echo \$? > /tmp/soak-$p.rc"
	done
	for t in $(seq 60); do
		[ "$(on 2 -- sh -c 'ss -ltn | grep -c ":186[0-9][0-9] "')" = "$procs" ] && break
		sleep 0.5
	done
	for p in $(seq "$procs"); do
		on -b 1 -- sh -c "timeout $((secs + 600)) rdma-soak -d softhca0 -g $g1 \
			-p $((18600 + p)) -q $nqp -t $secs -s $((0x50a0 + p)) 10.0.0.2 \
			> /tmp/soak-$p.log 2>&1; echo \$? > /tmp/soak-$p.rc"
	done
	for t in $(seq $(((secs + 600) / 2))); do
		on 1 -- sh -c "ls /tmp/soak-*.rc 2>/dev/null | wc -l" | grep -qx "$procs" &&
			on 2 -- sh -c "ls /tmp/soak-*.rc 2>/dev/null | wc -l" | grep -qx "$procs" && break
		sleep 2
	done
	for i in 1 2; do
		for p in $(seq "$procs"); do
			echo "--- node $i, pair $p (exit $(on "$i" -- cat /tmp/soak-$p.rc 2>/dev/null)):"
			on "$i" -- cat /tmp/soak-$p.log
			on "$i" -- grep -q ', errors 0$' /tmp/soak-$p.log &&
				[ "$(on "$i" -- cat /tmp/soak-$p.rc)" = 0 ] || ok=1
		done
	done
	after=$(counters 1,2 softhca0 "${fault_names[@]}") || return 1
	counters_rose "$before" "$after" || ok=1
	# the figures for the record: bytes checked, summed over all processes
	for i in 1 2; do
		on "$i" -- sh -c 'cat /tmp/soak-*.log' |
			awk -v n="$i" '/ bytes checked/ { for (f = 1; f < NF; f++) if ($(f + 1) == "bytes") b += $f;
				for (f = 1; f < NF; f++) if ($(f + 1) == "QPs,") q += $f }
				END { printf "# soak node %d: %d QPs, %.1f MB checked\n", n, q, b / 1e6 }'
	done
	return "$ok"
}


# nvme_rdma under the lab's injected faults; the device dropped frames and
# the transport retransmitted.  On a quarter of the namespace: loss makes
# every frame dear under TCG.
nvme_rdma_faults() {
	local before after
	before=$(counters 1,2 softhca0 fault_dropped retransmits) || return 1
	NVME_RD_KB=16384 nvme_rdma "$@" || return 1
	after=$(counters 1,2 softhca0 fault_dropped retransmits) || return 1
	counters_rose "$before" "$after"
}

# 2 % of the frames dropped, both ways, both nodes.
nvme_faults=fault-tx-drop=20,fault-rx-drop=20,fault-seed=4791
