#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Build qga, the guest agent client (qga.c), once per version of its
# sources, in $SOFTHCA_CACHE/build/qga; print its path.  tests/lib/agent.sh
# and tests/qga call it, so the lab and the tests never run a stale one.
set -euo pipefail
. "$(dirname "$0")/../../scripts/common.sh"

src=$SOFTHCA_TOP/tests/agent
dir=$SOFTHCA_CACHE/build/qga
bin=$dir/qga-$(cat "$src"/*.[ch] | sha256sum | cut -c1-12)
if [ ! -x "$bin" ]; then
	mkdir -p "$dir"
	# the VM suite's lanes start at once
	exec 9> "$dir/lock"
	flock 9
	if [ ! -x "$bin" ]; then
		rm -f "$dir"/qga-*
		cc -std=gnu11 -O2 -Wall -Wextra -Werror -o "$bin.tmp" "$src"/*.c -lm
		mv "$bin.tmp" "$bin"
	fi
fi
echo "$bin"
