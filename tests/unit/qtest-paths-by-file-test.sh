#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# One qtest file per feature (tests/qtest/run): tests/qtest/softhca-X-test.c
# registers only cases /softhca/X/NAME, so each prefix /softhca/X/ lives in
# that one file and a case is found by its name.  Each registration must
# name its path as a string literal on the line of the call.
# Usage: qtest-paths-by-file-test.sh [DIR]  (DIR: the qtests, tests/qtest)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$here/../qtest}
reg='\<(qtest|g_test)_add(_func|_data_func|_data_func_full)?\('
fail=0
shopt -s nullglob
files=("$dir"/softhca-*-test.c)
if [ ${#files[@]} -eq 0 ]; then
	echo "FAIL unit/qtest-paths-by-file: no softhca-*-test.c in $dir"
	exit 1
fi
for f in "${files[@]}"; do
	t=${f##*/}
	x=${t#softhca-}
	x=${x%-test.c}
	n=$(grep -cE "$reg" "$f")
	bad=$(grep -nE "$reg" "$f" | grep -vE "$reg\"/softhca/$x/[^\"]+\"")
	if [ "$n" -eq 0 ]; then
		echo "FAIL unit/qtest-paths-by-file/${t%.c}: registers no case"
		fail=1
	elif [ -n "$bad" ]; then
		echo "FAIL unit/qtest-paths-by-file/${t%.c}: a case outside /softhca/$x/ (move it to softhca-X-test.c for its /softhca/X/, or rename it)"
		sed "s|^|    $t:|" <<< "$bad"
		fail=1
	else
		echo "PASS unit/qtest-paths-by-file/${t%.c}"
	fi
done
exit "$fail"
