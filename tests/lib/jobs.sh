# SPDX-License-Identifier: GPL-2.0-or-later
# Jobs run side by side, jobs_max at a time (as many as the host has
# cores, unless the caller sets it), each printing its output whole, in the
# order the jobs were started (sourced by tests/qtest/run, tests/fuzz/run
# and tests/series/run).
#
#   jobs_dir=DIR             where their output waits (the caller's)
#   jobs_start NAME CMD...   CMD in the background; with jobs_max running,
#                            first waits until one job ends, whichever
#   jobs_finish              wait for the others and show them
#
# A job's output is shown once it and every job started before it ended,
# so a long job holds back the output of those after it, not their start.

# A job's pid is blanked once it ended: the blank ones wait to be shown.
jobs_pids=() jobs_names=()
jobs_max=$(nproc)

# Show the jobs at the head of the list that ended, in order.
jobs_show_done() {
	while [ ${#jobs_pids[@]} -gt 0 ] && [ -z "${jobs_pids[0]}" ]; do
		cat "$jobs_dir/${jobs_names[0]}.out"
		cat "$jobs_dir/${jobs_names[0]}.err" >&2
		jobs_pids=("${jobs_pids[@]:1}") jobs_names=("${jobs_names[@]:1}")
	done
}

# Wait until one more of our jobs ends.
jobs_wait_one() {
	local pid i
	# unquoted: the blank pids of ended jobs expand to nothing
	# shellcheck disable=SC2068
	wait -n -p pid ${jobs_pids[@]}
	for i in "${!jobs_pids[@]}"; do
		[ "${jobs_pids[i]}" = "$pid" ] && jobs_pids[i]=
	done
	jobs_show_done
}

jobs_start() {
	local name=$1 running
	shift
	# shellcheck disable=SC2206
	running=(${jobs_pids[@]})
	[ ${#running[@]} -lt "$jobs_max" ] || jobs_wait_one
	"$@" > "$jobs_dir/$name.out" 2> "$jobs_dir/$name.err" &
	jobs_pids+=($!) jobs_names+=("$name")
}

jobs_finish() {
	while [ ${#jobs_pids[@]} -gt 0 ]; do
		jobs_wait_one
	done
}
