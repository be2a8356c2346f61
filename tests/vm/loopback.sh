# SPDX-License-Identifier: GPL-2.0-or-later
# Loopback (sourced by tests/vm/run): both ends of a connection on one
# node's device, and CQs resized under its traffic.

# loopback TOOL -n N ARGS...: TOOL's server and client both on node 1's
# softhca0, over its own IPv4 GID (spec §7.1).  The frames go through the
# device's receive side (rx_packets goes up by at least N) and the
# loopback queue drops none.
loopback() {
	local n=$3 r0 r1 d
	r0=$(hw_counter 1 softhca0 rx_packets) || return 1
	interop 1 softhca0 1 softhca0 4 "$@" || return 1
	r1=$(hw_counter 1 softhca0 rx_packets) &&
		d=$(hw_counter 1 softhca0 loopback_dropped) || return 1
	echo "node 1: rx_packets $r0 -> $r1, loopback_dropped $d"
	[ $((r1 - r0)) -ge "$n" ] && [ "$d" = 0 ]
}

# cq-resize on node 1: RC traffic through the loopback while both CQs are
# resized (tests/guest/cq-resize.c), with GID $1 of softhca0.
cq_resize() {
	local g
	g=$(gid_index 1 softhca0 "$1") && [ -n "$g" ] || return 1
	on 1 -- timeout 120 cq-resize -d softhca0 -g "$g" -n 3000 -s 0x5e5
}

