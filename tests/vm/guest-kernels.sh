# SPDX-License-Identifier: GPL-2.0-or-later
# The guest kernels users run (sourced by tests/vm/run;
# scripts/kernels.sh), besides the default one that every other layout
# boots: on each, a smoke of the whole stack between two softhca nodes,
# and interop with an rxe node on another kernel.
# Node $1 runs the kernel release that version prefix $2 names.
kernel_is() {
	local want got
	want=$(kernel_select "$2") && got=$(on "$1" -- uname -r) || return 1
	echo "node $1: $got"
	[ "$got" = "$want" ]
}
