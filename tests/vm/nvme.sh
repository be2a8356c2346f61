# SPDX-License-Identifier: GPL-2.0-or-later
# NVMe over RDMA between lab nodes (sourced by tests/vm/run and
# tests/bench/run; uses on and $lab): a target exporting a RAM disk, a
# host connecting to it, the checked cases, and fio's figures.  The image
# has nvme-cli and the nvmet-rdma and nvme-rdma modules (images/build.sh);
# fio (tests/guest/fio/build.sh) is copied in by fio_install.

nvme_nqn=nqn.2024-01.io.softhca:ram0
FIO=${SOFTHCA_CACHE:-/var/cache/softhca}/build/fio/fio

# nvme_target NODE [PARAM...]: a brd RAM disk of NVME_RD_KB KiB (64 MiB)
# as namespace 1 of $nvme_nqn, on an nvmet-rdma port at
# 10.0.0.NODE:4420 (IPv4), any host allowed; PARAMs go to nvmet-rdma
# (use_srq=1: receives through an SRQ).
nvme_target() {
	on "$1" -- sh -ec "
		modprobe brd rd_nr=1 rd_size=${NVME_RD_KB:-65536}
		modprobe nvmet-rdma ${*:2}
		cd /sys/kernel/config/nvmet
		mkdir subsystems/$nvme_nqn
		echo 1 > subsystems/$nvme_nqn/attr_allow_any_host
		mkdir subsystems/$nvme_nqn/namespaces/1
		echo -n /dev/ram0 > subsystems/$nvme_nqn/namespaces/1/device_path
		echo 1 > subsystems/$nvme_nqn/namespaces/1/enable
		mkdir ports/1
		echo rdma > ports/1/addr_trtype
		echo ipv4 > ports/1/addr_adrfam
		echo 10.0.0.$1 > ports/1/addr_traddr
		echo 4420 > ports/1/addr_trsvcid
		ln -s /sys/kernel/config/nvmet/subsystems/$nvme_nqn ports/1/subsystems/
		dmesg | tail -n 3"
}

# The reverse of nvme_target.
nvme_target_down() {
	on "$1" -- sh -c "
		cd /sys/kernel/config/nvmet
		rm -f ports/1/subsystems/$nvme_nqn
		rmdir ports/1 subsystems/$nvme_nqn/namespaces/1 subsystems/$nvme_nqn
		rmmod nvmet-rdma nvmet brd"
}

# nvme_up HOST TARGET [PARAM...]: TARGET exports the RAM disk (PARAMs go to
# its nvmet-rdma), HOST connects to it over RDMA; prints the namespace's
# block device on HOST (nvme0n1).  nvme_down undoes it, also after a
# partial start.
nvme_up() {
	local h=$1 tg=$2 dev t
	nvme_target "$tg" "${@:3}" >&2 || return 1
	on "$h" -- modprobe nvme-rdma &&
		on "$h" -- timeout 60 nvme connect -t rdma -a "10.0.0.$tg" -s 4420 -n "$nvme_nqn" \
			-q "nqn.2024-01.io.softhca:node$h" >&2 || return 1
	for t in $(seq 40); do
		dev=$(on "$h" -- sh -c "grep -lx '$nvme_nqn' /sys/block/nvme*/device/subsysnqn 2>/dev/null" |
			sed -n 's|^/sys/block/\(nvme[0-9]*n[0-9]*\)/.*|\1|p' | head -n1)
		[ -n "$dev" ] && { echo "$dev"; return 0; }
		sleep 0.5
	done
	echo "no block device of $nvme_nqn on node $h" >&2
	return 1
}

nvme_down() {	# host target
	local rc=0
	on "$1" -- timeout 60 nvme disconnect -n "$nvme_nqn" || rc=1
	nvme_target_down "$2" || rc=1
	return "$rc"
}

# nvme_rdma HOST TARGET SEED [PARAM...]: the host writes a pattern seeded
# SEED over the whole namespace and reads it back; after the disconnect,
# the target's RAM disk holds the pattern too.  PARAMs go to the target's
# nvmet-rdma.
nvme_rdma() {
	local h=$1 tg=$2 seed=$3 dev rc=1
	if dev=$(nvme_up "$h" "$tg" "${@:4}"); then
		echo "namespace: /dev/$dev"
		on "$h" -- timeout 300 blk-pattern write "/dev/$dev" "$seed" &&
			on "$h" -- timeout 300 blk-pattern verify "/dev/$dev" "$seed" && rc=0
	fi
	on "$h" -- timeout 60 nvme disconnect -n "$nvme_nqn" || rc=1
	on "$tg" -- blk-pattern verify /dev/ram0 "$seed" || rc=1
	nvme_target_down "$tg" || rc=1
	return "$rc"
}

# fio_install NODE...: fio into each node's /usr/local/bin, where it is
# not yet.
fio_install() {
	local i
	[ -x "$FIO" ] || { echo "no $FIO (make fio)"; return 1; }
	for i in "$@"; do
		on "$i" -- test -x /usr/local/bin/fio 2>/dev/null && continue
		"$lab" push "$i" "$FIO" /usr/local/bin/fio &&
			on "$i" -- chmod 0755 /usr/local/bin/fio || return 1
	done
}

# fio_job NODE DEV ARGS...: one fio job on NODE's /dev/DEV, direct I/O
# through io_uring, bounded by 300 s; prints fio's terse (version 3) line.
fio_job() {
	local node=$1 dev=$2
	shift 2
	on "$node" -- timeout 300 fio --name=softhca --filename="/dev/$dev" \
		--ioengine=io_uring --direct=1 --output-format=terse --terse-version=3 "$@"
}

# nvme_rdma_fio HOST TARGET SEED: random 4 KiB writes 32 deep through
# io_uring over the whole namespace, each block with its CRC32C and seed,
# then every block read back and checked (fio exits non-zero on a bad
# one); fio's error field is 0 and it wrote all of it.  Also prints the
# longest I/O, written or read.
nvme_rdma_fio() {
	local h=$1 tg=$2 seed=$3 dev line rc=1
	fio_install "$h" || return 1
	if dev=$(nvme_up "$h" "$tg"); then
		line=$(fio_job "$h" "$dev" --rw=randwrite --bs=4k --iodepth=32 \
			--verify=crc32c --verify_fatal=1 --randseed="$seed") &&
			echo "$line" | cut -d';' -f1-9 &&
			echo "host: longest I/O $(fio_figure max_lat_ms <<< "$line") ms" &&
			awk -F';' -v kib="${NVME_RD_KB:-65536}" \
				'/^3;/ { ok = $5 == 0 && $47 == kib } END { exit !ok }' <<< "$line" && rc=0
	fi
	nvme_down "$h" "$tg" || rc=1
	return "$rc"
}

# fio_figure WHAT < TERSE: one figure of a job's terse (version 3) line
# from fio 3.x, if the job had no error: read_iops, read_lat (the mean
# total latency, us), read_mbps or write_mbps (MB/s; fio's are KiB/s),
# max_lat_ms (the longest total latency, read or written, ms).
fio_figure() {
	awk -F';' -v what="$1" '$1 == 3 && $5 == 0 {
		if (what == "read_iops") printf "%.0f\n", $8
		else if (what == "read_lat") printf "%.1f\n", $40
		else if (what == "read_mbps") printf "%.1f\n", $7 * 1024 / 1e6
		else if (what == "write_mbps") printf "%.1f\n", $48 * 1024 / 1e6
		else if (what == "max_lat_ms") printf "%.1f\n", ($39 > $80 ? $39 : $80) / 1000
	}'
}

# nvme_fio_figures HOST TARGET: fio's figures over NVMe over RDMA, each job
# NVME_FIO_SECONDS long, as "name value" lines: 4 KiB random read IOPS 32
# deep, the mean latency of one 4 KiB random read at a time (us), and
# 1 MiB sequential read and write bandwidth 4 deep (MB/s).
nvme_fio_figures() {
	local h=$1 tg=$2 dev s=${NVME_FIO_SECONDS:-5} rc=0 name what rw bs qd
	fio_install "$h" || return 1
	dev=$(nvme_up "$h" "$tg") || { nvme_down "$h" "$tg"; return 1; }
	while read -r name what rw bs qd; do
		echo "$name $(fio_job "$h" "$dev" --rw="$rw" --bs="$bs" --iodepth="$qd" \
			--runtime="$s" --time_based < /dev/null | fio_figure "$what")"
	done <<- JOBS
		randread_4k_qd32_iops read_iops randread 4k 32
		randread_4k_qd1_lat read_lat randread 4k 1
		read_1m_bw read_mbps read 1M 4
		write_1m_bw write_mbps write 1M 4
	JOBS
	nvme_down "$h" "$tg" || rc=1
	return "$rc"
}
