#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/lab up for a kernel whose guest image is not made yet: one error
# that names the command making it, nothing else on stderr (it printed
# three errors of its own internals first), and no lab folder left
# behind (a later up took it for a lab already up).  Runs no VM.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() {	# name want-regex args...
	local name=$1 want=$2 err
	shift 2
	SOFTHCA_CACHE=$tmp/cache LAB_DIR=$tmp/lab SOFTHCA_QEMU=/bin/true \
		"$here/../lab" up "$@" > /dev/null 2> "$tmp/err"
	err=$(cat "$tmp/err")
	if [ "$(wc -l < "$tmp/err")" = 1 ] && [[ $err =~ $want ]] && [ ! -e "$tmp/lab" ]; then
		echo "PASS unit/lab-missing-image/$name"
	else
		echo "FAIL unit/lab-missing-image/$name: stderr '$err'$([ -e "$tmp/lab" ] && echo ', lab folder left')"
		fail=1
	fi
}
if [ "$(id -u)" != 0 ]; then
	echo "SKIP unit/lab-missing-image: tests/lab up wants root"
	exit 0
fi
check older-kernel '^softhca: no guest image for kernel 6\.1\..*: make kernels makes' --kernel 6.1
check default-kernel '^softhca: no guest image for kernel .*: make kernels makes'
check stock-disk '^softhca: no stock Debian 13 disk: make stock-image' --stock 2
exit "$fail"
