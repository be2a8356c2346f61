# SPDX-License-Identifier: GPL-2.0-or-later
# The lab nodes' guest agents (sourced by tests/lab and tests/lib/lab.sh).

# -S: no site module (qga.py needs only the standard library).  With the
# imports qga.py puts off, a call took 55 ms of CPU instead of 62, and a
# run of make test makes thousands.
QGA=(/usr/bin/python3 -S "$SOFTHCA_TOP/tests/qga.py")

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
	"${QGA[@]}" --timeout 60 "$addr" exec "${bg[@]}" -- "$@"
}
