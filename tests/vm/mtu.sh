# SPDX-License-Identifier: GPL-2.0-or-later
# Path MTUs and large messages (sourced by tests/vm/run): segmentation at
# exactly the path MTU, jumbo frames, 64 MiB and 1 GiB messages.

# mtu_pingpong MTU SIZE N: a checked pingpong at path MTU MTU; node 2 must
# receive each ping in ceil(SIZE/MTU) packets, plus 1..ceil(SIZE/MTU) ACKs
# of each pong: so segmentation is at exactly MTU.
mtu_pingpong() {
	local mtu=$1 size=$2 n=$3 k rx0 rx1
	k=$(((size + mtu - 1) / mtu))
	rx0=$(port_counter 2 rx_packets) || return 1
	interop 2 softhca0 1 softhca0 4 ibv_rc_pingpong -n "$n" -s "$size" -m "$mtu" -c || return 1
	rx1=$(port_counter 2 rx_packets) || return 1
	echo "node 2 received $((rx1 - rx0)) packets; $n pings of $k packets each"
	[ $((rx1 - rx0)) -ge $((n * (k + 1))) ] && [ $((rx1 - rx0)) -le $((2 * n * k)) ]
}

# at_mtu NETDEV-MTU ACTIVE-MTU CMD...: set both nodes' link MTU, wait for
# the active MTU, run CMD.  at_4096: jumbo frames, an active MTU of 4096.
at_mtu() {
	set_link_mtu "$1" softhca0 softhca0 "$2" && "${@:3}"
}
at_4096() { at_mtu 9000 4096 "$@"; }

# large TOOL SIZE N SECONDS: perftest bandwidth of N messages of SIZE bytes;
# node 2's RDMA port moved at least SIZE*N/4096 packets of payload.
large_bw() {
	local tool=$1 size=$2 n=$3 p0 p1 c=rx_packets
	[ "$tool" = ib_read_bw ] && c=tx_packets
	p0=$(port_counter 2 $c) || return 1
	PAIR_TIMEOUT=$4 interop 2 softhca0 1 softhca0 4 "$tool" -n "$n" -s "$size" -m 4096 || return 1
	p1=$(port_counter 2 $c) || return 1
	echo "node 2 $c: $((p1 - p0)) for $((size * n / 4096)) MTUs of payload"
	[ $((p1 - p0)) -ge $((size * n / 4096)) ]
}

# One message of MAX_MSG_SIZE (1 GiB) each way, its contents checked.
max_msg() {
	PAIR_TIMEOUT=$1 interop 2 softhca0 1 softhca0 4 ibv_rc_pingpong -n 1 -s 1073741824 -m 4096 -c
}
