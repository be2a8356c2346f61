# SPDX-License-Identifier: GPL-2.0-or-later
# rdma-core's own pyverbs suite (sourced by tests/vm/run;
# tests/guest/pyverbs-run, each test bounded), on softhca0 and on rxe0 in
# the same image at the same time, the tallies side by side.

# Start the suite on node 1's softhca0 and node 2's rxe0 in the
# background, once: the first case that waits for a run starts both.
pyverbs_start() {
	local i dev
	[ -e "$out/pyverbs.started" ] && return
	touch "$out/pyverbs.started"
	for i in 1 2; do
		dev=softhca0
		[ "$i" = 2 ] && dev=rxe0
		on -b "$i" -- sh -c "rm -f /tmp/pyverbs.rc
			pyverbs-run $dev 60 > /tmp/pyverbs.log 2>&1; echo \$? > /tmp/pyverbs.rc"
	done
}

# pyverbs_done NODE: wait (30 min at most) for NODE's run, keep its log as
# $out/pyverbs.NODE and show it; the run ended with a tally.
pyverbs_done() {
	local t
	pyverbs_start
	for t in $(seq 360); do
		on "$1" -- test -e /tmp/pyverbs.rc && break
		sleep 5
	done
	on "$1" -- cat /tmp/pyverbs.log > "$out/pyverbs.$1"
	cat "$out/pyverbs.$1"
	[ "$(on "$1" -- cat /tmp/pyverbs.rc 2>/dev/null)" = 0 ] &&
		grep -q '^pyverbs ' "$out/pyverbs.$1"
}

# pyverbs_clean NODE: the run ended, and no test failed, erred or hung.
pyverbs_clean() {
	pyverbs_done "$1" || return 1
	! grep -E '^(FAIL|ERROR|HANG) ' "$out/pyverbs.$1"
}

# The tests that passed on rxe0 (node 2) but not on softhca0 (node 1).
pyverbs_gap() {
	join <(awk 'NF > 1 && $1 != "pyverbs" { print $2, $1 }' "$out/pyverbs.1" | sort) \
		<(awk 'NF > 1 && $1 != "pyverbs" { print $2, $1 }' "$out/pyverbs.2" | sort) |
		awk '$3 == "PASS" && $2 != "PASS" { print $1 }'
}

# Both tallies, and the gap by module.
pyverbs_report() {
	local gap
	[ -s "$out/pyverbs.1" ] && [ -s "$out/pyverbs.2" ] || return 0
	sed -n 's/^pyverbs /# pyverbs /p' "$out/pyverbs.1" "$out/pyverbs.2"
	gap=$(pyverbs_gap | awk '{ split($1, m, "."); print m[2] }' | uniq -c |
		awk '{ n += $1; s = s " " $2 " " $1 } END { if (n) print n " (by module:" s ")" }')
	echo "# pyverbs: passed on rxe0, not on softhca0: ${gap:-none}"
	# why softhca0 skips what it skips: the reason's first words, counted
	awk '$1 == "SKIP" { $1 = $2 = ""; print substr($0, 3, 48) }' "$out/pyverbs.1" |
		sort | uniq -c | sort -rn | sed 's/^ */# pyverbs softhca0 skips: /'
}

# Tests of features softhca implements and rxe lacks (XRC, rereg) or has:
# each must pass on softhca0, whatever rxe0 did.
pyverbs_claimed=(
	test_atomic.AtomicTest.test_xrc_atomic_cmp_and_swap
	test_atomic.AtomicTest.test_xrc_atomic_fetch_and_add
	test_cq.CQTest.test_resize_cq
	test_cqex.CqExTestCase.test_xrc_traffic_cq_ex
	test_mr.MRTest.test_mr_rereg_access
	test_mr.MRTest.test_mr_rereg_access_bad_flow
	test_mr.MRTest.test_mr_rereg_addr
	test_mr.MRTest.test_mr_rereg_atomic
	test_mr.MRTest.test_mr_rereg_pd
	test_qpex.QpExTestCase.test_qp_ex_rc_atomic_write
	test_qpex.QpExTestCase.test_qp_ex_rc_flush
	test_qpex.QpExTestCase.test_qp_ex_rc_flush_type_violate
	test_qpex.QpExTestCase.test_qp_ex_xrc_send
	test_qpex.QpExTestCase.test_qp_ex_xrc_send_imm
	test_relaxed_ordering.RoTestCase.test_ro_xrc_traffic
	test_srq.SrqTestCase.test_resize_srq
)

# pyverbs_coverage: softhca0 passed every test rxe0 passed, and every
# claimed one.
pyverbs_coverage() {
	local t gap missing=0
	[ -s "$out/pyverbs.1" ] && [ -s "$out/pyverbs.2" ] || return 1
	gap=$(pyverbs_gap)
	[ -z "$gap" ] || { echo "passed on rxe0 only:"; echo "$gap"; missing=1; }
	for t in "${pyverbs_claimed[@]}"; do
		grep -q "^PASS tests\.$t\$" "$out/pyverbs.1" ||
			{ echo "not passed on softhca0: $t"; missing=1; }
	done
	[ "$missing" = 0 ]
}
