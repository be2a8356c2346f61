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

# Each vm/NAME of the README's Status table, * a family, is declared.
missing=0
for p in $(sed -n '/^## Status$/,/^## /p' "$top/README.md" | grep '^|' | grep -o '`vm/[^`]*`' | tr -d '`' | sort -u); do
	p=${p#vm/}
	awk '{ print $2 }' "$out/list" | grep -qx -- "$(sed 's/[.]/\\./g; s/\*/.*/g' <<< "$p")" ||
		{ echo "    the README names vm/$p, which tests/vm/cases does not declare"; missing=1; }
done
if [ "$missing" = 0 ]; then
	echo "PASS unit/vm-cases/readme-status-names"
else
	echo "FAIL unit/vm-cases/readme-status-names"
	fail=1
fi
exit "$fail"
