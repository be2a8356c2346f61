#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/lib/jobs.sh: with every slot busy, the next job starts when any
# job ends, not only the oldest (job_start_waits_for_the_oldest: a long
# qtest held the other core idle), and the outputs still come whole, in
# the order the jobs started.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib/jobs.sh"
jobs_dir=$(mktemp -d)
trap 'rm -rf "$jobs_dir"' EXIT
jobs_max=2

# long: ends once the job started after the short one has run, or fails
# after 20 s; short and last end at once.
long() {
	for _ in $(seq 200); do
		[ -e "$jobs_dir/last.ran" ] && { echo long; return 0; }
		sleep 0.1
	done
	echo "long: the last job did not start while this one ran"
	return 1
}
short() { echo "$1"; echo "$1 err" >&2; touch "$jobs_dir/$1.ran"; }

got=$({
	jobs_start long long
	jobs_start short short short
	jobs_start last short last
	jobs_finish
} 2>&1)
want=$'long\nshort\nshort err\nlast\nlast err'
if [ "$got" = "$want" ]; then
	echo "PASS unit/jobs/long-job-holds-free-slot"
else
	echo "FAIL unit/jobs/long-job-holds-free-slot"
	diff <(echo "$want") <(echo "$got") | sed 's/^/    /'
	exit 1
fi
