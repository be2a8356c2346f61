#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A Debian 13 (trixie) build root for what Debian 12's compiler cannot
# build: the modules of kernels built with gcc-14 (scripts/kernels.sh,
# toolchain "trixie"), and the newest kernel's own tree with the driver
# series applied (scripts/series/linux.sh), and the guests' MPI programs
# (tests/guest/mpi), which need trixie's Open MPI.  Prints the root's path.
#
#   scripts/buildroot.sh           make it (once; a stamp keyed by the
#                                  package list skips the work)
#   scripts/buildroot.sh run DIR CMD...
#                                  run CMD inside it as root, in DIR, which
#                                  appears there as /build (with /proc)
#
# The root lives in $SOFTHCA_CACHE/buildroot/trixie.  mmdebstrap makes it
# from trixie and trixie-backports, again when the package list changes.
# Nothing of trixie ever enters the host's own apt sources (that would
# upgrade its glibc).
set -euo pipefail
. "$(dirname "$0")/common.sh"

root=$SOFTHCA_CACHE/buildroot/trixie

packages() {
	echo gcc make libc6-dev
	kernels_built_with trixie | sed 's/^/linux-headers-/'
	# a kernel tree's own build, for the Linux patch series
	# (tests/series/run): kbuild's tools, objtool's libelf, sparse
	echo bc bison flex libelf-dev libssl-dev python3 sparse
	# the MPI programs the guests run (tests/guest/mpi), against the
	# guest image's Open MPI
	echo libopenmpi-dev
}

make_root() {
	local mirror want tmp
	want=$(packages | sha256sum | cut -c1-16)
	[ "$(cat "$root/.softhca-stamp" 2>/dev/null)" = "$want" ] && return
	[ "$(id -u)" = 0 ] || die "making the build root needs root"
	mirror=$(debian_mirror)
	log "making the trixie build root (mmdebstrap)"
	tmp=$root.new
	rm -rf "$tmp"
	mkdir -p "${root%/*}"
	# Debian 13's kernel headers depend on the kernel image, whose
	# initramfs nothing here boots: its hook is skipped (INITRD=No), and
	# initramfs-tools' trigger then makes none (it updates only those
	# that exist).  Both were made: 31 s of CPU of 115.
	INITRD=No mmdebstrap --quiet --variant=apt --components=main \
		--include="$(packages | paste -sd,)" \
		trixie "$tmp" "deb $mirror trixie main" \
		"deb $mirror trixie-backports main" >&2
	echo "$want" > "$tmp/.softhca-stamp"
	rm -rf "$root"
	mv "$tmp" "$root"
}

exec 9> "$SOFTHCA_CACHE/buildroot.lock"
flock 9
make_root
if [ "${1:-}" = run ]; then
	dir=${2:?run wants a folder}
	shift 2
	mkdir -p "$root/build"
	# A mount namespace of its own: the mounts go away with the command.
	exec unshare --mount --propagation private sh -c '
		root=$1 dir=$2
		shift 2
		mount --bind "$dir" "$root/build" &&
		mount -t proc proc "$root/proc" &&
		exec chroot "$root" sh -c "cd /build && exec \"\$@\"" sh "$@"' \
		sh "$root" "$dir" "$@"
fi
echo "$root"
