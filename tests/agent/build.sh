#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Build qga, the guest agent client (qga.c), once per version of its
# sources, in $SOFTHCA_CACHE/build/qga; print its path.  tests/lib/agent.sh
# and tests/qga call it, so the lab and the tests never run a stale one.
#
#   tests/agent/build.sh         the client
#   tests/agent/build.sh fuzz    its replies' libFuzzer harness
#                                (tests/fuzz/qga_reply_fuzz.c), with ASan
#                                and UBSan, for tests/fuzz/run
set -euo pipefail
. "$(dirname "$0")/../../scripts/common.sh"

src=$SOFTHCA_TOP/tests/agent
case ${1:-} in
'')
	name=qga
	harness=()
	files=("$src"/*.c)
	compile=(cc -std=gnu11 -O2 -Wall -Wextra -Werror) ;;
fuzz)
	name=reply-fuzz
	harness=("$SOFTHCA_TOP/tests/fuzz/qga_reply_fuzz.c")
	files=("${harness[@]}" "$src"/buf.c "$src"/json.c "$src"/base64.c)
	compile=(clang -std=gnu11 -g -O1 -Wall -Wextra -Werror -I"$src"
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined) ;;
*)
	die "usage: $0 [fuzz]" ;;
esac
dir=$SOFTHCA_CACHE/build/qga
bin=$dir/$name-$(cat "$src"/*.[ch] "${harness[@]}" | sha256sum | cut -c1-12)
if [ ! -x "$bin" ]; then
	mkdir -p "$dir"
	# the VM suite's lanes start at once
	exec 9> "$dir/lock"
	flock 9
	if [ ! -x "$bin" ]; then
		rm -f "$dir/$name"-*
		"${compile[@]}" -o "$bin.tmp" "${files[@]}" -lm
		mv "$bin.tmp" "$bin"
	fi
fi
echo "$bin"
