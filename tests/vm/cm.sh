# SPDX-License-Identifier: GPL-2.0-or-later
# Datagrams and the connection manager (sourced by tests/vm/run): the
# librdmacm tools over IPv4 and IPv6, perftest over rdma_cm, and bad
# datagrams (tests/guest/ud-bad-input.c).  The functions name the device,
# so that they run on rxe too.

# Node $2's fabric address of family $1 (4 or 6).
node_addr() {
	if [ "$1" = 6 ]; then echo "fd00::$2"; else echo "10.0.0.$2"; fi
}

# cm_pair SERVER CLIENT TOOL SERVER-ARGS CLIENT-ARGS SECONDS: an rdma_cm
# tool, the client started once the server listens; both bounded by
# timeout, both must exit 0.  The output: the client's, then the server's.
cm_pair() {
	pair_long "$1" "$2" "timeout $6 $3 $4" "timeout $6 $3 $5" $(($6 + 10)) \
		cm_id_up "$1" "$3" LISTEN
}

# want_count N REGEX: N lines of stdin match REGEX (output passed on).
want_count() {
	local log n
	log=$(cat)
	echo "$log"
	n=$(grep -cE "$2" <<< "$log")
	[ "$n" = "$1" ] || { echo "$n lines match '$2', expected $1"; return 1; }
}

# Run "$@" (its output on stdout), then check it with want_count N REGEX:
# checked CMD... -- N REGEX.  Both must succeed.
checked() {
	local cmd=() st
	while [ "$1" != -- ]; do cmd+=("$1"); shift; done
	shift
	"${cmd[@]}" 2>&1 | want_count "$@"
	st=("${PIPESTATUS[@]}")
	[ "${st[0]}" = 0 ] && [ "${st[1]}" = 0 ]
}

# rping SERVER CLIENT FAMILY SIZE COUNT: -V, the client checks each ping's
# data; it must print COUNT pings and no mismatch.
rping_run() {
	local a
	a=$(node_addr "$3" "$1")
	checked cm_pair "$1" "$2" rping "-s -a $a -S $4 -V" \
		"-c -a $a -S $4 -C $5 -V -v" 120 -- "$5" '^ping data: rdma-ping-[0-9]+: '
}

# ucmatose/udaddy SERVER CLIENT FAMILY CONNECTIONS COUNT SIZE: every
# connection moves COUNT messages each way; both sides end with status 0.
cmatose_run() {	# tool server client family connections count size
	local a
	a=$(node_addr "$4" "$2")
	checked cm_pair "$2" "$3" "$1" "-b $a -c $5 -C $6 -S $7" \
		"-s $a -c $5 -C $6 -S $7" 120 -- 2 '^return status 0$'
}

# rdma_server/rdma_client SERVER CLIENT FAMILY: one send and receive each
# way over the librdmacm verbs helpers; both end with status 0.
rdma_server_client() {
	local a
	a=$(node_addr "$3" "$1")
	checked pair_long "$1" "$2" "timeout 60 rdma_server -s $a" \
		"timeout 60 rdma_client -s $a" 70 cm_id_up "$1" rdma_server LISTEN \
		-- 2 '^rdma_(server|client): end 0$'
}

# Wait up to 20 s until node $1's fabric interface is in IP multicast
# group $2 (rdma_cm joins it for a RoCE v2 multicast join).
mcast_joined() {
	local t
	for t in $(seq 40); do
		on "$1" -- ip maddr show dev eth0 | grep -q "inet  *$2\$" && return 0
		sleep 0.5
	done
	echo "node $1: not in group $2"
	return 1
}

# mckey SENDER RECEIVER GROUP: the receiver joins the IPv4 group GROUP and
# must get N datagrams sent to it.  A sender joins, sends N and leaves at
# once, without waiting for its sends to complete: a device that has not
# sent them all by then drops the rest (rxe does, often), so up to 5
# senders run one after the other.  (rdma_cm refuses RoCE v2 joins of IPv6
# groups: ENOTSUPP.)
mckey_run() {
	local s=$1 r=$2 n=20 i t
	on -b "$r" -- sh -c "rm -f /tmp/srv.rc; timeout 60 mckey -m $3 -b 10.0.0.$r -C $n -S 256 > /tmp/srv.log 2>&1; echo \$? > /tmp/srv.rc"
	mcast_joined "$r" "$3" || return 1
	for i in 1 2 3 4 5; do
		on "$s" -- timeout 30 mckey -m "$3" -b "10.0.0.$s" -s -C "$n" -S 256 ||
			return 1
		sleep 1
		on "$r" -- test -e /tmp/srv.rc && break
	done
	for t in $(seq 30); do
		on "$r" -- test -e /tmp/srv.rc && break
		sleep 1
	done
	echo "--- receiver on node $r, after $i senders:"
	on "$r" -- cat /tmp/srv.log
	[ "$(on "$r" -- cat /tmp/srv.rc)" = 0 ] &&
		on "$r" -- grep -q '^data transfers complete$' /tmp/srv.log
}

# rstream SERVER CLIENT FAMILY SIZE COUNT: rsockets, the data verified (-T v).
rstream_run() {
	local a
	a=$(node_addr "$3" "$1")
	checked cm_pair "$1" "$2" rstream "-b $a -S $4 -C $5 -T v" \
		"-s $a -S $4 -C $5 -T v" 120 -- 2 "^custom +[0-9.]+[kmg]? +$5 +1 "
}

# perftest over rdma_cm (-R): SERVER CLIENT DEV FAMILY TOOL ARGS... (-n and
# -s first); the client reports N messages of SIZE bytes.
perftest_cm() {
	local s=$1 c=$2 dev=$3 a six="" st
	a=$(node_addr "$4" "$s")
	[ "$4" = 6 ] && six=--ipv6-addr
	shift 4
	# -F: the VMs' clocks are too noisy for perftest's CPU MHz check
	pair_long "$s" "$c" "timeout 120 $* -d $dev -F -R $six" \
		"timeout 120 $* -d $dev -F -R $six $a" 130 cm_id_up "$s" "$1" LISTEN 2>&1 |
		want_bw "$5" "$3"
	st=("${PIPESTATUS[@]}")
	[ "${st[0]}" = 0 ] && [ "${st[1]}" = 0 ]
}

# IPv4 datagrams node $1's IP stack dropped for a bad checksum or length.
ip_header_drops() {
	on "$1" -- nstat -az IpExtInCsumErrors IpExtInTruncatedPkts |
		awk '/^IpExt/ { n += $2 } END { print n + 0 }'
}

# ud_bad_input DEV: node 1 sends node 2's UD QP datagrams with a wrong
# Q_Key, its QP1 datagrams that are not MADs, and hand-built RoCEv2 frames
# with a bad IPv4 checksum, a bad IPv4 length and a bad ICRC, among good
# ones; node 2 receives exactly the good ones.  Node 2's IP stack counts
# the two bad headers (they are not RoCEv2 to the device); on softhca its
# rx_bad_qkey, rx_bad_mad and rx_dropped counters go up by at least as
# many (rxe has no such counters); a UD pingpong works afterwards.
ud_bad_input() {
	local dev=$1 bad=25 ifname c q0 m0 d0 i0 q1 m1 d1 i1
	ifname=$(on 1 -- rdma link show "$dev/1" | sed -n 's/.* netdev \([^ ]*\).*/\1/p')
	[ -n "$ifname" ] || { echo "node 1: no netdev for $dev"; return 1; }
	if [ "$dev" = softhca0 ]; then
		for c in rx_bad_qkey rx_bad_mad rx_dropped; do
			[ -n "$(hw_counter 2 "$dev" $c)" ] ||
				{ echo "node 2: no $c"; on 2 -- rdma statistic show link "$dev/1"; return 1; }
		done
		q0=$(hw_counter 2 "$dev" rx_bad_qkey) && m0=$(hw_counter 2 "$dev" rx_bad_mad) &&
			d0=$(hw_counter 2 "$dev" rx_dropped) || return 1
	fi
	i0=$(ip_header_drops 2) || return 1
	checked dev_pair 4 2 "$dev" 1 "$dev" "timeout 60 ud-bad-input" -n 20 -b "$bad" -r "$ifname" -- \
		1 '^server: received 21 good datagrams, 0 others$' || return 1
	i1=$(ip_header_drops 2) || return 1
	echo "node 2: IP header drops $i0 -> $i1"
	[ $((i1 - i0)) -ge 2 ] || return 1
	if [ "$dev" = softhca0 ]; then
		q1=$(hw_counter 2 "$dev" rx_bad_qkey) && m1=$(hw_counter 2 "$dev" rx_bad_mad) &&
			d1=$(hw_counter 2 "$dev" rx_dropped) || return 1
		echo "node 2: rx_bad_qkey $q0 -> $q1, rx_bad_mad $m0 -> $m1, rx_dropped $d0 -> $d1"
		[ $((q1 - q0)) -ge "$bad" ] && [ $((m1 - m0)) -ge 3 ] && [ $((d1 - d0)) -ge 1 ] || return 1
	fi
	interop 2 "$dev" 1 "$dev" 4 ibv_ud_pingpong -n 50 -s 512 -c
}
