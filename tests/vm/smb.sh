# SPDX-License-Identifier: GPL-2.0-or-later
# SMB Direct (sourced by tests/vm/run, after ulp.sh): ksmbd on the target
# serves a tmpfs share over RDMA (port 5445), and the host's cifs mounts it
# with -o rdma, writes a seeded pattern and reads it back with O_DIRECT
# (cache=none); the target finds the pattern in its share.  Debian's
# kernels build neither side's RDMA transport (CONFIG_SMB_SERVER_SMBDIRECT,
# CONFIG_CIFS_SMB_DIRECT): the nodes boot the kernel of
# scripts/smb-kernel.sh (make test-full).  The image has ksmbd-tools and
# cifs-utils.

smb_share=/srv/smb
smb_mib=64

# ksmbd on node $1: its user (root's uid under another name: ksmbd maps
# an SMB user to a Unix one), the share, the daemon.
smb_server() {
	on "$1" -- sh -ec "
		modprobe ksmbd
		grep -q '^softhca:' /etc/passwd || echo 'softhca:x:0:0::/root:/bin/sh' >> /etc/passwd
		mkdir -p /etc/ksmbd $smb_share
		mount -t tmpfs -o size=$((smb_mib + 8))m smb-share $smb_share
		printf '%s\n' '[global]' '	server min protocol = SMB3' \
			'[share]' '	path = $smb_share' '	read only = no' > /etc/ksmbd/ksmbd.conf
		ksmbd.adduser -a -p softhca softhca || ksmbd.adduser -u -p softhca softhca
		ksmbd.mountd
		for t in \$(seq 50); do [ -e /sys/class/ksmbd-control/kill_server ] && break; sleep 0.1; done
		sleep 1
		dmesg | grep -i 'ksmbd' | tail -n 5"
}

smb_server_down() {
	on "$1" -- sh -c "
		ksmbd.control --shutdown
		sleep 1
		umount $smb_share
		rmmod ksmbd"
}

# smb_direct_io HOST TARGET SEED: cifs on HOST mounts TARGET's share over
# SMB Direct and moves the pattern both ways; the mount's transport is
# RDMA (cifs's DebugData shows its SMBDirect connection).
smb_direct_io() {
	local h=$1 tg=$2 seed=$3 what rc=1
	what="smb-direct $(ulp_path "$h" "$tg")"
	smb_server "$tg" || { smb_server_down "$tg"; return 1; }
	if on "$h" -- sh -ec "modprobe cifs; mkdir -p /mnt/smb" &&
		on "$h" -- timeout 120 mount.cifs "//10.0.0.$tg/share" /mnt/smb \
			-o rdma,vers=3.1.1,username=softhca,password=softhca,cache=none,soft; then
		on "$h" -- grep ' /mnt/smb ' /proc/mounts
		on "$h" -- sh -c "grep -i -A3 smbdirect /proc/fs/cifs/DebugData" &&
			ulp_pattern_io "$h" /mnt/smb/pattern "$what" "$smb_mib" "$seed" && rc=0
		on "$h" -- timeout 60 umount /mnt/smb || rc=1
	fi
	on "$tg" -- blk-pattern verify "$smb_share/pattern" "$seed" "$smb_mib" || rc=1
	smb_server_down "$tg" || rc=1
	return "$rc"
}

smb_direct() {	# host target seed
	ulp_run "$1" "$2" smb_direct_io "$@"
}
