# SPDX-License-Identifier: GPL-2.0-or-later
# Kernel RDMA consumers (ULPs) between two lab nodes: NFS over RDMA, iSER
# and SRP.  Sourced by tests/vm/run (uses on, $lab and $out).  Each test
# sets a target up on node TARGET, writes a seeded pattern from node HOST
# (tests/guest/blk-pattern.c, O_DIRECT: the data crosses the fabric both
# ways), checks it on the host and on the target, tears everything down,
# and fails on a kernel oops or warning on either node.  Every guest
# command is bounded by `timeout` or by the transport's own error timers.
#
# The image provides (images/build.sh): nfs-kernel-server, rpcbind (its
# _rpc user), netbase and libtirpc-common (/etc/services, /etc/netconfig),
# open-iscsi; /etc/exports exporting $nfs_export; the ULP modules.
#
# SMB Direct needs a kernel of our own (Debian's builds neither
# CONFIG_SMB_SERVER_SMBDIRECT nor CONFIG_CIFS_SMB_DIRECT): tests/vm/smb.sh.

# --- common ------------------------------------------------------------------

# The RDMA device of node $1 (a lab node has exactly one).
ulp_dev() {
	on "$1" -- ls /sys/class/infiniband | head -n1
}

# "softhca0@1 -> rxe0@2": who is host and who is target, for the figures.
ulp_path() {	# host target
	echo "$(ulp_dev "$1")@$1 -> $(ulp_dev "$2")@$2"
}

# ulp_timed NODE WHAT MIB CMD...: CMD on NODE, bounded by 300 s, timed by
# the guest's clock (/proc/uptime: 10 ms steps); CMD's output, then
# "ULP MB/s RATE WHAT" for MIB MiB moved (MB = 10^6 bytes).  The figure
# is kept for ulp_report if the whole case passes (ulp_run).
ulp_timed() {
	local node=$1 what=$2 mib=$3 log rc
	shift 3
	log=$(on "$node" -- sh -c 't0=$(cut -d" " -f1 /proc/uptime)
		timeout 300 "$@" || exit
		echo "elapsed $t0 $(cut -d" " -f1 /proc/uptime)"' sh "$@")
	rc=$?
	echo "$log"
	[ "$rc" = 0 ] || return 1
	awk -v what="$what" -v mib="$mib" '$1 == "elapsed" {
		s = $3 - $2; if (s < 0.01) s = 0.01
		printf "ULP MB/s %7.1f  %s (%d MiB in %.2f s)\n", mib * 1.048576 / s, what, mib, s
	}' <<< "$log" | tee -a "$out/ulp.pending"
}

# ulp_pattern_io HOST FILE WHAT MIB SEED: a pattern of MIB MiB written
# to FILE, on a mount of HOST's, and read back (O_DIRECT), both timed.
ulp_pattern_io() {
	local h=$1 f=$2 what=$3 mib=$4 seed=$5
	# blk-pattern opens without O_CREAT
	on "$h" -- timeout 60 touch "$f" &&
		ulp_timed "$h" "$what write" "$mib" blk-pattern write "$f" "$seed" "$mib" &&
		ulp_timed "$h" "$what read" "$mib" blk-pattern verify "$f" "$seed" "$mib"
}

# ulp_run HOST TARGET FUNCTION ARGS...: FUNCTION, then neither node's
# kernel logged an oops, a warning or a hung task since it started
# (kernel_reports).
ulp_run() {
	local h=$1 tg=$2 mark=ulp-$$-$RANDOM rc=0 n
	shift 2
	rm -f "$out/ulp.pending"
	for n in $(printf '%s\n' "$h" "$tg" | sort -u); do
		kernel_mark "$n" "$mark" || return 1
	done
	"$@" || rc=1
	for n in $(printf '%s\n' "$h" "$tg" | sort -u); do
		echo "--- kernel log of node $n during the case (last 25 lines):"
		kernel_since "$n" "$mark" | tail -n 25
		kernel_reports "$n" "$mark" || rc=1
	done
	[ "$rc" = 0 ] && cat "$out/ulp.pending" >> "$out/ulp.figures" 2>/dev/null
	rm -f "$out/ulp.pending"
	return "$rc"
}

# The figures of the cases that passed since the last report, as comments.
ulp_report() {
	[ -s "$out/ulp.figures" ] && sed 's/^/# /' "$out/ulp.figures"
	rm -f "$out/ulp.figures"
	return 0
}

# --- NFS over RDMA -----------------------------------------------------------

# The export: a tmpfs of its own, fsid=0 in /etc/exports (tmpfs has no
# UUID for a file handle; fsid=0 also makes it NFSv4's root, "/").
nfs_export=/srv/nfs
nfs_mib=64

# nfs_server NODE: knfsd on NODE serving $nfs_export over TCP 2049 and
# RDMA 20049 (the kernel's transport list: /proc/fs/nfsd/portlist).  No
# systemd: the daemons are started by hand, in the order the units give.
# rpcbind is needed for NFSv3 (the kernel's v3 and lockd registrations
# must succeed, and a v3 client finds mountd through it).  A 10 s grace
# period (the least nfsd takes) keeps NFSv4's first OPEN from waiting 90 s.
nfs_server() {
	on "$1" -- sh -ec "
		modprobe nfsd
		modprobe rpcrdma
		grep -q ' /proc/fs/nfsd ' /proc/mounts || mount -t nfsd nfsd /proc/fs/nfsd
		mkdir -p $nfs_export
		mount -t tmpfs -o size=$((nfs_mib + 8))m nfs-export $nfs_export
		rpcbind -f < /dev/null > /tmp/rpcbind.log 2>&1 &
		echo \$! > /tmp/rpcbind.pid
		for t in \$(seq 50); do [ -S /run/rpcbind.sock ] && break; sleep 0.1; done
		exportfs -ra
		rpc.mountd -F < /dev/null > /tmp/mountd.log 2>&1 &
		echo \$! > /tmp/mountd.pid
		for t in \$(seq 50); do rpcinfo -p 2>/dev/null | grep -q mountd && break; sleep 0.1; done
		rpcinfo -p | grep -q mountd
		rpc.nfsd -G 10 -L 10 4
		echo 'rdma 20049' > /proc/fs/nfsd/portlist
		exportfs -v
		cat /proc/fs/nfsd/portlist"
}

# The reverse of nfs_server (also after a partial start).
nfs_server_down() {
	on "$1" -- sh -c "
		rpc.nfsd 0
		exportfs -ua
		kill \$(cat /tmp/mountd.pid /tmp/rpcbind.pid 2>/dev/null) 2>/dev/null
		cat /tmp/mountd.log /tmp/rpcbind.log 2>/dev/null
		umount $nfs_export
		umount /proc/fs/nfsd
		rmmod nfsd"
}

# The server's svc_rdma counters of node $1: receives, RDMA Reads (it
# pulls what a client writes) and RDMA Writes (it pushes what one reads).
nfs_rdma_stats() {
	on "$1" -- sh -c 'cd /proc/sys/sunrpc/svc_rdma && echo $(cat rdma_stat_recv rdma_stat_read rdma_stat_write)'
}

# nfs_rdma_io HOST TARGET SEED VERS: HOST mounts TARGET's export over RDMA
# (NFS version VERS), writes a $nfs_mib MiB file with blk-pattern and reads
# it back with O_DIRECT (so from the server, not the page cache); the
# target finds the pattern in its tmpfs, and its RDMA transport did
# receives, Reads and Writes.  A soft mount bounds a hung server (EIO).
nfs_rdma_io() {
	local h=$1 tg=$2 seed=$3 vers=$4 src opts what s0 s1 rc=1
	src=10.0.0.$tg:$nfs_export
	opts=rdma,port=20049,vers=$vers,soft,timeo=300,retrans=2
	if [ "$vers" = 3 ]; then
		opts+=,nolock	# no rpc.statd on the client
	else
		src=10.0.0.$tg:/
	fi
	what="nfs-v$vers $(ulp_path "$h" "$tg")"
	nfs_server "$tg" && s0=$(nfs_rdma_stats "$tg") || { nfs_server_down "$tg"; return 1; }
	if on "$h" -- sh -ec "modprobe rpcrdma; modprobe nfsv${vers%%.*}; mkdir -p /mnt/nfs" &&
		on "$h" -- timeout 120 mount.nfs "$src" /mnt/nfs -o "$opts"; then
		on "$h" -- grep ' /mnt/nfs ' /proc/mounts
		on "$h" -- sh -c "grep ' /mnt/nfs ' /proc/mounts | grep -q proto=rdma" &&
			ulp_pattern_io "$h" /mnt/nfs/pattern "$what" "$nfs_mib" "$seed" && rc=0
		on "$h" -- timeout 60 umount /mnt/nfs || rc=1
	fi
	s1=$(nfs_rdma_stats "$tg")
	echo "node $tg svc_rdma recv/read/write: $s0 -> $s1"
	awk -v a="$s0" -v b="$s1" 'BEGIN { split(a, x); split(b, y)
		exit !(y[1] > x[1] && y[2] > x[2] && y[3] > x[3]) }' || rc=1
	on "$tg" -- blk-pattern verify "$nfs_export/pattern" "$seed" "$nfs_mib" || rc=1
	nfs_server_down "$tg" || rc=1
	return "$rc"
}

nfs_rdma() {	# host target seed vers
	ulp_run "$1" "$2" nfs_rdma_io "$@"
}

# --- LIO: the SCSI target of iSER and SRP --------------------------------------

# The backstore: a 64 MiB brd RAM disk through target_core_iblock, so that
# the target node reads what the initiator wrote at /dev/ram0 (rd_mcp's
# pages cannot be read from the node).
lio_dev=/sys/kernel/config/target/core/iblock_0/ram0

lio_backstore() {
	on "$1" -- sh -ec "
		modprobe brd rd_nr=1 rd_size=65536
		modprobe target_core_iblock
		mkdir -p $lio_dev
		echo udev_path=/dev/ram0 > $lio_dev/control
		echo 1 > $lio_dev/enable"
}

lio_backstore_down() {
	on "$1" -- sh -c "
		rmdir $lio_dev ${lio_dev%/*}
		rmmod target_core_iblock target_core_mod brd"
}

# lio_disk NODE: the one SCSI disk of NODE that LIO exports (vendor
# LIO-ORG; the lab's nodes have no other SCSI disk), once it appeared.
lio_disk() {
	local t d
	for t in $(seq 40); do
		d=$(on "$1" -- sh -c 'grep -l LIO-ORG /sys/block/sd*/device/vendor 2>/dev/null' |
			sed -n 's|^/sys/block/\([^/]*\)/.*|\1|p')
		[ -n "$d" ] && [ "$(wc -l <<< "$d")" = 1 ] && { echo "$d"; return 0; }
		sleep 0.5
	done
	echo "node $1: no single LIO disk: '$d'" >&2
	return 1
}

# lio_pattern HOST SEED WHAT: the pattern over HOST's LIO disk (64 MiB),
# written and read back (O_DIRECT); the caller checks the RAM disk.
lio_pattern() {
	local dev
	dev=$(lio_disk "$1") || return 1
	echo "LIO disk: /dev/$dev"
	ulp_timed "$1" "$3 write" 64 blk-pattern write "/dev/$dev" "$2" &&
		ulp_timed "$1" "$3 read" 64 blk-pattern verify "/dev/$dev" "$2"
}

# --- iSER: LIO's iSCSI target with ib_isert, open-iscsi with ib_iser ---------

iscsi_iqn=iqn.2024-01.io.softhca:ram0
iscsi_tpg=/sys/kernel/config/target/iscsi/$iscsi_iqn/tpgt_1

# iser_target NODE: $iscsi_iqn with the RAM disk as LUN 0 on portal
# 10.0.0.NODE:3260, iSER enabled on it (an RDMA/CM listener next to the
# TCP one), any initiator let in (demo mode, no CHAP).
iser_target() {
	lio_backstore "$1" || return 1
	on "$1" -- sh -ec "
		modprobe ib_isert
		mkdir -p $iscsi_tpg/lun/lun_0
		cd $iscsi_tpg
		ln -s $lio_dev lun/lun_0/ram0
		mkdir np/10.0.0.$1:3260
		echo 1 > np/10.0.0.$1:3260/iser
		echo 0 > attrib/authentication
		echo 1 > attrib/generate_node_acls
		echo 0 > attrib/demo_mode_write_protect
		echo 1 > enable"
}

iser_target_down() {
	local rc
	on "$1" -- sh -c "
		echo 0 > $iscsi_tpg/enable
		rm -f $iscsi_tpg/lun/lun_0/ram0
		rmdir $iscsi_tpg/lun/lun_0 $iscsi_tpg/np/10.0.0.$1:3260 $iscsi_tpg
		rmdir ${iscsi_tpg%/*} ${iscsi_tpg%/*/*}
		rmmod ib_isert iscsi_target_mod"
	rc=$?
	lio_backstore_down "$1" && [ "$rc" = 0 ]
}

# iscsi_login NODE PORTAL: iscsid on NODE (by hand, in the foreground: no
# systemd), a node record for $iscsi_iqn at PORTAL on open-iscsi's
# built-in "iser" interface, and a login.  iscsid locks under /run/lock
# (a tmpfs at boot) and needs the node's own initiator name.  It runs in
# a session of its own: when it stops it signals its whole process group,
# which would otherwise be the guest agent's.
#
# The session logs in without a LUN scan (node.session.scan manual);
# iscsi_scan starts it once the target has registered the session.
iscsi_login() {
	on "$1" -- sh -ec "
		modprobe ib_iser
		modprobe sd_mod
		mkdir -p /run/lock
		echo InitiatorName=iqn.2024-01.io.softhca:node$1 > /etc/iscsi/initiatorname.iscsi
		setsid iscsid -f < /dev/null > /tmp/iscsid.log 2>&1 &
		echo \$! > /tmp/iscsid.pid
		for t in \$(seq 50); do
			grep -q ISCSIADM_ABSTRACT_NAMESPACE /proc/net/unix && break
			sleep 0.1
		done
		iscsiadm -m node -o new -T $iscsi_iqn -p $2 -I iser
		iscsiadm -m node -T $iscsi_iqn -p $2 -I iser -o update \
			-n node.session.scan -v manual
		timeout 90 iscsiadm -m node -T $iscsi_iqn -p $2 -I iser --login"
}

# iscsi_scan HOST TARGET: once TARGET lists HOST's session, HOST scans
# it for LUNs.  The 6.12 kernels' ib_isert posts the final login response
# before the target has set the session's parameters (7.3's posts it
# later, from isert_get_rx_pdu()); a SCSI command that lands in between
# finds MaxBurstLength 0 and spins the target's CPU in
# iscsit_build_pdu_and_seq_lists().  LIO registers the session
# (dynamic_sessions) after it sets them, so nothing is sent before.
iscsi_scan() {
	if on "$1" -- sh -c 'ls /sys/class/iscsi_session/*/device/target* 2>/dev/null' | grep -q .; then
		echo "node $1: the session was scanned at login, before the target had set it up" >&2
		return 1
	fi
	guest_until "$2" 30 "grep -q iqn.2024-01.io.softhca:node$1 \
		$iscsi_tpg/dynamic_sessions" || {
		echo "node $2: no session from node $1" >&2
		return 1
	}
	on "$1" -- iscsiadm -m session -R
}

iscsi_logout() {
	on "$1" -- sh -c "
		timeout 60 iscsiadm -m node -T $iscsi_iqn -p $2 -I iser --logout
		iscsiadm -m node -o delete -T $iscsi_iqn -p $2 -I iser
		kill \$(cat /tmp/iscsid.pid)
		cat /tmp/iscsid.log
		rmmod ib_iser"
}

# iser_rdma_io HOST TARGET SEED: HOST logs in to TARGET over iSER (the
# session's transport is iser), the pattern goes over the LUN.
iser_rdma_io() {
	local h=$1 tg=$2 seed=$3 portal=10.0.0.$2:3260 sessions rc=1
	iser_target "$tg" || { iser_target_down "$tg"; return 1; }
	if iscsi_login "$h" "$portal" && iscsi_scan "$h" "$tg"; then
		sessions=$(on "$h" -- iscsiadm -m session)
		echo "$sessions"
		grep -q "^iser: .* $iscsi_iqn " <<< "$sessions" &&
			lio_pattern "$h" "$seed" "iser $(ulp_path "$h" "$tg")" && rc=0
	fi
	iscsi_logout "$h" "$portal" || rc=1
	on "$tg" -- blk-pattern verify /dev/ram0 "$seed" || rc=1
	iser_target_down "$tg" || rc=1
	return "$rc"
}

# iser_login_race HOST TARGET: a login, then the LUN only once TARGET has
# set up the session (see iscsi_scan); no I/O beyond the scan.
iser_login_race() {
	local portal=10.0.0.$2:3260 rc=1
	iser_target "$2" || { iser_target_down "$2"; return 1; }
	iscsi_login "$1" "$portal" && iscsi_scan "$1" "$2" && lio_disk "$1" && rc=0
	iscsi_logout "$1" "$portal" || rc=1
	iser_target_down "$2" || rc=1
	return "$rc"
}

iser_rdma() {	# host target seed
	ulp_run "$1" "$2" iser_rdma_io "$@"
}

# --- SRP: ib_srpt through configfs, ib_srp through sysfs ----------------------

srpt_dir=/sys/kernel/config/target/srpt
srp_port=5000	# ib_srpt's RDMA/CM listener (RoCE has no SRP discovery)

# GID 0 of node $1's RDMA port as 32 hex digits: both ib_srp and ib_srpt
# name their ports after it (rdma_query_gid(..., 0, ...)).
srp_gid0() {
	on "$1" -- sh -c 'cat /sys/class/infiniband/*/ports/1/gids/0' | tr -d ':\n'
}

# srp_target NODE TPORT ACL: the RAM disk as LUN 0 of target port TPORT
# (ib_srpt's name of the port: "0x" and its GID 0), reachable over
# RDMA/CM on $srp_port, for initiator port ACL only (ib_srpt has no demo
# mode): the LUN is mapped to it.
srp_target() {
	local tpg=$srpt_dir/$2/tpg_1
	lio_backstore "$1" || return 1
	on "$1" -- sh -ec "
		modprobe ib_srpt
		mkdir -p $tpg/lun/lun_0
		echo $srp_port > $srpt_dir/discovery_auth/rdma_cm_port
		ln -s $lio_dev $tpg/lun/lun_0/ram0
		mkdir -p $tpg/acls/$3/lun_0
		ln -s $tpg/lun/lun_0 $tpg/acls/$3/lun_0/lun_0
		echo 1 > $tpg/enable"
}

srp_target_down() {	# node tport acl
	local tpg=$srpt_dir/$2/tpg_1 rc
	on "$1" -- sh -c "
		echo 0 > $tpg/enable
		rm -f $tpg/acls/$3/lun_0/lun_0
		rmdir $tpg/acls/$3/lun_0 $tpg/acls/$3
		rm -f $tpg/lun/lun_0/ram0
		rmdir $tpg/lun/lun_0 $tpg $srpt_dir/$2
		echo 0 > $srpt_dir/discovery_auth/rdma_cm_port
		rmdir $srpt_dir
		rmmod ib_srpt"
	rc=$?
	lio_backstore_down "$1" && [ "$rc" = 0 ]
}

# srp_rdma_io HOST TARGET SEED: HOST's ib_srp logs in to TARGET over
# RDMA/CM (dest=), the pattern goes over the LUN.  The login names the
# target by id_ext and ioc_guid, both ib_srpt's service GUID (the target
# device's node GUID); the initiator port ID is initiator_ext (0) and the
# interface ID of the host's GID 0, which is the name of the ACL.
srp_rdma_io() {
	local h=$1 tg=$2 seed=$3 gh gt guid tport acl rc=1
	gh=$(srp_gid0 "$h") && gt=$(srp_gid0 "$tg") &&
		guid=$(on "$tg" -- sh -c 'cat /sys/class/infiniband/*/node_guid' | tr -d ':\n') || return 1
	[ "${#gh}" = 32 ] && [ "${#gt}" = 32 ] && [ -n "$guid" ] ||
		{ echo "GID 0: '$gh' '$gt', target node GUID '$guid'"; return 1; }
	tport=0x$gt
	acl=0x0000000000000000${gh:16}
	echo "target port $tport, initiator port $acl, service GUID $guid"
	srp_target "$tg" "$tport" "$acl" || { srp_target_down "$tg" "$tport" "$acl"; return 1; }
	if on "$h" -- sh -ec "
		modprobe ib_srp
		modprobe sd_mod
		cd /sys/class/infiniband_srp/srp-\$(ls /sys/class/infiniband | head -n1)-1
		timeout 60 sh -c 'echo id_ext=$guid,ioc_guid=$guid,dest=10.0.0.$tg:$srp_port > add_target'"; then
		lio_pattern "$h" "$seed" "srp $(ulp_path "$h" "$tg")" && rc=0
	fi
	on "$h" -- rmmod ib_srp || rc=1
	on "$tg" -- blk-pattern verify /dev/ram0 "$seed" || rc=1
	srp_target_down "$tg" "$tport" "$acl" || rc=1
	return "$rc"
}

srp_rdma() {	# host target seed
	ulp_run "$1" "$2" srp_rdma_io "$@"
}
