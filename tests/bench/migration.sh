# SPDX-License-Identifier: GPL-2.0-or-later
# make bench's figures of live migration and snapshots (spec §20), sourced
# by tests/bench/run (uses $lab, on, $out): what a migration costs the
# traffic through the node that moves, beside the same traffic without a
# migration, with a softhca and an rxe node as the peer; and how long a
# lab takes to restore from a snapshot, beside its boot.  Printed, never
# asserted.
. "$here/../vm/migrate.sh"

declare -A mig

# mig_measure PEER TRAFFIC NODE: TRAFFIC (a function of migrate.sh) once
# as it is and once with NODE migrated 8 s in; its figures into mig[PEER,*].
# An ib_write_bw whose clock perftest could not calibrate
# (perftest_uncalibrated) runs again, at most three times in all, and is a
# failure after that.
mig_measure() {
	local peer=$1 traffic=$2 node=$3 how log f try
	for how in still moved; do
		f=$out/mig-$peer-$traffic-$how
		for try in 1 2 3; do
			if [ "$how" = still ]; then
				log=$("$traffic" 2>&1) || log+=$'\nfailed'
			else
				log=$(migrate_under "$node" "$traffic" 2>&1) || log+=$'\nfailed'
			fi
			echo "$log" > "$f"
			[ "$traffic" = mig_bw ] && perftest_uncalibrated "$f" || break
			echo "  migration, peer $peer, $traffic, $how: perftest could not calibrate its clock (run $try of 3)" >&2
		done
		if grep -qx failed <<< "$log" || perftest_uncalibrated "$f"; then
			mig[$peer,$traffic,$how]=fail
		elif [ "$traffic" = mig_bw ]; then
			mig[$peer,$traffic,$how]=$(awk '$1 == 65536 && NF >= 5 { printf "%.1f\n", $4 * 1.048576; exit }' \
				<<< "$log")
		else
			# the client's wait: the server's counts its first message too
			mig[$peer,$traffic,$how]=$(sed -n 's/^client: longest wait between completions \([0-9.]*\) ms$/\1/p' \
				<<< "$log")
		fi
		if [ "$how" = moved ]; then
			mig[$peer,$traffic,downtime]=$(sed -n 's/^# migration 1, .*: downtime \([0-9]*\) ms.*/\1/p' <<< "$log")
			mig[$peer,$traffic,retx]=$(sed -n 's/^# retransmissions during the case: //p' <<< "$log")
		fi
		echo "  migration, peer $peer, $traffic, $how: ${mig[$peer,$traffic,$how]:-fail}" >&2
	done
}

# ib_write_bw of 64 KiB messages for 20 s from node 1 to MIG_PEER's
# device on node MIG_PEER_NODE, with mig_verify's QP timeout (-u 16).
mig_bw() {
	PAIR_TIMEOUT=120 dev_pair 4 "$MIG_PEER_NODE" "$MIG_PEER" 1 softhca0 \
		ib_write_bw -D 20 -s 65536 -u 16
}

# rdma-verify from node 1 to the peer, checking every byte.
mig_rv() { mig_verify "$MIG_PEER" "$MIG_PEER_NODE"; }

# Node 1 sends to a peer; the softhca peer (node 2) moves, or with the rxe
# peer (node 3), node 1 itself.
migration_figures() {
	local peer moves
	echo "migration: 3 nodes on a bridge, softhca nodes 1 and 2, rxe node 3" >&2
	"$lab" up -n 3 --tap --rxe 3 >&2
	while read -r peer MIG_PEER_NODE moves; do
		MIG_PEER=$peer
		mig_measure "$peer" mig_bw "$moves"
		mig_measure "$peer" mig_rv "$moves"
	done <<- PEERS
		softhca0 2 2
		rxe0 3 1
	PEERS
	"$lab" down >&2
}

mig_row() {	# label traffic what
	local p
	printf '%-44s' "$1"
	for p in softhca0 rxe0; do printf ' %16s' "${mig[$p,$2,$3]:--}"; done
	printf '\n'
}

migration_table() {
	echo
	echo "live migration (spec §20): a softhca node moves to a new QEMU under traffic, 8 s in"
	echo "(tests/lab migrate; 3 nodes on a bridge, 1 GiB each, TCG, path MTU 1024)"
	printf '%-44s %16s %16s\n' "" "peer softhca" "peer rxe"
	mig_row "ib_write_bw 64 KiB, 20 s (MB/s), no move" mig_bw still
	mig_row "ib_write_bw 64 KiB, 20 s (MB/s), one move" mig_bw moved
	mig_row "  QEMU's downtime (ms)" mig_bw downtime
	mig_row "  retransmissions" mig_bw retx
	mig_row "rdma-verify, longest wait (ms), no move" mig_rv still
	mig_row "rdma-verify, longest wait (ms), one move" mig_rv moved
	mig_row "  QEMU's downtime (ms)" mig_rv downtime
	mig_row "  retransmissions" mig_rv retx
	echo "longest wait: between two completions at node 1, whose peer (softhca) or itself (rxe"
	echo "peer) moves; rdma-verify: rounds of every RC operation up to 8 MiB, each byte checked."
}

# Boot a lab of N nodes, save it, take it down and restore it: the seconds
# each took, the snapshot's size, and whether RDMA works after the restore.
declare -A snap
snapshot_figures() {
	local n name=bench-$$ t dir
	for n in 2 8; do
		echo "snapshot: $n nodes" >&2
		t=$SECONDS
		"$lab" up -n "$n" --tap --mem 768 >&2
		snap[$n,boot]=$((SECONDS - t))
		t=$SECONDS
		"$lab" snapshot "$name" >&2
		snap[$n,save]=$((SECONDS - t))
		dir=${LAB_SNAPSHOTS:-$SOFTHCA_CACHE/snapshots}/$name
		snap[$n,size]=$(du -sm "$dir" | cut -f1)
		"$lab" down >&2
		t=$SECONDS
		"$lab" up --from "$name" >&2
		snap[$n,restore]=$((SECONDS - t))
		if verbs_pair 4 softhca0 ibv_rc_pingpong -n 100 -s 4096 > "$out/snap" 2>&1; then
			snap[$n,rdma]=yes
		else
			snap[$n,rdma]=no
		fi
		"$lab" down >&2
		rm -rf "$dir"
	done
}

snapshot_table() {
	echo
	echo "snapshots: a lab booted, saved (tests/lab snapshot) and restored (up --from), on a bridge, 768 MiB a node"
	printf '%-10s %10s %10s %12s %12s %14s\n' nodes "boot (s)" "save (s)" "size (MB)" \
		"restore (s)" "RDMA after"
	for n in 2 8; do
		printf '%-10s %10s %10s %12s %12s %14s\n' "$n" "${snap[$n,boot]:--}" \
			"${snap[$n,save]:--}" "${snap[$n,size]:--}" "${snap[$n,restore]:--}" \
			"${snap[$n,rdma]:--}"
	done
	echo "boot and restore: until every node answers (tests/lab up); RDMA after: an"
	echo "ibv_rc_pingpong between nodes 1 and 2 at once."
}
