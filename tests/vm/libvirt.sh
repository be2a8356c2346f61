# SPDX-License-Identifier: GPL-2.0-or-later
# libvirt (sourced by tests/vm/run): Debian 12's libvirtd (9.0, package
# libvirt-daemon-system), started here with no systemd, runs two softhca
# domains defined from scripts/libvirt-domain; RDMA works between them,
# across internal snapshots (virsh snapshot-create-as, snapshot-revert),
# and virsh destroy leaves nothing running.  Commands reach the guests
# through the guest agent that libvirt holds (tests/qga virsh:DOMAIN).
. "$SOFTHCA_TOP/tests/lib/fabric.sh"	# free_udp_ports

lv_dir='' lv_pid='' lv_ns=''

lv_log() { echo "--- libvirtd:"; tail -n 20 "$lv_dir/libvirtd.out"; }

# libvirtd in a mount namespace of its own: tmpfs over its state folders
# and our configuration over /etc/libvirt, so that nothing it or its QEMUs
# write outlives it.  Its socket is in $lv_dir/sock, where virsh finds it
# through LIBVIRT_DEFAULT_URI.  The QEMU driver runs its guests as root,
# with no cgroups, private /dev, security driver or virtlogd: a machine
# without systemd running sets none of them up for libvirt.
lv_up() {
	# unix socket paths stay under 108 bytes
	lv_dir=$(mktemp -d /tmp/slv.XXXXXX)
	mkdir -p "$lv_dir"/{etc,log,sock}
	cat > "$lv_dir/etc/libvirtd.conf" <<-EOF
		unix_sock_dir = "$lv_dir/sock"
		unix_sock_ro_perms = "0700"
		unix_sock_rw_perms = "0700"
		unix_sock_admin_perms = "0700"
		auth_unix_ro = "none"
		auth_unix_rw = "none"
		log_outputs = "3:stderr"
	EOF
	cat > "$lv_dir/etc/qemu.conf" <<-EOF
		user = "+0"
		group = "+0"
		dynamic_ownership = 0
		remember_owner = 0
		security_driver = "none"
		cgroup_controllers = [ ]
		namespaces = [ ]
		stdio_handler = "file"
		seccomp_sandbox = 0
	EOF
	unshare --mount --propagation private -- sh -c '
		set -e
		for d in /run/libvirt /var/lib/libvirt /var/cache/libvirt; do
			mkdir -p "$d"
			mount -t tmpfs -o mode=0755 tmpfs "$d"
		done
		mkdir -p /var/log/libvirt
		mount --bind "$1/log" /var/log/libvirt
		mount --bind "$1/etc" /etc/libvirt
		exec /usr/sbin/libvirtd -f /etc/libvirt/libvirtd.conf -p /run/libvirt/libvirtd.pid
	' sh "$lv_dir" > "$lv_dir/libvirtd.out" 2>&1 &
	lv_pid=$!
	export LIBVIRT_DEFAULT_URI="qemu+unix:///system?socket=$lv_dir/sock/libvirt-sock"
	for _ in $(seq 60); do
		virsh -q list > /dev/null 2>&1 && break
		kill -0 "$lv_pid" 2> /dev/null || break
		sleep 1
	done
	# (virsh version would ask for a default emulator, and there is none)
	if ! virsh -q list > /dev/null 2>&1; then
		echo "FAIL vm/libvirt-up"
		lv_log | sed 's/^/    /'
		lv_down
		return 1
	fi
	lv_ns=$(readlink "/proc/$lv_pid/ns/mnt")
	echo "# $(/usr/sbin/libvirtd --version) up, pid $lv_pid"
}

# Stop libvirtd, then any process left in its namespace (a QEMU it
# started: none once the domains are destroyed), and remove its folder.
lv_down() {
	local p
	[ -n "$lv_dir" ] || return 0
	virsh -q destroy node1 > /dev/null 2>&1
	virsh -q destroy node2 > /dev/null 2>&1
	if [ -n "$lv_pid" ]; then
		kill "$lv_pid" 2> /dev/null
		wait "$lv_pid" 2> /dev/null
	fi
	if [ -n "$lv_ns" ] && [ "$lv_ns" != "$(readlink /proc/self/ns/mnt)" ]; then
		for p in /proc/[0-9]*; do
			[ "$(readlink "$p/ns/mnt" 2> /dev/null)" = "$lv_ns" ] || continue
			echo "left in libvirtd's namespace: pid ${p#/proc/}"
			kill -9 "${p#/proc/}" 2> /dev/null
		done
	fi
	unset LIBVIRT_DEFAULT_URI
	rm -rf "$lv_dir"
	lv_dir='' lv_pid='' lv_ns=''
}

# lv_in CMD...: CMD with the lab's helpers (on, tests/lib/agent.sh)
# pointed at the domains: node I is domain nodeI.
lv_in() {
	# shellcheck disable=SC2034
	local lab_domains=1
	"$@"
}

# Wait until domain nodeI's guest is ready (what tests/lab wait checks).
lv_ready() {
	local i=$1
	for _ in $(seq 120); do
		lv_in on "$i" -- test -e /run/softhca-ready > /dev/null 2>&1 && return 0
		sleep 1
	done
	echo "node$i: not ready after 120 s"
	tail -n 30 "$lv_dir/node$i.console"
	return 1
}

# Define nodes 1 and 2 from scripts/libvirt-domain, each with a dgram
# link to the other and a qcow2 disk for its snapshots, and start them.
lv_start() {
	local ports i xml
	read -ra ports <<< "$(free_udp_ports)"
	for i in 1 2; do
		qemu-img create -q -f qcow2 "$lv_dir/node$i-vmstate.qcow2" 1G || return 1
		xml=$lv_dir/node$i.xml
		"$SOFTHCA_TOP/scripts/libvirt-domain" --console "$lv_dir/node$i.console" \
			--vmstate "$lv_dir/node$i-vmstate.qcow2" \
			"node$i" "$i" "${ports[i - 1]}" "${ports[2 - i]}" > "$xml" || return 1
		virsh -q define "$xml" || return 1
	done
	for i in 1 2; do
		virsh -q start "node$i" || { cat "$lv_dir/log/qemu/node$i.log"; return 1; }
	done
	virsh -q list
	for i in 1 2; do lv_ready "$i" || return 1; done
	lv_in devinfo 1 softhca0 > /dev/null && lv_in devinfo 2 softhca0 > /dev/null
}

# Snapshot both running domains, mark each guest, revert both: the marks
# are gone (each guest is back where it stood), and RDMA works again.
lv_snapshot_revert() {
	local i now
	for i in 1 2; do
		virsh -q snapshot-create-as "node$i" s1 || return 1
		lv_in on "$i" -- touch /tmp/after-snapshot || return 1
	done
	virsh -q snapshot-list node1
	for i in 1 2; do
		virsh -q snapshot-revert "node$i" s1 || return 1
	done
	now=$(date -u '+%Y-%m-%d %H:%M:%S')
	for i in 1 2; do
		"$QGA" --timeout 60 "virsh:node$i" ping ||
			{ echo "node$i: no agent after the revert"; return 1; }
		lv_in on "$i" -- date -u -s "$now" > /dev/null || return 1
		if lv_in on "$i" -- test -e /tmp/after-snapshot; then
			echo "node$i did not go back to its snapshot"
			return 1
		fi
	done
	lv_in softhca_pair 4 ibv_rc_pingpong -n 200 -s 4096 && lv_in rping_run 2 1 4 1000 20
}

# virsh destroy stops both QEMUs, and nothing of theirs runs on.
lv_destroy() {
	local i p left=0
	for i in 1 2; do virsh -q destroy "node$i" || return 1; done
	virsh -q list --all
	for p in /proc/[0-9]*; do
		grep -qsF "$lv_dir/" "$p/cmdline" || continue
		echo "left running: pid ${p#/proc/}: $(tr '\0' ' ' < "$p/cmdline")"
		left=1
	done
	[ "$left" = 0 ] && [ -z "$(virsh -q list --name)" ]
}
