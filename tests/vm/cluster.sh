# SPDX-License-Identifier: GPL-2.0-or-later
# Cluster cases for tests/vm/run (sourced): RDMA between every pair of a
# lab's nodes, and the lab's own commands (status, console, cleaning up
# after an interrupted run).  Pairs that share no node run at once, each
# to a log of its own.

# node_netns: the host (namespace) of a node, as the lab keeps it
. "$SOFTHCA_TOP/tests/lib/fabric.sh"

# The node pairs of 1..N, one round a line ("1-8 2-7 ..."): each pair
# once, no node twice in a round (the circle method).
cluster_rounds() {
	python3 - "$1" <<-'PY'
	import sys
	n = int(sys.argv[1])
	ring = list(range(1, n + 1 + n % 2))
	m = len(ring)
	for _ in range(m - 1):
	    pairs = [(ring[k], ring[m - 1 - k]) for k in range(m // 2)]
	    print(" ".join(f"{a}-{b}" for a, b in pairs if a <= n and b <= n))
	    ring = [ring[0], ring[-1]] + ring[1:-1]
	PY
}

# The RDMA device of node $1, as its guest names it.
cluster_dev() {
	on "$1" -- ls /sys/class/infiniband
}

# in_parallel FUNCTION PAIR...: FUNCTION A B for each pair A-B, all at
# once; each must pass.  Their outputs follow, one after the other.
in_parallel() {
	local fn=$1 p i rc=0 pids=()
	shift
	for p in "$@"; do
		"$fn" "${p%-*}" "${p#*-}" > "$out/par.$p" 2>&1 &
		pids+=($!)
	done
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" || { rc=1; echo "FAILED: $fn ${*:$((i + 1)):1}"; }
	done
	for p in "$@"; do
		echo "--- $fn $p"
		cat "$out/par.$p"
	done
	return "$rc"
}

# each_round FUNCTION N [reverse]: FUNCTION over every pair of nodes
# 1..N, a round at a time; reverse: each pair the other way round too.
each_round() {
	local fn=$1 n=$2 round pairs p
	while read -r round; do
		read -ra pairs <<< "$round"
		in_parallel "$fn" "${pairs[@]}" || return 1
		[ "${3:-}" = reverse ] || continue
		for p in "${!pairs[@]}"; do
			pairs[$p]=${pairs[$p]#*-}-${pairs[$p]%-*}
		done
		in_parallel "$fn" "${pairs[@]}" || return 1
	done < <(cluster_rounds "$n")
}

cluster_pingpong() {	# server client
	interop "$1" "$(cluster_dev "$1")" "$2" "$(cluster_dev "$2")" 4 \
		ibv_rc_pingpong -n 20 -s 4096
}

cluster_write_bw() {	# server client
	interop "$1" "$(cluster_dev "$1")" "$2" "$(cluster_dev "$2")" 4 \
		ib_write_bw -n 50 -s 65536
}

cluster_rping() {	# server client
	rping_run "$1" "$2" 4 1000 5
}

# ib_write_bw on the ring 1 -> 2 -> ... -> N -> 1, in two rounds of
# disjoint pairs (and a third for the last link of an odd ring).
ring_write_bw() {
	local n=$1 i odd=() even=() last=()
	for i in $(seq 1 "$n"); do
		if [ "$i" = "$n" ] && [ $((n % 2)) = 1 ]; then
			last=("$(((i % n) + 1))-$i")
		elif [ $((i % 2)) = 1 ]; then
			odd+=("$(((i % n) + 1))-$i")
		else
			even+=("$(((i % n) + 1))-$i")
		fi
	done
	in_parallel cluster_write_bw "${odd[@]}" &&
		in_parallel cluster_write_bw "${even[@]}" &&
		{ [ ${#last[@]} = 0 ] || in_parallel cluster_write_bw "${last[@]}"; }
}

# tests/lab status: N ready nodes, each with its device and addresses;
# the nodes in $2 (comma separated) run rxe0, the others softhca0.
lab_status() {
	local n=$1 rxe=$2 st i dev
	st=$("$lab" status) || return 1
	echo "$st"
	for i in $(seq 1 "$n"); do
		dev=softhca0
		[[ ",$rxe," == *",$i,"* ]] && dev=rxe0
		grep -Eq "^$i +ready +[0-9]+ +[^ ]+ +[a-z]+ +$dev +10\.0\.0\.$i fd00::$i( |\$)" <<< "$st" ||
			{ echo "node $i: not ready with $dev, 10.0.0.$i and fd00::$i"; return 1; }
	done
	[ "$(grep -c ' ready ' <<< "$st")" = "$n" ]
}

# tests/lab console I: node I's boot, from the kernel's banner on.
lab_console() {
	"$lab" console "$1" > "$out/console" || return 1
	head -n 3 "$out/console"
	grep -q '^\[ *[0-9.]*\] Linux version ' "$out/console"
}

# What the lab in folder $1 left on this host: its QEMUs, its namespace,
# its registry entry.  Prints them; true if there is nothing.
lab_leftovers() {
	local dir=$1 id p left=0
	id=$(printf %s "$dir" | sha256sum | cut -c1-8)
	for p in /proc/[0-9]*; do
		grep -qsF "$dir/" "$p/cmdline" || continue
		echo "left running: pid ${p#/proc/}"
		left=1
	done
	if ip netns list | grep -q "^softhca-lab-$id\b"; then
		echo "left: namespace softhca-lab-$id"
		left=1
	fi
	if [ -e "/run/softhca-lab/labs/$id" ]; then
		echo "left: registry entry $id"
		left=1
	fi
	return "$left"
}

# A lab whose owner was killed, and whose folder its trap removed, is
# stopped by the next lab's up: QEMU, namespace and all.
lab_stale_reaped() {
	local old new owner rc=0
	old=$(mktemp -d /tmp/softhca-stale.XXXXXX)
	new=$(mktemp -d /tmp/softhca-next.XXXXXX)
	sleep 300 &
	owner=$!
	LAB_DIR=$old LAB_OWNER=$owner "$lab" up -n 1 || { kill "$owner"; return 1; }
	kill "$owner"
	wait "$owner" 2>/dev/null
	rm -rf "$old"
	! lab_leftovers "$old" > /dev/null || { echo "nothing to reap"; rc=1; }
	LAB_DIR=$new "$lab" up -n 1 || rc=1
	lab_leftovers "$old" || rc=1
	LAB_DIR=$new "$lab" down || rc=1
	lab_leftovers "$new" || rc=1
	rm -rf "$new"
	return "$rc"
}

# make run's demo (tests/demo), in a lab folder of its own: it shows
# both WRITE bandwidths and their ratio, leaves its softhca lab up and
# nothing of its rxe lab.
demo_run() {
	local dir rc=0 figures
	dir=$(mktemp -d /tmp/softhca-demo.XXXXXX)
	LAB_DIR=$dir "$here/../demo" > "$out/demo.log" 2>&1 || { echo "the demo failed"; rc=1; }
	sed 's/\x1b\[[0-9;]*m//g' "$out/demo.log"
	figures=$(sed -n 's/\x1b\[[0-9;]*m//g; s/^  \(softhca\|Soft-RoCE\) *\([0-9.]*\) MiB\/s$/\1 \2/p' "$out/demo.log")
	[ "$(grep -c ' [0-9]' <<< "$figures")" = 2 ] || { echo "no two figures"; rc=1; }
	grep -Eq '^  softhca is [0-9.]+x Soft-RoCE' "$out/demo.log" || { echo "no ratio"; rc=1; }
	echo "# demo, ib_write_bw MiB/s: $(paste -sd' ' <<< "$figures")"
	[ "$(LAB_DIR=$dir "$lab" status | grep -c ' ready ')" = 2 ] ||
		{ echo "the softhca lab is not up"; rc=1; }
	lab_leftovers "$dir.rxe" || rc=1
	LAB_DIR=$dir "$lab" down || rc=1
	lab_leftovers "$dir" || rc=1
	rm -rf "$dir"
	return "$rc"
}

# An up that is stopped (a CI timeout's SIGTERM) while its nodes boot
# leaves nothing behind.
lab_up_interrupted() {
	local dir up t rc=0
	dir=$(mktemp -d /tmp/softhca-intr.XXXXXX)
	LAB_DIR=$dir "$lab" up -n 2 --tap &
	up=$!
	for t in $(seq 100); do
		[ -s "$dir/node2.pid" ] && break
		sleep 0.2
	done
	[ -s "$dir/node2.pid" ] || { echo "the nodes did not start"; rc=1; }
	kill -TERM "$up"
	wait "$up" && { echo "up was not interrupted"; rc=1; }
	lab_leftovers "$dir" || rc=1
	[ ! -e "$dir/nodes" ] || { echo "$dir still holds a lab"; rc=1; }
	LAB_DIR=$dir "$lab" down
	rm -rf "$dir"
	return "$rc"
}

# The KVM probe runs once per emulator, not on every up: where /dev/kvm
# is there but nested KVM fails, each probe waits out its 10 s.  An
# emulator that logs its KVM probes and fails them stands in for QEMU, and
# the answers go to a registry of the test's own.
lab_kvm_probe_once() {
	local dir rc=0 accel
	dir=$(mktemp -d /tmp/softhca-accel.XXXXXX)
	cat > "$dir/qemu" <<-EOF
	#!/bin/sh
	case " \$* " in *" -accel kvm "*) echo probe >> "$dir/probes"; exit 1 ;; esac
	EOF
	chmod +x "$dir/qemu"
	for _ in 1 2 3; do
		accel=$(SOFTHCA_QEMU=$dir/qemu LAB_REGISTRY=$dir/registry LAB_ACCEL= "$lab" accel) || rc=1
		[ "$accel" = tcg ] || { echo "accel '$accel', not tcg"; rc=1; }
	done
	if [ -w /dev/kvm ]; then
		[ "$(cat "$dir/probes")" = probe ] ||
			{ echo "probes: $(wc -l < "$dir/probes" 2>/dev/null), not 1"; rc=1; }
	else
		[ ! -e "$dir/probes" ] || { echo "probed without /dev/kvm"; rc=1; }
	fi
	rm -rf "$dir"
	return "$rc"
}

# Nodes $1 and $2 are on different hosts, node $1's fabric interface and
# RDMA port have MTUs $3 and $4, and its host's underlay room for VXLAN's
# 50 bytes more.
across_hosts() {
	local a=$1 b=$2 st na nb umtu
	st=$("$lab" status) || return 1
	echo "$st"
	na=$(node_netns "$a") && nb=$(node_netns "$b") || return 1
	echo "node $a in $na, node $b in $nb"
	[ -n "$na" ] && [ "$na" != "$nb" ] || return 1
	link_mtus "$a" "$3" softhca0 "$4" || return 1
	umtu=$(ip netns exec "$na" cat /sys/class/net/eth0/mtu) || return 1
	[ "$umtu" = $(($3 + 50)) ] || { echo "$na: underlay MTU $umtu, not $(($3 + 50))"; return 1; }
}
