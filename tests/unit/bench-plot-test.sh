#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/bench/plot on data laid out as tests/bench/run writes it, with
# series not measured ("-"): it draws a PNG of both panels; data without
# its header is refused with a message, and no picture.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
check() {	# name condition...
	local name=$1
	shift
	if "$@"; then echo "PASS unit/bench-plot/$name"; else echo "FAIL unit/bench-plot/$name"; fail=1; fi
}

printf '# size device_alone,_loopback rxe_VMs,_tap host_UDP_ceiling\n' > "$dir/bandwidth.dat"
printf '64\t33.6\t-\t39\n4096\t1331\t22.7\t1171\n65536\t2009\t-\t1171\n' >> "$dir/bandwidth.dat"
printf '"device alone, loopback"\t94.3\n"host UDP half round trip"\t27.7\n' > "$dir/latency.dat"
out=$("$here/../bench/plot" "$dir" 2>&1)
png() {		# the file is a PNG of the size plot asks for
	[ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
		[ "$(od -An -tu1 -j16 -N8 "$1" | awk '{ print $3 * 256 + $4, $7 * 256 + $8 }')" = "1400 560" ]
}
check draws png "$dir/bench.png"
check names-it test "$out" = "$dir/bench.png"

rm "$dir/bench.png"
sed -i 1d "$dir/bandwidth.dat"
out=$("$here/../bench/plot" "$dir" 2>&1)
rc=$?
check refuses-headerless test "$rc" -ne 0 -a ! -e "$dir/bench.png"
check says-why grep -q "has no '# size NAME...' header" <<< "$out"
exit $fail
