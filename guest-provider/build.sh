#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Build the softhca rdma-core provider, $SOFTHCA_CACHE/build/rdma-core/lib/
# libsofthca-rdmav34.so, inside a cached rdma-core $RDMA_CORE_VERSION tree.
#
#   source   apt-get source of rdma-core (trixie deb-src), checked by the
#            tarball's sha256 and unpacked once;
#   hook     providers/softhca/ holds symlinks to this folder's files, the
#            uapi header is linked into kernel-headers/rdma/, and three lines
#            register both with rdma-core's CMake (idempotent);
#   build    cmake once, then ninja for the provider alone;
#   check    the provider needs only symbols the guest's libibverbs
#            (IBVERBS_PRIVATE_34) and glibc provide.
#
# The symlinks are refreshed on every run, so a checkout in another place
# (a CI clone) reuses the cached tree and build directory.  The provider's
# path is the only output on stdout.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/common.sh"

RDMA_CORE_DEB_VERSION=$RDMA_CORE_VERSION-1
provider_dir=$SOFTHCA_TOP/guest-provider
src=$SOFTHCA_CACHE/src
tarball=$src/rdma-core_$RDMA_CORE_VERSION.orig.tar.gz
tree=$src/rdma-core-$RDMA_CORE_VERSION
build=$SOFTHCA_CACHE/build/rdma-core
target=lib/libsofthca-rdmav$IBVERBS_PABI.so
# Only libibverbs and one provider are built; man pages and pyverbs need
# tools the host does not have.
cmake_args=(-GNinja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNO_PYVERBS=1
	-DNO_MAN_PAGES=1 -DENABLE_STATIC=0)

tarball_ok() {
	[ -e "$tarball" ] &&
		echo "$RDMA_CORE_SHA256  $tarball" | sha256sum --quiet -c - 2>/dev/null
}

fetch() {
	tarball_ok && return
	log "fetching rdma-core $RDMA_CORE_DEB_VERSION source" \
		"(apt may fail on a missing .dsc: the tarball's sha256 decides)"
	rm -f "$tarball"
	# The mirror may lack the .dsc while it serves the tarball; apt then
	# exits non-zero, so the tarball's checksum decides, not apt.
	(cd "$src" && apt-get source -q --download-only \
		-o APT::Sandbox::User=root \
		"rdma-core=$RDMA_CORE_DEB_VERSION") >&2 || true
	[ -e "$tarball" ] || die "apt-get source did not fetch ${tarball##*/}" \
		"(trixie deb-src entry and apt-get update: scripts/host-deps.sh)"
	tarball_ok || die "${tarball##*/}: sha256 $(sha256sum "$tarball" |
		cut -d' ' -f1), expected RDMA_CORE_SHA256=$RDMA_CORE_SHA256"
}

# Unpack once per tarball; the stamp inside the tree names the tarball's
# checksum, so a changed pin unpacks afresh.
unpack() {
	local stamp=$tree/.softhca-unpacked tmp

	[ -e "$stamp" ] && [ "$(cat "$stamp")" = "$RDMA_CORE_SHA256" ] && return
	log "unpacking ${tarball##*/}"
	rm -rf "$tree"
	tmp=$(mktemp -d "$src/.rdma-core.XXXXXX")
	tar -xzf "$tarball" -C "$tmp"
	mv "$tmp/rdma-core-$RDMA_CORE_VERSION" "$tree"
	rmdir "$tmp"
	echo "$RDMA_CORE_SHA256" > "$stamp"
}

# Insert line $3 after the line that equals $2 in file $1, unless a line
# equal to $3 is there already.  The file is rewritten only on a change, so
# that ninja re-runs cmake only when something was added.
add_line_after() {
	local file=$1 anchor=$2 line=$3

	grep -qxF -- "$line" "$file" && return
	grep -qxF -- "$anchor" "$file" || die "$file: no line '$anchor'"
	awk -v anchor="$anchor" -v line="$line" \
		'{ print } $0 == anchor { print line }' "$file" > "$file.tmp"
	mv "$file.tmp" "$file"
}

hook() {
	local dir=$tree/providers/softhca f

	rm -rf "$dir"
	mkdir "$dir"
	for f in "$provider_dir"/*; do
		[ -f "$f" ] && [[ $f != *.sh ]] && ln -s "$f" "$dir/"
	done
	ln -s "$SOFTHCA_TOP/spec/softhca_hw.h" "$dir/"
	ln -sfn "$SOFTHCA_TOP/spec/softhca-abi.h" \
		"$tree/kernel-headers/rdma/softhca-abi.h"

	add_line_after "$tree/CMakeLists.txt" \
		"add_subdirectory(providers/vmw_pvrdma)" \
		"add_subdirectory(providers/softhca)"
	# Both lists name siw-abi.h: publish_internal_headers(rdma ...) puts
	# the header in the build's include/rdma/, rdma_kernel_provider_abi()
	# generates the kernel-abi/ wrapper that DECLARE_DRV_CMD needs.
	add_line_after "$tree/kernel-headers/CMakeLists.txt" \
		"  rdma/siw-abi.h" "  rdma/softhca-abi.h"
	[ "$(grep -cxF "  rdma/softhca-abi.h" \
		"$tree/kernel-headers/CMakeLists.txt")" = 2 ] ||
		die "kernel-headers/CMakeLists.txt: softhca-abi.h not in both lists"
}

# cmake runs when the build directory is new, belongs to another tree or
# was configured with other arguments; afterwards ninja re-runs it by
# itself whenever a CMakeLists.txt changes.
configure() {
	local stamp=$build/.softhca-cmake-args

	if [ -e "$stamp" ] && [ "$(cat "$stamp")" = "$tree ${cmake_args[*]}" ] &&
		[ -e "$build/build.ninja" ]; then
		return
	fi
	log "configuring rdma-core in $build"
	rm -rf "$build"
	mkdir -p "$build"
	(cd "$build" && cmake "${cmake_args[@]}" "$tree") >&2
	echo "$tree ${cmake_args[*]}" > "$stamp"
}

# Every undefined symbol must come from the guest's libibverbs (its stable
# IBVERBS_1.x or the private IBVERBS_PRIVATE_$IBVERBS_PABI) or from glibc;
# glibc versions are those of the host (2.36), older than the guest's.
check_abi() {
	local so=$build/$target bad

	bad=$(objdump -T "$so" | awk -v pabi="$IBVERBS_PABI" '/\*UND\*/ {
		ver = $(NF - 1)
		gsub(/[()]/, "", ver)
		if (ver ~ "^(IBVERBS_1\\.[0-9]+|IBVERBS_PRIVATE_" pabi "|GLIBC_2\\.[0-9.]+)$")
			next
		# Unversioned weak references (TM clone table, gmon) may stay
		# unresolved.
		if ($2 == "w" && ver == "Base")
			next
		print $NF "@" ver
	}')
	[ -z "$bad" ] || die "$target needs symbols the guest lacks: ${bad//$'\n'/ }"
	# grep reads to the end: an early exit (-q) would kill objdump with
	# SIGPIPE and, under pipefail, fail the check now and then.
	objdump -T "$so" | grep "(IBVERBS_PRIVATE_$IBVERBS_PABI) verbs_register_driver_$IBVERBS_PABI\$" >/dev/null ||
		die "$target does not register itself with libibverbs"
}

mkdir -p "$src" "$SOFTHCA_CACHE/build"
# The image build and the tests may call this script concurrently.
exec 9>"$SOFTHCA_CACHE/build/rdma-core.lock"
flock 9

fetch
unpack
hook
configure
ninja -C "$build" "$target" >&2
check_abi
echo "$build/$target"
