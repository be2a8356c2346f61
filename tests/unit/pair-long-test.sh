#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# pair_long (tests/lib/lab.sh) with a server node whose agent no longer
# answers (tests/qga.py exits 125): the wait for both sides ends at once,
# with the node named, and the pair fails; it used to poll the running
# client until its timeout, each poll of a hung guest taking the agent's
# own 60 s.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/common.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
. "$top/tests/lib/lab.sh"

# tests/lab exec as pair_long calls it: node 2's agent gives up, node 1's
# client is still running.  The polls of node 1 are counted.
cat > "$out/lab" <<END
#!/bin/sh
[ "\$1" = exec ] || exit 2
shift
[ "\$1" = -b ] && exit 0
node=\$1
shift 2
if [ "\$node" = 2 ]; then
	echo "qga: node2.qga: timed out" >&2
	exit 125
fi
[ "\$*" = "test -e /tmp/cli.rc" ] || exit 0
echo poll >> "$out/polls"
exit 1
END
chmod +x "$out/lab"
lab=$out/lab
: > "$out/polls"
pair_long 2 1 server client 5 true > "$out/log" 2>&1
rc=$?
if [ "$rc" != 0 ] && [ "$(wc -l < "$out/polls")" = 1 ] &&
	grep -qx 'the agent of node 2 does not answer' "$out/log"; then
	echo "PASS unit/pair-long/agent-gone"
else
	echo "FAIL unit/pair-long/agent-gone: exit $rc, $(wc -l < "$out/polls") polls of the client"
	sed 's/^/    /' "$out/log"
	exit 1
fi
