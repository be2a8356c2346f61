# SPDX-License-Identifier: GPL-2.0-or-later
# Live migration and snapshots (sourced by tests/vm/run; spec §20): a node
# moves to a new QEMU on the same host (tests/lab migrate) while a tool
# that checks every byte runs between it and a peer.  Each migration
# reports QEMU's downtime and total time; each case the longest wait the
# peer saw between two completions and the retransmissions the softhca
# devices counted.

# Across QEMU releases: the nodes on the older release's machine type;
# a node moves to that release's emulator and back (make test-full).
old_release=${QEMU_RELEASES[1]%% *}
old_qemu=$SOFTHCA_CACHE/build/qemu-$old_release/qemu-system-x86_64

# Build the older release's emulator (qemu-device/build.sh).
old_qemu_build() {
	SOFTHCA_QEMU_VERSION=$old_release "$SOFTHCA_TOP/qemu-device/build.sh" > "$out/build.log" 2>&1 ||
		{ tail -n 20 "$out/build.log"; return 1; }
}

# The value of key $1 in QEMU's query-migrate reply $2 (JSON).
mig_figure() {
	/usr/bin/python3 -c 'import json, sys; print(json.loads(sys.argv[2]).get(sys.argv[1], "?"))' \
		"$1" "$2"
}

# The sum of softhca0's retransmits over the softhca nodes among $@.
mig_retransmits() {
	local i sum=0 v
	for i in "$@"; do
		[ "$(sed -n "${i}p" "$LAB_DIR/roles")" = softhca ] || continue
		v=$(hw_counter "$i" softhca0 retransmits) && [ -n "$v" ] || return 1
		sum=$((sum + v))
	done
	echo "$sum"
}

# migrate_under "NODE[:QEMU]..." TRAFFIC...: TRAFFIC (a case function,
# between nodes 1 and 2 or 1 and 3, that checks its own results) in the
# background and, once it has run for MIGRATE_AFTER seconds (8), each NODE
# migrated in turn (to QEMU, another build, if given); both must pass.
# The figures: each migration's downtime, what the traffic's sides say of
# their longest wait and of what they lost, and the retransmissions.
migrate_under() {
	local nodes=$1 pid rc=0 i k=0 reply before after to mark=migrate-$$-$RANDOM
	shift
	for i in 1 2; do
		kernel_mark "$i" "$mark" || return 1
	done
	before=$(mig_retransmits 1 2 3) || return 1
	"$@" > "$out/traffic.log" 2>&1 &
	pid=$!
	sleep "${MIGRATE_AFTER:-8}"
	for i in $nodes; do
		k=$((k + 1))
		to=()
		[ "${i#*:}" = "$i" ] || to=(--qemu "${i#*:}")
		i=${i%%:*}
		if ! reply=$("$lab" migrate "$i" "${to[@]}" 2> "$out/migrate.err" | tail -n 1); then
			cat "$out/migrate.err"
			rc=1
			break
		fi
		echo "# migration $k, node $i${to[1]:+ to ${to[1]}}: downtime $(mig_figure downtime "$reply") ms," \
			"total $(mig_figure total-time "$reply") ms"
	done
	# a migration after the traffic ended would test nothing
	kill -0 "$pid" 2> /dev/null || { echo "the traffic ended before the migrations did"; rc=1; }
	wait "$pid" || rc=1
	cat "$out/traffic.log"
	after=$(mig_retransmits 1 2 3) || return 1
	grep -E '^[a-z-]+: .*(longest|lost)' "$out/traffic.log" | sed 's/^/# /'
	echo "# retransmissions during the case: $((after - before))"
	for i in 1 2; do
		kernel_reports "$i" "$mark" || rc=1
	done
	return "$rc"
}

# A new QEMU that refuses node 2's state exits while rdma-verify runs
# through the node: its device has 4 KiB of transport-mem, too little for
# the QP, which it finds as it loads the device, the last of the stream.
# tests/lab migrate fails and says why, the node runs on in its old QEMU,
# and the traffic passes.
migrate_refused() {
	local pid rc=0
	mig_verify softhca0 2 > "$out/traffic.log" 2>&1 &
	pid=$!
	sleep "${MIGRATE_AFTER:-8}"
	if LAB_DEVICE_ARGS_2=transport-mem=4K "$lab" migrate 2 > "$out/migrate.log" 2>&1; then
		echo "node 2 moved to a QEMU that should have refused its state"
		rc=1
	fi
	sed 's/^/# /' "$out/migrate.log"
	grep -q 'did not migrate: .*said: .*transport-mem too small for QP' "$out/migrate.log" ||
		{ echo "not the new QEMU's refusal"; rc=1; }
	wait "$pid" || rc=1
	cat "$out/traffic.log"
	return "$rc"
}

# rdma-verify between node SERVER (device DEV) and node 1 (client,
# softhca0) for MIGRATE_SECONDS (30), which outlast the migrations (a
# count of rounds lasts as long as the machine's speed makes it); an ACK
# timeout of 268 ms (-T 16) carries RC over a downtime of up to about
# 1.8 s.  Both sides end with the same checksum over all the data.
mig_verify() {	# dev server
	local log
	log=$(PAIR_TIMEOUT=600 dev_pair 4 "$2" "$1" 1 softhca0 "timeout 600 rdma-verify" \
		-D "${MIGRATE_SECONDS:-30}" -s 0x3a11 -M 8M -T 16)
	local rc=$?
	echo "$log"
	[ "$(sed -n 's/^\(client\|server\): [0-9]* rounds in .*checksum \(0x[0-9a-f]*\), errors 0$/\2/p' \
		<<< "$log" | sort | uniq -c | awk '$1 == 2' | wc -l)" = 1 ] ||
		{ echo "no matching error-free summaries from both sides"; rc=1; }
	return "$rc"
}

# rping -V from node 1 to node 2 (rdma_cm, RC): MIGRATE_PINGS pings of
# 64 bytes, each checked by the client; the longest wait between two.
mig_rping() {
	local n=${MIGRATE_PINGS:-20000} log
	log=$(pair_long 2 1 "timeout 300 rping -s -a 10.0.0.2 -S 64 -V" \
		"longest-wait client timeout 300 rping -c -a 10.0.0.2 -S 64 -C $n -V -v" 310 \
		cm_id_up 2 rping LISTEN)
	local rc=$?
	grep -v '^ping data: rdma-ping-' <<< "$log"
	[ "$(grep -c '^ping data: rdma-ping-' <<< "$log")" = "$n" ] ||
		{ echo "not $n pings"; rc=1; }
	return "$rc"
}

# ud-echo from node 1 to node 2 for MIGRATE_SECONDS (30): every datagram
# checked, the lost ones counted, and the path back at the end.
mig_ud() {
	PAIR_TIMEOUT=120 dev_pair 4 2 softhca0 1 softhca0 "timeout 100 ud-echo" \
		-t "${MIGRATE_SECONDS:-30}"
}

# nvme_rdma_fio from node 1 to a target on node 2 (seed 27), on a RAM
# disk of 192 MiB: over 64 MiB the job can end before the migration does.
mig_nvme() { NVME_RD_KB=196608 nvme_rdma_fio 1 2 27; }

# mpi-check's checked jobs between nodes 1 and 2 over and over for
# MIGRATE_SECONDS (30), with the longest round.
mig_mpi() {
	local log
	log=$(mpi_job 1,2 "check ${MIGRATE_SECONDS:-30}")
	local rc=$?
	echo "$log"
	[ "$rc" = 0 ] && ! grep -q FAIL <<< "$log" && grep -q '^mpi-check: [0-9]* rounds in' <<< "$log"
}

# The lab saved (tests/lab snapshot), torn down, and restored from it
# (up --from): the guests run on without a reboot (the same boot IDs),
# and RDMA works between them at once.
snapshot_restore() {
	local name=vm-test-$$ ids t0 took
	ids=$(for i in 1 2; do on "$i" -- cat /proc/sys/kernel/random/boot_id; done) || return 1
	"$lab" snapshot "$name" || return 1
	"$lab" down > /dev/null 2>&1
	t0=$SECONDS
	"$lab" up --from "$name" || return 1
	took=$((SECONDS - t0))
	rm -rf "${LAB_SNAPSHOTS:-$SOFTHCA_CACHE/snapshots}/$name"
	[ "$(for i in 1 2; do on "$i" -- cat /proc/sys/kernel/random/boot_id; done)" = "$ids" ] ||
		{ echo "a node booted again"; return 1; }
	echo "# restoring the lab ($(cat "$LAB_DIR/nodes") nodes) took $took s"
	softhca_pair 4 ibv_rc_pingpong -n 200 -s 4096
}

# QMP snapshot-save and snapshot-load (savevm and loadvm) on node 1, with a
# qcow2 image made on the spot to hold the state: after the load the node
# is where it was saved (a file written since is gone) and a new RDMA
# connection to node 2 works.
savevm_loadvm() {
	local img=$out/node1-vmstate.qcow2 q=("$lab" qmp 1)
	local snap='"tag": "t", "vmstate": "vmstate", "devices": ["vmstate"]'
	rm -f "$img"
	"${q[@]}" "{\"execute\": \"blockdev-create\", \"arguments\": {\"job-id\": \"file\", \"options\": {\"driver\": \"file\", \"filename\": \"$img\", \"size\": 0}}}" \
		> /dev/null && mig_job_done 1 file &&
	"${q[@]}" "{\"execute\": \"blockdev-add\", \"arguments\": {\"driver\": \"file\", \"node-name\": \"vmfile\", \"filename\": \"$img\"}}" \
		'{"execute": "blockdev-create", "arguments": {"job-id": "qcow2", "options": {"driver": "qcow2", "file": "vmfile", "size": 268435456}}}' \
		> /dev/null && mig_job_done 1 qcow2 &&
	"${q[@]}" '{"execute": "blockdev-add", "arguments": {"driver": "qcow2", "node-name": "vmstate", "file": "vmfile"}}' \
		> /dev/null || return 1
	on 1 -- rm -f /tmp/after-savevm
	"${q[@]}" "{\"execute\": \"snapshot-save\", \"arguments\": {\"job-id\": \"save\", $snap}}" \
		> /dev/null && mig_job_done 1 save || return 1
	on 1 -- touch /tmp/after-savevm
	"${q[@]}" "{\"execute\": \"snapshot-load\", \"arguments\": {\"job-id\": \"load\", $snap}}" \
		> /dev/null && mig_job_done 1 load && "$lab" wait 1 || return 1
	if on 1 -- test -e /tmp/after-savevm; then
		echo "node 1 did not go back to its snapshot"
		return 1
	fi
	softhca_pair 4 ibv_rc_pingpong -n 200 -s 4096
}

# tests/lab down removed the lab's folder: nothing of a migrated node's
# QEMUs (their links to the files of the QEMU that ran last) is left.
lab_dir_gone() {
	[ ! -e "$LAB_DIR" ] || { ls -la "$LAB_DIR"; return 1; }
}

# Wait until QMP job $2 of node $1 has concluded without an error.
mig_job_done() {
	local t reply
	for t in $(seq 300); do
		reply=$("$lab" qmp "$1" '{"execute": "query-jobs"}') || return 1
		if grep -q '"status": "concluded"' <<< "$reply"; then
			echo "$reply"
			! grep -q '"error"' <<< "$reply" &&
				"$lab" qmp "$1" "{\"execute\": \"job-dismiss\", \"arguments\": {\"id\": \"$2\"}}" > /dev/null
			return
		fi
		sleep 1
	done
	echo "job $2 of node $1 not done after 300 s"
	return 1
}

# ib_write_bw for 30 s, 64 KiB messages, node 1 to node 2, with the QP
# timeout of mig_verify (-u 16): the bandwidth around a migration.
mig_write_bw() {
	PAIR_TIMEOUT=120 verbs_pair 4 softhca0 ib_write_bw -D 30 -s 65536 -u 16
}
