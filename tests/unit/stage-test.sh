#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# scripts/stage.sh, as make's stages print through it: one line with the
# stage's time and its CPU, which its children's work counts in; when the
# stage fails, its log's last lines and its exit status.  The figures are
# not checked, only that they are there.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
stage=$here/../../scripts/stage.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() {	# name want-regex want-status cmd...
	local name=$1 want=$2 status=$3 got rc
	shift 3
	# the quiet line, also when the suite runs with SOFTHCA_VERBOSE=1
	got=$(SOFTHCA_CACHE=$tmp SOFTHCA_VERBOSE=0 "$stage" t "doing t" "$@" 2>&1)
	rc=$?
	if [ "$rc" = "$status" ] && [[ $got =~ $want ]]; then
		echo "PASS unit/stage/$name"
	else
		echo "FAIL unit/stage/$name: exit $rc, printed '$got'"
		fail=1
	fi
}
check passes '^softhca: doing t \.\.\. [0-9]+ s, [0-9]+ s of CPU$' 0 sh -c 'echo hidden'
# a grandchild that spends 1.5 s of CPU, however fast the machine
check child-cpu-counts '^softhca: doing t \.\.\. [0-9]+ s, [1-9][0-9]* s of CPU$' 0 \
	sh -c 'python3 -c "
import time
while time.process_time() < 1.5: pass"'
check fails $'^softhca: doing t \\.\\.\\. FAILED after [0-9]+ s \\(exit 3\\); the log.s last lines:\n    oops\nsofthca: the whole log: .*/logs/t\\.log$' 3 \
	sh -c 'echo oops; exit 3'
[ ! -e "$tmp/logs/t.log.cpu" ] || { echo "FAIL unit/stage: t.log.cpu left behind"; fail=1; }
exit "$fail"
