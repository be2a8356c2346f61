# SPDX-License-Identifier: GPL-2.0-or-later
# virtme-ng (sourced by tests/vm/run): the kernel developer's `vng`, from
# Debian 13 (Debian 12 has none), boots a kernel tree with a softhca NIC
# added through --qemu-opts, on the emulator of the softhca-qemu package.
# vng runs its guest on its host's own root: here a Debian 13 root that
# mmdebstrap makes, with virtme-ng, rdma-core and our two packages
# (softhca-qemu, the provider).  The tree is a kernel-tree fixture
# (tests/vm/kernel-tree.sh) of its own, copied in, with the softhca.ko
# built against it: the tree layout lays out and rebuilds $ktree, maybe at
# the same time (tests/vm/run runs layouts side by side).

vng_root=$out/vng-root
vng_tree=$SOFTHCA_CACHE/kernel-tree-fixture-vng

# The root, the tree at /ktree and softhca.ko, built against it, at
# /softhca-kmod in it.  The tree is laid out if no case did it yet.
vng_install() {
	local tree=$1 ko deb debs=() d root=$vng_root
	[ -s "$tree/modules.order" ] || fake_tree "$tree" || return 1
	ko=$("$SOFTHCA_TOP/guest-driver/build.sh" --kernel-tree "$tree") || return 1
	for deb in "$SOFTHCA_CACHE"/packages/softhca-{qemu,ibverbs-provider}_*_amd64.deb; do
		[ -e "$deb" ] || { echo "no $deb (make packages)"; return 1; }
		debs+=("$deb")
	done
	debian_root trixie "$root" virtme-ng,busybox-static,kmod,iproute2,ibverbs-utils,udev,procps "${debs[@]}"
	chroot "$root" vng --version || return 1
	# the tree: what vng reads of it, as real files
	mkdir -p "$root/ktree/arch/x86/boot" "$root/ktree/include/config" "$root/softhca-kmod" \
		"$root/usr/lib/modules"
	cp "$tree/arch/x86/boot/bzImage" "$root/ktree/arch/x86/boot/"
	cp -L "$tree/include/config/kernel.release" "$root/ktree/include/config/"
	cp -L "$tree/.config" "$root/ktree/"
	for d in drivers fs net modules.order modules.builtin modules.builtin.modinfo; do
		cp -r "$tree/$d" "$root/ktree/"
	done
	# depmod -F wants a System.map: Debian packages a placeholder one
	cp "$SOFTHCA_CACHE/kernel/$GUEST_KVER/boot/System.map-$GUEST_KVER" "$root/ktree/System.map"
	cp "$ko" "$root/softhca-kmod/"
}

# vng_run ARGS...: vng in the root, with its own /proc, /sys, /dev, for
# 10 minutes at most.
vng_run() {
	timeout 600 unshare --mount --propagation private sh -c '
		root=$1
		shift
		mount -t proc proc "$root/proc" && mount --rbind /sys "$root/sys" &&
			mount --rbind /dev "$root/dev" && mount -t tmpfs tmpfs "$root/tmp" &&
			mount -t tmpfs tmpfs "$root/run" || exit 1
		exec chroot "$root" "$@"' sh "$vng_root" "$@"
}

# One guest booted by vng on the tree, its softhca NIC on a -netdev dgram
# link: the driver loads, the port comes up at MTU 9000, and an RC
# ping-pong runs over the port's own address (the device's loopback).
vng_boot() {
	local start=$SECONDS log ports
	read -ra ports <<< "$(free_udp_ports)"
	log=$(vng_run vng --run /ktree --rw --disable-kvm --force-9p \
		--qemu /opt/softhca-qemu/bin/qemu-system-x86_64 --memory 1G \
		--qemu-opts="-L /usr/share/seabios -L /usr/share/qemu -device pcie-root-port,id=rp0,chassis=1 -netdev dgram,id=fab,local.type=inet,local.host=127.0.0.1,local.port=${ports[0]},remote.type=inet,remote.host=127.0.0.1,remote.port=${ports[1]} -device softhca,bus=rp0,netdev=fab,mac=52:54:00:00:00:01" \
		--exec 'uname -r
			modprobe -a ib_uverbs rdma_ucm && insmod /softhca-kmod/softhca.ko || exit 1
			# udev renames the netdev (eth0 to enp1s0): its final name
			udevadm settle
			n=$(ls /sys/bus/pci/drivers/softhca/*/net) && echo "softhca netdev: $n"
			ip link set "$n" mtu 9000 up && ip addr add 10.0.0.1/24 dev "$n" || exit 1
			for t in $(seq 50); do
				ibv_devinfo -d softhca0 | grep -q PORT_ACTIVE && break
				sleep 0.2
			done
			ibv_devinfo -d softhca0 | grep -E "state|active_mtu"
			ibv_rc_pingpong -d softhca0 -g 1 -n 100 -s 4096 > /run/srv.log 2>&1 &
			sleep 2
			ibv_rc_pingpong -d softhca0 -g 1 -n 100 -s 4096 10.0.0.1 && wait && cat /run/srv.log' 2>&1)
	grep -v 'depmod: WARNING' <<< "$log"
	echo "# vng: boot, set-up and ping-pong in $((SECONDS - start)) s"
	grep -q "^$GUEST_KVER\$" <<< "$log" && grep -q 'PORT_ACTIVE' <<< "$log" &&
		grep -q 'active_mtu:.*4096' <<< "$log" &&
		[ "$(grep -c '^819200 bytes in' <<< "$log")" = 2 ]
}
