# SPDX-License-Identifier: GPL-2.0-or-later
# Jobs run side by side, as many as the host has cores, each printing its
# output whole, in the order the jobs were started (sourced by the suites
# whose jobs use a core each: tests/qtest/run, tests/fuzz/run).
#
#   jobs_dir=DIR             where their output waits (the caller's)
#   jobs_start NAME CMD...   CMD in the background; with every core busy,
#                            the oldest job is waited for and shown first
#   jobs_finish              wait for the others and show them

jobs_pids=() jobs_names=()
jobs_max=$(nproc)

jobs_show_oldest() {
	wait "${jobs_pids[0]}"
	cat "$jobs_dir/${jobs_names[0]}.out"
	cat "$jobs_dir/${jobs_names[0]}.err" >&2
	jobs_pids=("${jobs_pids[@]:1}") jobs_names=("${jobs_names[@]:1}")
}

jobs_start() {
	local name=$1
	shift
	[ ${#jobs_pids[@]} -lt "$jobs_max" ] || jobs_show_oldest
	"$@" > "$jobs_dir/$name.out" 2> "$jobs_dir/$name.err" &
	jobs_pids+=($!) jobs_names+=("$name")
}

jobs_finish() {
	while [ ${#jobs_pids[@]} -gt 0 ]; do
		jobs_show_oldest
	done
}
