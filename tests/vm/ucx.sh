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

# ucx_perf on rxe: rxe reports no network header type in wc.sl, where
# UCX 1.18's UD looks for it (spec §17.2); without this, UCX drops its
# datagrams.
ucx_perf_rxe() {
	UCX_EXTRA_ENV=UCX_UD_ETH_DGID_CHECK=n ucx_perf "$@"
}
