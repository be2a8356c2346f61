#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fio for the guests, built from Debian's source into
# $SOFTHCA_CACHE/build/fio/fio; tests/vm/nvme.sh copies it into the nodes
# that run it (the NVMe over RDMA cases and make bench).
#
# Not Debian 13's binary package: it links Ceph's, GlusterFS's, libnfs's,
# libnbd's and PMDK's libraries, about 40 MB with what they pull in.  This
# build has the engines the tests use (io_uring, psync) and is static, so
# it runs on any guest's C library.  Debian 12's source: the archive here
# serves it whole (trixie's .dsc was missing from it when this was
# written), and fio's io_uring engine needs no liburing.
set -euo pipefail
. "$(dirname "$0")/../../../scripts/common.sh"
. "$SOFTHCA_TOP/scripts/apt-private.sh"

FIO_DEB_VERSION=3.33-3
FIO_SUITE=bookworm
out=$SOFTHCA_CACHE/build/fio
src=$SOFTHCA_CACHE/src/fio-$FIO_DEB_VERSION
# --disable-native: the guests run on TCG's CPU model, not the host's
configure_opts=(--build-static --disable-native --disable-numa --disable-rdma
	--disable-rados --disable-rbd --disable-http --disable-gfapi
	--disable-libnfs --disable-pmem --disable-xnvme --disable-libzbc
	--disable-tcmalloc --disable-dfs)
want=$(printf '%s\n' "$FIO_DEB_VERSION" "${configure_opts[@]}" | sha256sum | cut -c1-16)
[ "$(cat "$out/.softhca-stamp" 2>/dev/null)" = "$want" ] && [ -x "$out/fio" ] && exit 0

if [ ! -e "$src/.softhca-unpacked" ]; then
	log "fetching fio $FIO_DEB_VERSION source"
	setup_apt_private "$SOFTHCA_CACHE/apt-fio" "src:$FIO_SUITE"
	# apt checks the files against the signed Sources index, dpkg-source
	# against the .dsc
	(cd "$SOFTHCA_CACHE/src" &&
		apt_private "$SOFTHCA_CACHE/apt-fio" source --download-only "fio=$FIO_DEB_VERSION") >&2
	rm -rf "$src" "$src.tmp"
	dpkg-source -x "$SOFTHCA_CACHE/src/fio_$FIO_DEB_VERSION.dsc" "$src.tmp" >&2
	touch "$src.tmp/.softhca-unpacked"
	mv "$src.tmp" "$src"
fi
rm -rf "$out"
mkdir -p "$out"
cp -a "$src/." "$out/tree"
(cd "$out/tree" && ./configure "${configure_opts[@]}" && make -j"$(nproc)" fio) >&2
# glibc warns that a static dlopen() and getaddrinfo() need its own
# shared libraries at run time: the engines used here call neither
install -m 0755 "$out/tree/fio" "$out/fio"
strip "$out/fio"
rm -rf "$out/tree"
echo "$want" > "$out/.softhca-stamp"
