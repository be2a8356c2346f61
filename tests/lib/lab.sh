# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers for scripts that drive tests/lab (sourced): VM tests, benchmarks.
# The caller sets LAB_DIR.

lab=$SOFTHCA_TOP/tests/lab

on() { "$lab" exec "$@"; }

# The index of the RoCE v2 GID holding address $3 on node $1's device $2.
gid_index() {
	on "$1" -- ibv_devinfo -v -d "$2" |
		sed -n "s/.*GID\[ *\([0-9]*\)\]:[[:space:]]*$3, RoCE v2\$/\1/p"
}

# Run "server" on node $1 in the background and "client" on node $2; both
# must succeed.  The client's output goes to stdout, then the server's.
# The tools used (pingpongs, perftest) meet on TCP port 18515 first.
pair() {	# server-node client-node server-command client-command
	local s=$1 c=$2 t rc
	"$lab" exec -b "$s" -- sh -c "rm -f /tmp/srv.rc; $3 > /tmp/srv.log 2>&1; echo \$? > /tmp/srv.rc"
	for t in $(seq 40); do
		on "$s" -- sh -c 'ss -ltn | grep -q :18515' && break
		sleep 0.5
	done
	on "$c" -- sh -c "$4"
	rc=$?
	for t in $(seq 60); do
		on "$s" -- test -e /tmp/srv.rc && break
		sleep 0.5
	done
	echo "--- server on node $s:"
	on "$s" -- cat /tmp/srv.log
	[ "$rc" = 0 ] && [ "$(on "$s" -- cat /tmp/srv.rc)" = 0 ]
}

# A verbs tool between node 2 (server) and node 1 (client) on device $2,
# over the nodes' IPv4 GIDs, or IPv6 ones if $1 is 6: family dev tool args...
verbs_pair() {
	local family=$1 dev=$2 tool=$3 g1 g2 a1 a2
	shift 3
	if [ "$family" = 6 ]; then
		a1=fd00::1 a2=fd00::2
	else
		a1=::ffff:10.0.0.1 a2=::ffff:10.0.0.2
	fi
	g1=$(gid_index 1 "$dev" "$a1") && g2=$(gid_index 2 "$dev" "$a2") &&
		[ -n "$g1" ] && [ -n "$g2" ] || return 1
	case $tool in
	ib_*) pair 2 1 "$tool -d $dev -x $g2 -F $*" "$tool -d $dev -x $g1 -F $* 10.0.0.2" ;;
	*) pair 2 1 "$tool -d $dev -g $g2 $*" "$tool -d $dev -g $g1 $* 10.0.0.2" ;;
	esac
}
