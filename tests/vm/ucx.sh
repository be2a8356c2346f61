# SPDX-License-Identifier: GPL-2.0-or-later
# UCX cases for tests/vm/run (sourced): Debian 13's UCX over the verbs
# transports of a node's RDMA device, and its perftest between two nodes.

# ucx_info -d on node $1 lists device $2's port with the rc_verbs and
# ud_verbs transports.
ucx_transports() {
	local i=$1 dev=$2 info tl rc=0
	info=$(on "$i" -- ucx_info -d) || return 1
	for tl in rc_verbs ud_verbs; do
		awk -v tl="$tl" -v dev="$dev:1" '
			$2 == "Transport:" { t = $3 }
			$2 == "Device:" && t == tl && $3 == dev { ok = 1 }
			END { exit !ok }' <<< "$info" ||
			{ echo "ucx_info -d: no $tl on $dev:1"; rc=1; }
	done
	# its lines start with "#": shown, as a case's figures would be, only
	# when it fails
	[ "$rc" = 0 ] || sed -n 's/^# *\(Memory domain\|Transport\|Device\):/  &/p' <<< "$info"
	return "$rc"
}

# ucx_perf SERVER CLIENT DEV TLS TEST SIZE N: ucx_perftest's TEST of N
# messages of SIZE bytes from CLIENT to SERVER over DEV, UCX_TLS=TLS (an
# alias: rc_v is rc_verbs with ud_verbs for wire-up, ud_v ud_verbs).
# Debian's ucx_perftest is built with MPI: -P 0 runs it without.  The
# figure is its "Final:" line: iterations, latency (typical, average,
# overall, µs), bandwidth (average, overall, MB/s), message rate.
ucx_perf() {
	local s=$1 c=$2 dev=$3 tls=$4 test=$5 size=$6 n=$7 env log final
	env="env UCX_NET_DEVICES=$dev:1 UCX_TLS=$tls ${UCX_EXTRA_ENV:-}"
	log=$(pair_long "$s" "$c" "$env timeout 150 ucx_perftest -P 0 -p 18515" \
		"$env timeout 150 ucx_perftest -P 0 -p 18515 -t $test -s $size -n $n 10.0.0.$s" 160)
	local rc=$?
	echo "$log"
	final=$(grep -m1 '^Final:' <<< "$log")
	[ "$rc" = 0 ] && [ "$(awk '{ print $2 }' <<< "$final")" = "$n" ] ||
		{ echo "no Final: line of $n iterations"; return 1; }
	echo "# ucx $dev $tls $test $size B: $final"
}

# The figures of one device: tag bandwidth and latency, put bandwidth,
# over RC and UD.  UCX_EXTRA_ENV: more UCX settings, for both sides.
ucx_perf_cases() {	# prefix server client dev
	local prefix=$1 s=$2 c=$3 dev=$4 tls
	for tls in rc_v ud_v; do
		case_ "$prefix-$tls-tag_lat" ucx_perf "$s" "$c" "$dev" "$tls" tag_lat 8 1000
		case_ "$prefix-$tls-tag_bw" ucx_perf "$s" "$c" "$dev" "$tls" tag_bw 65536 200
		case_ "$prefix-$tls-ucp_put_bw" ucx_perf "$s" "$c" "$dev" "$tls" ucp_put_bw 65536 200
	done
}
