#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The VM suite's table (tests/vm/cases): tests/vm/run reads it, with each
# case declared once, on a layout declared before it, calling a function
# of tests/vm/*.sh; and it refuses a table that breaks one of these.  The
# README's Status table names only cases the table declares.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$here/../..
run=$top/tests/vm/run
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0

if "$run" --list > "$out/list" 2> "$out/err" && [ -s "$out/list" ]; then
	echo "PASS unit/vm-cases/table-read"
else
	echo "FAIL unit/vm-cases/table-read"
	sed 's/^/    /' "$out/err"
	fail=1
fi

# broken NAME SED: the table edited by SED is refused, with its line named
broken() {
	sed "$2" "$top/tests/vm/cases" > "$out/$1"
	if cmp -s "$out/$1" "$top/tests/vm/cases"; then
		echo "FAIL unit/vm-cases/refuses-$1: the edit changed nothing"
		fail=1
	elif VM_CASES_TABLE=$out/$1 "$run" --list > /dev/null 2> "$out/err" ||
		! grep -q "^$out/$1:[0-9]*: " "$out/err"; then
		echo "FAIL unit/vm-cases/refuses-$1"
		sed 's/^/    /' "$out/err"
		fail=1
	else
		echo "PASS unit/vm-cases/refuses-$1"
	fi
}
broken twice 's/^case devinfo-node2 pair /case devinfo-node1 pair /'
broken no-function 's/^case devinfo-node1 pair devinfo /case devinfo-node1 pair no_such_function /'
broken no-layout 's/^case devinfo-node1 pair /case devinfo-node1 no-such-layout /'
broken layout-later '0,/^layout pair /s/^layout pair /layout pair-moved /'

# Lanes: with layouts side by side, each case runs once, each layout's
# lines come out together, and a layout declared alone has no other
# beside it.  The cases log when they start (+) and end (-).
lanes_log=$out/lanes.log
lane_case() {	# NAME LAYOUT
	echo "case $1 $2 sh -c \"echo $2+ >> $lanes_log; sleep 0.5; echo $2- >> $lanes_log\""
}
{
	echo "layout a -"
	lane_case a1 a
	echo "layout b -"
	lane_case b1 b
	echo "case b2 b true"
	echo "layout c -"
	echo "alone c"
	lane_case c1 c
	echo "layout d -"
	lane_case d1 d
} > "$out/lanes-table"
VM_LANES=2 VM_CASES_TABLE=$out/lanes-table "$run" > "$out/lanes.out" 2>&1
# the layout each PASS line comes under, and the case's own layout
misplaced=$(awk '/^# layout .* up in/ { l = $3 } /^PASS / { if (substr($2, 4, 1) != l) print }' "$out/lanes.out")
if [ "$(grep '^PASS ' "$out/lanes.out" | sort | paste -sd' ')" = "PASS vm/a1 PASS vm/b1 PASS vm/b2 PASS vm/c1 PASS vm/d1" ] &&
	[ "$(grep -c '^# layout .* took' "$out/lanes.out")" = 4 ] && [ -z "$misplaced" ] &&
	[ "$(grep -A1 -x 'c+' "$lanes_log" | paste -sd' ')" = "c+ c-" ] &&
	awk '/[+]$/ { open++ } /-$/ { open-- } $0 == "c+" && open != 1 { bad = 1 } END { exit bad }' "$lanes_log" &&
	[ "$(grep -c '+$' "$lanes_log")" = 4 ]; then
	echo "PASS unit/vm-cases/lanes"
else
	echo "FAIL unit/vm-cases/lanes"
	sed 's/^/    /' "$out/lanes.out" "$lanes_log"
	fail=1
fi

# A layout a failed case wedged boots again before the next case: a
# guest hung by the iSER login race (tests/vm/ulp.sh, iscsi_scan) failed
# every case after it.  The layout's up= leaves a lab whose one node's
# QEMU has exited, so tests/lab status fails after the case; the failed
# case shows what that QEMU wrote to stderr.
wedge_log=$out/wedge.log
cat > "$out/wedge-up" <<END
#!/bin/sh
echo up >> $wedge_log
echo 1 > "\$LAB_DIR/first"
echo 1 > "\$LAB_DIR/nodes"
sh -c 'echo \$\$' > "\$LAB_DIR/node1.pid"
echo "qemu-system-x86_64: the wedged node's last words" > "\$LAB_DIR/node1.qemu.log"
END
printf '#!/bin/sh\necho down >> %s\n' "$wedge_log" > "$out/wedge-down"
chmod +x "$out/wedge-up" "$out/wedge-down"
{
	echo "layout w up=$out/wedge-up down=$out/wedge-down"
	echo "case w-fails w false"
	echo "case w-next w sh -c \"echo next >> $wedge_log\""
} > "$out/wedge-table"
VM_LANES=1 VM_CASES_TABLE=$out/wedge-table "$run" > "$out/wedge.out" 2>&1
if grep -qx 'FAIL vm/w-fails' "$out/wedge.out" && grep -qx 'PASS vm/w-next' "$out/wedge.out" &&
	grep -q '^# layout w no longer answers' "$out/wedge.out" &&
	grep -q "^    qemu-system-x86_64: the wedged node's last words" "$out/wedge.out" &&
	[ "$(paste -sd' ' "$wedge_log")" = "up down up next down" ]; then
	echo "PASS unit/vm-cases/wedged-layout-boots-again"
else
	echo "FAIL unit/vm-cases/wedged-layout-boots-again"
	sed 's/^/    /' "$out/wedge.out" "$wedge_log"
	fail=1
fi

# declared NAME LIST: LIST (tests/vm/run --list's lines) declares a case
# NAME, in which * is a family.  Not `awk | grep -q`: grep leaves at its
# match, and under pipefail the awk it cut short (SIGPIPE) failed the
# pipe; make test-full's unit suite, beside the qtests, reported cases of
# the README missing that the table declares.
declared() {
	grep -qx -- "$(sed 's/[.]/\\./g; s/\*/.*/g' <<< "$1")" < <(awk '{ print $2 }' "$2")
}
# a list far longer than a pipe holds, its case first: grep leaves before
# awk has written the rest, every time
{
	echo "case early-case pair"
	seq -f 'case filler-%g pair' 300000
} > "$out/long-list"
if declared early-case "$out/long-list" && declared 'filler-29999*' "$out/long-list" &&
	! declared no-such-case "$out/long-list"; then
	echo "PASS unit/vm-cases/declared-in-a-long-list"
else
	echo "FAIL unit/vm-cases/declared-in-a-long-list"
	fail=1
fi

# Each vm/NAME of the README's Status table, * a family, is declared.
# readme_names CASE: run from the folder it is in.  (A name is a line, not
# a word: a word of a $(...) list is a glob, and from tests/ vm/kernel-*
# is the file vm/kernel-tree.sh; CI failed on that.)
readme_names() {
	local p missing=
	while read -r p; do
		p=${p#vm/}
		declared "$p" "$out/list" ||
			missing+="    the README names vm/$p, which tests/vm/cases does not declare"$'\n'
	done < <(sed -n '/^## Status$/,/^## /p' "$top/README.md" | grep '^|' | grep -o '`vm/[^`]*`' | tr -d '`' | sort -u)
	if [ -z "$missing" ]; then
		echo "PASS unit/vm-cases/$1"
	else
		echo "FAIL unit/vm-cases/$1"
		printf '%s' "$missing"
		fail=1
	fi
}
readme_names readme-status-names
cd "$top/tests" && readme_names readme-status-names-not-globbed
exit "$fail"
