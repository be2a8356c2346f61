# SPDX-License-Identifier: GPL-2.0-or-later
# Interop with rdma_rxe and the wire (sourced by tests/vm/run): verbs
# tools between a softhca node and an rxe one, their results checked; the
# capture of a link decoded by tshark, every ICRC checked.

# The results of one verbs tool run (on stdin, client then server output):
# ibv_*_pingpong prints "B bytes in S seconds" on both sides, B = 2*size*n;
# perftest a "size iterations peak average rate" line.  want_pingpong SIZE N
want_pingpong() {
	local log
	log=$(cat)
	echo "$log"
	[ "$(grep -c "^$((2 * $1 * $2)) bytes in [0-9.]* seconds" <<< "$log")" = 2 ] ||
		{ echo "expected 2 lines of $((2 * $1 * $2)) bytes"; return 1; }
}

# want_bw SIZE N: a perftest report of N messages of SIZE bytes.  perftest
# prints an average of 0.00 for 64 MiB messages (its own arithmetic; the
# port counters show the data moved), so the figure is checked only to be
# a number.
want_bw() {
	local log
	log=$(cat)
	echo "$log"
	awk -v s="$1" -v n="$2" '$1 == s && $2 == n && $4 ~ /^[0-9]+\.[0-9]+$/ { ok = 1 }
		END { exit !ok }' <<< "$log" || { echo "no report of $2 x $1 bytes"; return 1; }
}

# interop SERVER-NODE SERVER-DEV CLIENT-NODE CLIENT-DEV FAMILY TOOL ARGS...:
# -n and -s must be among ARGS, first; without -s (ib_atomic_bw) messages
# are 8 bytes.
interop() {
	local s=$1 sdev=$2 c=$3 cdev=$4 family=$5 tool=$6 n=$8 size=${10:-8} want st
	shift 6
	want=want_pingpong
	[[ $tool == ib_* ]] && want=want_bw
	dev_pair "$family" "$s" "$sdev" "$c" "$cdev" "$tool" "$@" 2>&1 | "$want" "$size" "$n"
	st=("${PIPESTATUS[@]}")
	[ "${st[0]}" = 0 ] && [ "${st[1]}" = 0 ]
}

# Node 1 is softhca0, node 2 rxe0: softhca as client (server on node 2) and
# as server.  perftest READ/atomic run at their defaults: perftest asks for
# the remote's outstanding reads, 128 on both.
rxe_client() { interop 2 rxe0 1 softhca0 "$@"; }
rxe_server() { interop 1 softhca0 2 rxe0 "$@"; }

# The number of frames of pcap $1 that tshark's display filter $2 matches.
frames() {
	local n
	n=$(tshark -r "$1" -Y "$2" -T fields -e frame.number 2>"$out/tshark.err") ||
		{ cat "$out/tshark.err"; return 1; }
	grep -c . <<< "$n" || true
}

# The capture of node 1's link (filter-dump): tshark decodes the RoCE
# frames as InfiniBand, without errors, with the expected BTH opcodes from
# softhca; every frame's ICRC is right (tshark 4.0 shows it, does not check
# it, so tests/vm/icrc-check.c does); and a corrupted copy fails the check.
wire_check() {
	local pcap=$out/cap/node1.pcap cp=$out/wire.pcap roce ib bad ops op
	interop 2 rxe0 1 softhca0 4 ibv_rc_pingpong -n 20 -s 4096 >/dev/null &&
	interop 2 rxe0 1 softhca0 4 ib_write_bw -n 20 -s 16384 >/dev/null &&
	interop 2 rxe0 1 softhca0 4 ib_read_bw -n 20 -s 16384 >/dev/null &&
	interop 1 softhca0 2 rxe0 4 ib_read_bw -n 20 -s 16384 >/dev/null || return 1
	sleep 1
	cp "$pcap" "$cp" || return 1
	ls -l "$cp"
	roce=$(frames "$cp" 'udp.dstport == 4791') &&
	ib=$(frames "$cp" 'infiniband && udp.dstport == 4791') &&
	bad=$(frames "$cp" 'infiniband && (_ws.malformed || _ws.expert.severity >= "warning")') ||
		return 1
	echo "tshark: $roce frames to UDP 4791, $ib decoded as InfiniBand, $bad malformed/warnings"
	tshark -r "$cp" -Y infiniband 2>/dev/null | grep RRoCE | head -3
	[ "$roce" -gt 0 ] && [ "$roce" = "$ib" ] && [ "$bad" = 0 ] || return 1
	ops=$(tshark -r "$cp" -Y 'infiniband && eth.src == 52:54:00:00:00:01' \
		-T fields -e infiniband.bth.opcode 2>/dev/null | sort -nu | tr '\n' ' ')
	echo "BTH opcodes from softhca: $ops"
	# SEND F/M/L, WRITE F/M/L, READ request, READ response F/M/L, ACK
	for op in 0 1 2 6 7 8 12 13 14 15 17; do
		[[ " $ops" == *" $op "* ]] || { echo "no opcode $op from softhca"; return 1; }
	done
	cc -std=gnu11 -O2 -Wall -Wextra -Werror -I"$here/../unit" \
		-I"$here/../../qemu-device" -o "$out/icrc-check" "$here/icrc-check.c" \
		"$here/../../qemu-device/softhca-wire.c" \
		"$here/../../qemu-device/softhca-crc32.c" -lz || return 1
	"$out/icrc-check" "$cp" 52:54:00:00:00:01 52:54:00:00:00:02 || return 1
	# The checker can fail: flip a payload bit of the first RoCE frame.
	/usr/bin/python3 - "$cp" "$out/bad.pcap" <<-'PY' || return 1
		import struct, sys
		d = bytearray(open(sys.argv[1], "rb").read())
		o = 24
		while o + 16 <= len(d):
		    n = struct.unpack_from("<I", d, o + 8)[0]
		    f = o + 16
		    if d[f + 12:f + 14] == b"\x08\x00" and d[f + 36:f + 38] == b"\x12\xb7":
		        d[f + n - 5] ^= 1
		        break
		    o = f + n
		open(sys.argv[2], "wb").write(d)
	PY
	if "$out/icrc-check" "$out/bad.pcap" > "$out/bad.log" 2>&1; then
		echo "icrc-check passed a corrupted frame"
		return 1
	fi
	grep 'bad ICRC' "$out/bad.log"
}
