# SPDX-License-Identifier: GPL-2.0-or-later
# The lab's bridge fabrics (sourced by tests/lab): network namespaces
# that play hosts, each with a bridge and a tap per node, joined by the
# kernel's VXLAN when there are several.
#
#   one host       softhca-lab-ID: br0, tap I per node
#   --hosts H      softhca-lab-ID-hK, K = 1..H, each with br0 and its nodes'
#                  taps, and vx0, a VXLAN device over eth0, one end of a
#                  veth pair whose other end is on the underlay bridge ul
#                  in softhca-lab-ID-u (10.255.0.K/24)
#   --vxlan-remote one host whose vx0 runs over this machine's own network
#                  to the VXLAN endpoints of other machines' labs
#
# $LAB_DIR/mtu holds the MTU the nodes' fabric interfaces get (tests/lab
# up --mtu): the bridges and taps take it too.  VXLAN adds 50 bytes to
# every frame, so the lab's own underlay is that much larger; another
# machine's network is what it is, and the nodes then get its MTU less 50
# if that is smaller, so that RoCE's path MTU, chosen from the interface
# MTU, fits (1450 gives 1024).
#
# $LAB_DIR/netns lists the namespaces, $LAB_DIR/node-netns "I NS" where
# node I's tap is.

VXLAN_VNI=4791
VXLAN_PORT=4789
VXLAN_OVERHEAD=50
UNDERLAY_NET=10.255.0

# Two UDP ports of 127.0.0.1 free now: the ends of a -netdev dgram link.
free_udp_ports() {
	/usr/bin/python3 -c '
import socket
socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))'
}

# ns_add NS: a namespace of the lab, bridge netfilter hooks off in it (if
# br_netfilter is loaded on the host: they cost every frame).
ns_add() {
	local ns=$1 key
	registry_add netns "$ns"
	ip netns add "$ns"
	echo "$ns" >> "$LAB_DIR/netns"
	ip -n "$ns" link set lo up
	for key in arptables iptables ip6tables; do
		if ip netns exec "$ns" test -e "/proc/sys/net/bridge/bridge-nf-call-$key"; then
			ip netns exec "$ns" sysctl -qw "net.bridge.bridge-nf-call-$key=0"
		fi
	done
}

# host_bridge NS MTU NODE...: br0 in NS, with a tap for each NODE.  STP
# and multicast snooping are off: the bridge is a plain wire for ARP/ND
# and RoCE.
host_bridge() {
	local ns=$1 mtu=$2 i
	shift 2
	ip -n "$ns" link add br0 mtu "$mtu" type bridge stp_state 0 mcast_snooping 0
	ip -n "$ns" link set br0 up
	for i in "$@"; do
		ip -n "$ns" tuntap add dev "tap$i" mode tap
		ip -n "$ns" link set "tap$i" mtu "$mtu" master br0 up
		echo "$i $ns" >> "$LAB_DIR/node-netns"
	done
}

# vxlan_join NS DEV MTU PEER...: DEV, a VXLAN device, into NS's bridge,
# flooding to each PEER endpoint (and learning where MACs live).
vxlan_join() {
	local ns=$1 dev=$2 mtu=$3 peer
	shift 3
	for peer in "$@"; do
		bridge -n "$ns" fdb append 00:00:00:00:00:00 dev "$dev" dst "$peer"
	done
	ip -n "$ns" link set "$dev" mtu "$mtu" master br0 up
}

# The namespace where node $1's tap is; empty on a dgram link.
node_netns() {
	[ -e "$LAB_DIR/node-netns" ] || return 0
	awk -v i="$1" '$1 == i { print $2 }' "$LAB_DIR/node-netns"
}

# make_fabric HOSTS REMOTES NODE...: the namespaces, bridges and VXLAN
# links for the NODEs, spread over HOSTS hosts in blocks (or, with
# REMOTES, a comma-separated list of other machines' addresses, one host
# joined to them).
make_fabric() {
	local hosts=$1 remotes=$2 base k j ns nodes=() peers=() n i mtu umtu
	shift 2
	base=softhca-lab-$(lab_id)
	mtu=$(cat "$LAB_DIR/mtu")
	umtu=$((mtu + VXLAN_OVERHEAD))
	if [ -n "$remotes" ]; then
		make_remote_fabric "$base" "$remotes" "$@"
	elif [ "$hosts" = 1 ]; then
		ns_add "$base"
		host_bridge "$base" "$mtu" "$@"
	else
		ns_add "$base-u"
		ip -n "$base-u" link add ul type bridge stp_state 0
		ip -n "$base-u" link set ul up
		n=$#
		for k in $(seq 1 "$hosts"); do
			ns=$base-h$k
			ns_add "$ns"
			nodes=()
			for i in $(seq 1 "$n"); do
				[ $(((i - 1) * hosts / n + 1)) = "$k" ] && nodes+=("${!i}")
			done
			host_bridge "$ns" "$mtu" "${nodes[@]}"
			ip -n "$base-u" link add "ul$k" type veth peer name eth0 netns "$ns"
			ip -n "$base-u" link set "ul$k" mtu "$umtu" master ul up
			ip -n "$ns" link set eth0 mtu "$umtu" up
			ip -n "$ns" addr add "$UNDERLAY_NET.$k/24" dev eth0
			ip -n "$ns" link add vx0 type vxlan id "$VXLAN_VNI" \
				local "$UNDERLAY_NET.$k" dstport "$VXLAN_PORT" dev eth0
			peers=()
			for j in $(seq 1 "$hosts"); do
				[ "$j" = "$k" ] || peers+=("$UNDERLAY_NET.$j")
			done
			vxlan_join "$ns" vx0 "$mtu" "${peers[@]}"
		done
	fi
}

# One host whose VXLAN device is made in this machine's own namespace
# (where its socket stays) and then moved into the lab's: its frames go
# out over the machine's network to the other machines' labs.
make_remote_fabric() {
	local ns=$1 remotes=$2 dev mtu vx peers=()
	shift 2
	IFS=, read -ra peers <<< "$remotes"
	dev=$(ip route get "${peers[0]}" | sed -n 's/.* dev \([^ ]*\).*/\1/p')
	[ -n "$dev" ] || fail "no route to ${peers[0]}"
	mtu=$(($(cat "/sys/class/net/$dev/mtu") - VXLAN_OVERHEAD))
	if [ "$mtu" -lt "$(cat "$LAB_DIR/mtu")" ]; then
		log "MTU $mtu: $dev's less VXLAN's $VXLAN_OVERHEAD bytes"
		echo "$mtu" > "$LAB_DIR/mtu"
	fi
	mtu=$(cat "$LAB_DIR/mtu")
	ns_add "$ns"
	host_bridge "$ns" "$mtu" "$@"
	vx=vx$(lab_id)
	ip link add "$vx" type vxlan id "$VXLAN_VNI" dstport "$VXLAN_PORT" dev "$dev"
	ip link set "$vx" netns "$ns" || { ip link del "$vx"; fail "cannot move $vx into $ns"; }
	vxlan_join "$ns" "$vx" "$mtu" "${peers[@]}"
}

# Every namespace of the lab, and with them their bridges, taps, veths
# and VXLAN devices.
fabric_down() {
	local ns
	[ -e "$LAB_DIR/netns" ] || return 0
	while read -r ns; do ip netns del "$ns" 2>/dev/null || true; done < "$LAB_DIR/netns"
	rm -f "$LAB_DIR/netns" "$LAB_DIR/node-netns"
}
