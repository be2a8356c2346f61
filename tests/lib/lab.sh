# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers for scripts that drive tests/lab (sourced): VM tests, benchmarks.
# The caller sets LAB_DIR.

lab=$SOFTHCA_TOP/tests/lab
. "$SOFTHCA_TOP/tests/lib/agent.sh"

# tests/lab exec, without tests/lab: its start costs 40 ms of the host's
# CPU, a third of a call's, and the VM suite makes thousands.
on() { agent_exec "$@"; }

# The index of the RoCE v2 GID holding address $3 on node $1's device $2.
gid_index() {
	on "$1" -- ibv_devinfo -v -d "$2" |
		sed -n "s/.*GID\[ *\([0-9]*\)\]:[[:space:]]*$3, RoCE v2\$/\1/p"
}

# guest_until NODE SECONDS CONDITION: wait until the shell command
# CONDITION holds on node NODE, for up to SECONDS: checked in the guest,
# every 0.1 s, in one agent call.
guest_until() {
	on "$1" -- sh -c 'for t in $(seq '"$(($2 * 10))"'); do
		'"$3"' && exit 0
		sleep 0.1
	done
	exit 1'
}

# Wait up to 20 s until node $1 listens on TCP port 18515.
tcp_listening() {
	guest_until "$1" 20 'ss -ltn | grep -q :18515'
}

# Run "server" on node $1 in the background and "client" on node $2; both
# must succeed.  The client's output goes to stdout, then the server's.
# The tools used (pingpongs, perftest) meet on TCP port 18515 first.
pair() {	# server-node client-node server-command client-command
	local s=$1 c=$2 rc
	on -b "$s" -- sh -c "rm -f /tmp/srv.rc; $3 > /tmp/srv.log 2>&1; echo \$? > /tmp/srv.rc"
	tcp_listening "$s"
	on "$c" -- sh -c "$4"
	rc=$?
	# the server's end, up to 30 s later
	guest_until "$s" 30 '[ -e /tmp/srv.rc ]'
	echo "--- server on node $s:"
	on "$s" -- cat /tmp/srv.log
	[ "$rc" = 0 ] && [ "$(on "$s" -- cat /tmp/srv.rc)" = 0 ]
}

# A verbs tool between node 2 (server) and node 1 (client) on device $2,
# over the nodes' IPv4 GIDs, or IPv6 ones if $1 is 6: family dev tool args...
verbs_pair() {
	local family=$1 dev=$2
	shift 2
	dev_pair "$family" 2 "$dev" 1 "$dev" "$@"
}

# Wait up to 20 s until node $1 has an rdma_cm ID of command $2, in state
# $3 if given (e.g. LISTEN: rdma_cm servers listen on no TCP port).
cm_id_up() {	# node command [state]
	local t
	for t in $(seq 40); do
		on "$1" -- rdma resource show cm_id |
			grep -E "${3:+state $3 .*}comm $2( |\$)" >/dev/null && return 0
		sleep 0.5
	done
	echo "node $1: no rdma_cm ID of $2${3:+ in state $3}"
	return 1
}

# Like pair, but the client runs in the background too, so that it may take
# longer than one exec allows: both must be done within $5 seconds.  The
# client starts once the server listens on TCP port 18515, or once the
# command READY... succeeds.  Log lines are cut to 300 characters (rping
# -v prints whole buffers).  The wait does not end when a node's agent
# fails to answer: it does so for a moment while the node migrates.
pair_long() {	# server-node client-node server-command client-command seconds [READY...]
	local s=$1 c=$2 rc=1 deadline=$((SECONDS + $5))
	on -b "$s" -- sh -c "rm -f /tmp/srv.rc; $3 > /tmp/srv.log 2>&1; echo \$? > /tmp/srv.rc"
	if [ $# -gt 5 ]; then
		"${@:6}"
	else
		tcp_listening "$s"
	fi
	on -b "$c" -- sh -c "rm -f /tmp/cli.rc; $4 > /tmp/cli.log 2>&1; echo \$? > /tmp/cli.rc"
	while [ "$SECONDS" -lt "$deadline" ]; do
		on "$c" -- test -e /tmp/cli.rc && on "$s" -- test -e /tmp/srv.rc && break
		sleep 1
	done
	on "$c" -- cut -c1-300 /tmp/cli.log
	echo "--- server on node $s:"
	on "$s" -- cut -c1-300 /tmp/srv.log
	[ "$(on "$c" -- cat /tmp/cli.rc 2>/dev/null)" = 0 ] &&
		[ "$(on "$s" -- cat /tmp/srv.rc 2>/dev/null)" = 0 ] && rc=0
	[ "$rc" = 0 ] || echo "client or server failed or not done after $5 s"
	return "$rc"
}

# A verbs tool between a server and a client node that may have different
# devices (e.g. softhca0 and rxe0), over their IPv4 GIDs, or IPv6 ones if
# $1 is 6.  With PAIR_TIMEOUT set, runs both in the background (pair_long).
#   dev_pair family server-node server-dev client-node client-dev tool args...
dev_pair() {
	local family=$1 s=$2 sdev=$3 c=$4 cdev=$5 tool=$6 gs gc as ac flag=-g
	shift 6
	if [ "$family" = 6 ]; then
		as=fd00::$s ac=fd00::$c
	else
		as=::ffff:10.0.0.$s ac=::ffff:10.0.0.$c
	fi
	gs=$(gid_index "$s" "$sdev" "$as") && gc=$(gid_index "$c" "$cdev" "$ac") &&
		[ -n "$gs" ] && [ -n "$gc" ] || { echo "no GID for $as or $ac"; return 1; }
	case $tool in ib_*) flag="-F -x" ;; esac
	if [ -n "${PAIR_TIMEOUT:-}" ]; then
		pair_long "$s" "$c" "$tool -d $sdev $flag $gs $*" \
			"$tool -d $cdev $flag $gc $* 10.0.0.$s" "$PAIR_TIMEOUT"
	else
		pair "$s" "$c" "$tool -d $sdev $flag $gs $*" "$tool -d $cdev $flag $gc $* 10.0.0.$s"
	fi
}

# Device $2's hardware counter $3 on node $1 (rdma statistic show link).
hw_counter() {	# node dev name
	on "$1" -- rdma statistic show link "$2/1" |
		awk -v k="$3" '{ for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); exit } }'
}

# counters NODES DEV NAME...: device DEV's hardware counters NAME...,
# each summed over NODES (1,2): a line "NAME VALUE" each.  Fails, saying
# so on stderr, if a node lacks one.
counters() {
	local nodes=$1 dev=$2 k n v sum
	shift 2
	for k; do
		sum=0
		for n in ${nodes//,/ }; do
			v=$(hw_counter "$n" "$dev" "$k") && [ -n "$v" ] ||
				{ echo "node $n: $dev has no counter $k" >&2; return 1; }
			sum=$((sum + v))
		done
		echo "$k $sum"
	done
}

# counters_rose BEFORE AFTER [NAME...]: two readings of counters; prints
# each counter's change, and fails if one of NAME... (every counter if
# none is named) did not go up.
counters_rose() {
	local k b a rc=0 must=" ${*:3} "
	while read -r k b _ a; do
		echo "$k: $b -> $a"
		[ $# -le 2 ] || [[ $must == *" $k "* ]] || continue
		[ "$a" -gt "$b" ] || { echo "$k did not go up"; rc=1; }
	done < <(paste -d' ' <(echo "$1") <(echo "$2"))
	return "$rc"
}

# kernel_mark NODE MARK: MARK, a line in node NODE's kernel log, where
# kernel_since and kernel_reports start to read: what an earlier case made
# the kernel log (and a wrapped ring buffer) is not this case's.
kernel_mark() { on "$1" -- sh -c "echo 'softhca-case: $2' > /dev/kmsg"; }

# kernel_since NODE MARK: what node NODE's kernel logged since MARK.
kernel_since() { on "$1" -- sh -c "dmesg | sed -n '/softhca-case: $2\$/,\$p'"; }

# kernel_reports NODE MARK: each oops, BUG, warning, leak and hung task
# that node NODE's kernel logged since MARK, whole (to its end of trace, or
# 45 lines); fails if there was one.  One warning is Linux's own and is only
# noted: the iSCSI transport removes a session's target from the session's
# WQ_MEM_RECLAIM workqueue, which flushes the target's runtime-PM work on
# pm_wq, when that is pending (scsi_transport_iscsi.c, Linux 6.0 on).
kernel_reports() {	# node mark
	local log
	log=$(kernel_since "$1" "$2") || return 1
	[ -n "$log" ] || { echo "node $1: no mark $2 in its kernel log"; return 1; }
	awk -v node="$1" '
		function report() {
			if (r == "")
				return
			if (r ~ /check_flush_dependency/ && r ~ /Workqueue: iscsi_ctrl_/ &&
			    r ~ /__iscsi_unbind_session/) {
				print "# node " node ", a warning of Linux'"'"'s iSCSI transport, not softhca'"'"'s: " first
			} else {
				printf "--- node %s'"'"'s kernel reported:\n%s", node, r
				bad = 1
			}
			r = ""
		}
		/Oops|BUG:|WARNING:|kmemleak|general protection|blocked for more than/ {
			report()
			first = $0
			n = 0
		}
		first != "" {
			r = r $0 "\n"
			if (++n == 45 || /---\[ end trace/) {
				report()
				first = ""
			}
		}
		END { report(); exit bad }' <<< "$log"
}

# Node $1's RDMA port counter $2 (rdma stat show), e.g. rx_packets.
port_counter() {
	on "$1" -- rdma stat show | awk -v k="$2" '$1 == k { print $2; exit }'
}

# debian_root SUITE ROOT PACKAGES DEB...: a clean Debian root of SUITE
# (trixie, bookworm) in ROOT (mmdebstrap, apt variant) with PACKAGES
# (comma separated, or none) and our DEBs, which apt installs there with
# their dependencies from SUITE.
debian_root() {
	local suite=$1 root=$2 include=$3
	shift 3
	rm -rf "$root"
	mmdebstrap --quiet --variant=apt --components=main ${include:+--include="$include"} \
		--customize-hook="copy-in $* /tmp" \
		--customize-hook="chroot \"\$1\" sh -c 'DEBIAN_FRONTEND=noninteractive apt-get install -y -q /tmp/*.deb'" \
		"$suite" "$root" "deb $(debian_mirror) $suite main" 2>&1 | grep -v '^I: ' || true
}

# Node $1's fabric interface has MTU $2, its RDMA device $3 active MTU $4.
link_mtus() {
	on "$1" -- ip link show dev eth0 | grep -q " mtu $2 " ||
		{ echo "node $1: eth0's MTU is not $2"; return 1; }
	on "$1" -- ibv_devinfo -d "$3" | grep -Eq "active_mtu:[[:space:]]+$4 " ||
		{ echo "node $1: $3's active_mtu is not $4"; return 1; }
	echo "node $1: MTU $2, $3's active MTU $4"
}

# Set both nodes' (1 and 2) netdev MTU to $1 and wait until device $2 (on
# node 1; $3 on node 2, default the same) reports active_mtu $4.
set_link_mtu() {	# netdev-mtu dev1 dev2 active-mtu
	local i t dev
	for i in 1 2; do
		on "$i" -- ip link set eth0 mtu "$1" || return 1
	done
	for i in 1 2; do
		dev=$2
		[ "$i" = 2 ] && dev=$3
		for t in $(seq 40); do
			on "$i" -- ibv_devinfo -d "$dev" |
				grep -Eq "active_mtu:[[:space:]]+$4 " && continue 2
			sleep 0.5
		done
		echo "node $i $dev: active_mtu is not $4"
		on "$i" -- ibv_devinfo -d "$dev"
		return 1
	done
}
