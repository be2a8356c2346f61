# SPDX-License-Identifier: GPL-2.0-or-later
# softhca in a user's own VM (sourced by tests/vm/run): a stock Debian 13
# guest (node 2, images/stock.sh) installs the packages of
# scripts/packages.sh with apt, DKMS builds the driver there, and it
# talks to a lab node.

packages_dir=$SOFTHCA_CACHE/packages

# Push both packages to node $1 and install them with apt (the disk has
# their dependencies: no download); DKMS builds and installs softhca.ko
# for the guest's kernel.
packages_install() {
	local i=$1 deb debs=() status
	for deb in "$packages_dir"/softhca-dkms_*_all.deb \
		"$packages_dir"/softhca-ibverbs-provider_*_amd64.deb; do
		[ -e "$deb" ] || { echo "no $deb (make packages)"; return 1; }
		"$lab" push "$i" "$deb" "/tmp/${deb##*/}" || return 1
		debs+=("/tmp/${deb##*/}")
	done
	on "$i" -- env DEBIAN_FRONTEND=noninteractive timeout 1500 \
		apt-get install -y "${debs[@]}" || return 1
	status=$(on "$i" -- sh -c 'dkms status -m softhca -k "$(uname -r)"') || return 1
	echo "$status"
	grep -q ': installed$' <<< "$status"
}

# Load the driver that DKMS installed; number its port and set its MTU
# like a lab node's.
stock_fabric_up() {
	local i=$1
	on "$i" -- modprobe softhca || return 1
	on "$i" -- sh -c '
		for t in $(seq 50); do
			ifname=$(ls /sys/bus/pci/drivers/softhca/*/net 2>/dev/null) &&
				[ -n "$ifname" ] && break
			sleep 0.2
		done
		echo "softhca netdev: $ifname"
		ip link set "$ifname" mtu '"$(cat "$LAB_DIR/mtu")"' up &&
		ip addr add 10.0.0.'"$i"'/24 dev "$ifname" &&
		ip addr add fd00::'"$i"'/64 dev "$ifname" nodad || exit 1
		for t in $(seq 50); do
			ibv_devinfo -d softhca0 | grep -q PORT_ACTIVE && break
			sleep 0.2
		done
		modinfo -n softhca
		if dmesg | grep -E "Oops|BUG:|WARNING:"; then exit 1; fi'
}

# ibv_rc_pingpong between lab node 1 and the stock node; the figure is the
# time from the layout's boot to this pingpong passing.
packages_pingpong() {
	softhca_pair 4 ibv_rc_pingpong -n 200 -s 4096 || return 1
	echo "# packages: from boot to ibv_rc_pingpong passing $((SECONDS - layout_start)) s"
}
