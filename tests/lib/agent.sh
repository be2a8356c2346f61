# SPDX-License-Identifier: GPL-2.0-or-later
# The lab nodes' guest agents (sourced by tests/lab and tests/lib/lab.sh).

# QGA: the client (tests/agent/qga.c), built on first use.  A run of make
# test makes thousands of calls: each took 58 ms of the host's CPU as a
# Python script, and takes 6 ms.  Exported: the scripts and the tests/lab
# runs this one starts take it as it is, without looking again (48 ms).
if [ -z "${QGA:-}" ]; then
	QGA=$("$SOFTHCA_TOP/tests/agent/build.sh") ||
		die "the guest agent client did not build (tests/agent/build.sh)"
	export QGA
fi

# agent_exec [-b] I [--] CMD...: CMD as root on node I, through its guest
# agent: tests/lab's node I in $LAB_DIR or, with $lab_domains set, libvirt
# domain nodeI, whose agent libvirt holds (tests/vm/libvirt.sh).  -b: in
# the background, return at once.  125: node I is not up.
agent_exec() {
	local bg=() i addr
	[ "${1:-}" = -b ] && { bg=(-b); shift; }
	i=${1:-}
	shift
	[ "${1:-}" = -- ] && shift
	if [ -n "${lab_domains:-}" ]; then
		addr=virsh:node$i
	elif [ -S "$LAB_DIR/node$i.qga" ]; then
		addr=$LAB_DIR/node$i.qga
	else
		echo "softhca: node '$i' is not up in $LAB_DIR" >&2
		return 125
	fi
	"$QGA" --timeout 60 "$addr" exec "${bg[@]}" -- "$@"
}
