# SPDX-License-Identifier: GPL-2.0-or-later
# MPI cases for tests/vm/run (sourced): Debian 13's Open MPI 5 with its UCX
# PML over the nodes' RDMA devices.  mpirun on the first node starts the
# ranks over ssh (the lab's key, images/init), one per node; the job is
# tests/guest/mpi/mpi-check, copied in by mpi_install.

MPI_CHECK=$SOFTHCA_CACHE/build/mpi-tests/mpi-check

# Of the two-host layout, node 4 drops 2 % of the frames it sends and of
# those it receives: it serves only the MPI job, whose results must still
# be right, and whose frames node 4's device must have recovered.
mpi_faults=fault-tx-drop=20,fault-rx-drop=20,fault-seed=4099

# mpi_install NODE...: mpi-check into each node's /usr/local/bin, where
# it is not yet.
mpi_install() {
	local i
	[ -x "$MPI_CHECK" ] || { echo "no $MPI_CHECK (make mpi-tests)"; return 1; }
	for i in "$@"; do
		on "$i" -- test -x /usr/local/bin/mpi-check 2>/dev/null && continue
		"$lab" push "$i" "$MPI_CHECK" /usr/local/bin/mpi-check &&
			on "$i" -- chmod 0755 /usr/local/bin/mpi-check || return 1
	done
}

# node_job NODE SECONDS CMD: CMD (a shell command) on NODE in the
# background, which may take longer than one exec allows; prints its
# output and succeeds if it exited 0 within SECONDS.
node_job() {
	local i=$1 deadline=$((SECONDS + $2))
	on -b "$i" -- sh -c "rm -f /tmp/job.rc; $3 > /tmp/job.log 2>&1; echo \$? > /tmp/job.rc"
	until on "$i" -- test -e /tmp/job.rc; do
		[ "$SECONDS" -lt "$deadline" ] || { on "$i" -- cat /tmp/job.log; echo "not done after $2 s"; return 1; }
		sleep 1
	done
	on "$i" -- cat /tmp/job.log
	[ "$(on "$i" -- cat /tmp/job.rc)" = 0 ]
}

# mpi_job NODES ARGS: mpi-check ARGS with one rank on each of NODES (node
# numbers, comma separated), launched from the first.  Debian's Open MPI
# turns the UCX PML off and lets it use mlx* devices only: both are set
# back.  UCX: RC, with UD for its wire-up; rxe reports no network header
# type where UCX's UD checks it (tests/vm/ucx.sh), so every job turns that
# check off: one setting for all nodes, and softhca does not need it.
# MPI_RC_TIMEOUT: UCX's RC ACK timeout, if not its default of 1 s.
mpi_job() {
	local nodes=$1 args=$2 hosts n
	hosts=$(sed 's/[0-9]\+/node&/g' <<< "$nodes")
	n=$(tr , '\n' <<< "$nodes" | wc -l)
	mpi_install ${nodes//,/ } || return 1
	node_job "${nodes%%,*}" 300 "timeout 280 mpirun --allow-run-as-root \
		--host $hosts -np $n --map-by node \
		--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any \
		-x UCX_TLS=rc_v,self -x UCX_UD_ETH_DGID_CHECK=n \
		${MPI_RC_TIMEOUT:+-x UCX_RC_VERBS_TIMEOUT=$MPI_RC_TIMEOUT} \
		mpi-check $args"
}

# mpi_check NODES: the checked jobs (allreduce, alltoall, ring, barriers).
mpi_check() {
	local log
	log=$(mpi_job "$1" check)
	local rc=$?
	echo "$log"
	[ "$rc" = 0 ] && [ "$(grep -c '^mpi-check: .*: ok' <<< "$log")" = 4 ] || return 1
	# each job's time, as figures
	sed -n 's/^mpi-check: \(.*\): ok (\(.*\))$/# mpi check \1: \2/p' <<< "$log"
}

# mpi_pingpong LABEL NODE NODE: latency and bandwidth between two nodes
# over message sizes, as figures.
mpi_pingpong() {
	local label=$1 log
	log=$(mpi_job "$2,$3" pingpong)
	local rc=$?
	echo "$log"
	[ "$rc" = 0 ] && grep -q '^mpi-check: pingpong: ok' <<< "$log" || return 1
	sed -n "s/^mpi-pingpong: */# mpi $label /p" <<< "$log"
}

# mpi_check_faults NODES NODE: mpi_check where NODE's device drops frames
# (the layout's fault injection): the results are right, and NODE's
# device dropped frames and recovered them.  A lost one-frame message
# (most of a barrier's) is resent when its ACK timeout runs out: about
# 100 ms here rather than UCX's default of 1 s, with which the job's
# barriers took 49 s more than without faults.
mpi_check_faults() {
	local nodes=$1 i=$2 before after rc=0
	local names=(fault_dropped retransmits duplicates)
	before=$(counters "$i" softhca0 "${names[@]}") || return 1
	MPI_RC_TIMEOUT=100ms mpi_check "$nodes" || rc=1
	after=$(counters "$i" softhca0 "${names[@]}") || return 1
	# the figures for the record, node $i's
	counters_rose "$before" "$after" fault_dropped retransmits |
		sed "s/^\([a-z_]*: [0-9]* -> [0-9]*\)\$/# mpi node $i \1/"
	[ "${PIPESTATUS[0]}" = 0 ] || rc=1
	return "$rc"
}

# From node $1, ssh (the lab's key) to each other of nodes 1..$2 by name:
# each answers with its hostname.
ssh_all() {
	local from=$1 n=$2 i got rc=0
	for i in $(seq "$n"); do
		[ "$i" = "$from" ] && continue
		got=$(on "$from" -- timeout 30 ssh "node$i" hostname) || got="(ssh failed)"
		echo "node$from -> node$i: $got"
		[ "$got" = "node$i" ] || rc=1
	done
	return "$rc"
}
