# SPDX-License-Identifier: GPL-2.0-or-later
# The sanitized smoke (sourced by tests/vm/run, VM_SANITIZE=1 from
# tests/sanitize/run): the layout "sanitized" on the ASan + UBSan build of
# QEMU, whose sanitizers write their reports to files.

# No sanitizer wrote a report into folder $1 (ASan, LSan and UBSan logs,
# which also hold their warnings, such as ASan's about coroutines).
no_sanitizer_reports() {
	local f n=0
	for f in "$1"/*; do
		grep -Eqs 'ERROR: [A-Za-z]*Sanitizer|runtime error:' "$f" || continue
		cat "$f"
		n=$((n + 1))
	done
	echo "$n sanitizer reports"
	[ "$n" = 0 ]
}
