#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Build softhca.ko for guest kernels: $SOFTHCA_CACHE/build/driver/REL/
# guest-driver/softhca.ko for each release REL.
#
#   guest-driver/build.sh [VER...]   the kernels VER names (a version
#                                    prefix, scripts/kernels.sh); none:
#                                    the default kernel; "all": every one
#   guest-driver/build.sh --kernel-tree DIR
#                                    against a built kernel tree, with the
#                                    host's compiler (make -C DIR M=...),
#                                    in build/driver/tree-ID (ID: of DIR's
#                                    path, as images/build.sh names it)
#
# Each kernel gets a build folder of its own, a copy of this folder and of
# spec/'s headers, so that builds for several kernels never share
# objects.  Kernels of toolchain "host" build against headers installed on
# the host (scripts/host-deps.sh), those of "trixie" in the Debian 13 build
# root (scripts/buildroot.sh).  Prints the modules' paths.
set -euo pipefail
. "$(dirname "$0")/../scripts/common.sh"

# copy_sources DIR: this folder and spec/'s headers, into DIR.  cp -p
# keeps times, so an unchanged file is not rebuilt.
copy_sources() {
	mkdir -p "$1/guest-driver" "$1/spec"
	cp -p "$SOFTHCA_TOP"/guest-driver/{*.c,*.h,Makefile} "$1/guest-driver/"
	cp -p "$SOFTHCA_TOP"/spec/*.h "$1/spec/"
}

build_tree() {
	local tree dir
	tree=$(cd "$1" && pwd) || exit 1
	[ -e "$tree/Module.symvers" ] || die "$tree: no Module.symvers (make modules first)"
	dir=$SOFTHCA_CACHE/build/driver/tree-$(printf %s "$tree" | sha256sum | cut -c1-12)
	copy_sources "$dir"
	make -s -C "$tree" M="$dir/guest-driver" modules >&2
	echo "$dir/guest-driver/softhca.ko"
}

build_one() {
	local rel=$1 dir=$SOFTHCA_CACHE/build/driver/$1 kdir
	copy_sources "$dir"
	case $(kernel_field "$rel" 4) in
	host)
		kdir=/lib/modules/$rel/build
		[ -e "$kdir/Makefile" ] ||
			die "no headers for $rel in $kdir (scripts/host-deps.sh)"
		make -s -C "$kdir" M="$dir/guest-driver" modules >&2
		;;
	trixie)
		"$SOFTHCA_TOP/scripts/buildroot.sh" >/dev/null
		"$SOFTHCA_TOP/scripts/buildroot.sh" run "$dir" \
			make -s -C "/usr/src/linux-headers-$rel" M=/build/guest-driver modules >&2
		;;
	esac
	echo "$dir/guest-driver/softhca.ko"
}

main() {
	local want=("$@") rel
	if [ "${1:-}" = --kernel-tree ]; then
		build_tree "${2:?--kernel-tree wants a folder}"
		return
	fi
	[ ${#want[@]} -gt 0 ] || want=("")
	[ "${want[*]}" = all ] && read -ra want <<< "$(kernel_releases)"
	for rel in "${want[@]}"; do
		build_one "$(kernel_select "$rel")"
	done
}

main "$@"
