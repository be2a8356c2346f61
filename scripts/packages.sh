#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Debian packages for a user's own VM, in $SOFTHCA_CACHE/packages:
#
#   softhca-dkms_V_all.deb    the driver's source; DKMS builds and installs
#                             softhca.ko for every installed kernel that
#                             has its headers, and for kernels added later
#   softhca-ibverbs-provider_V_amd64.deb
#                             the rdma-core provider for Debian 13's
#                             rdma-core $RDMA_CORE_VERSION, and its .driver
#                             file
#
# and for the host, Debian 12 or 13:
#
#   softhca-qemu_Q+V_amd64.deb
#                             our QEMU Q (qemu-device/build.sh) under
#                             /opt/softhca-qemu, apart from any QEMU of the
#                             distribution's
#
# V is the hardware version (spec/softhca_hw.h) and the number of commits.
# Prints the packages' paths.
set -euo pipefail
. "$(dirname "$0")/common.sh"

out=$SOFTHCA_CACHE/packages
maintainer="softhca developers <softhca@localhost>"

package_version() {
	local major minor
	major=$(awk '$2 == "SHCA_VERSION_MAJOR" { print $3 }' "$SOFTHCA_TOP/spec/softhca_hw.h")
	minor=$(awk '$2 == "SHCA_VERSION_MINOR" { print $3 }' "$SOFTHCA_TOP/spec/softhca_hw.h")
	echo "$major.$minor.$(git -C "$SOFTHCA_TOP" rev-list --count HEAD 2>/dev/null || echo 0)"
}

# The value of field $2 in the control file of stage $1.
control_field() { sed -n "s/^$2: //p" "$1/DEBIAN/control"; }

# build_deb STAGE: a .deb of folder STAGE (DEBIAN/control inside), in $out.
build_deb() {
	local stage=$1 name
	find "$stage" -exec touch -h -d @0 {} +
	name=$(control_field "$stage" Package)_$(control_field "$stage" Version)_$(control_field "$stage" Architecture).deb
	dpkg-deb --root-owner-group -Zxz --build "$stage" "$out/$name" >/dev/null
	echo "$out/$name"
}

dkms_deb() {
	local stage=$tmp/dkms src
	src=$stage/usr/src/softhca-$version
	mkdir -p "$src/guest-driver" "$src/spec" "$stage/DEBIAN"
	cp "$SOFTHCA_TOP"/guest-driver/{*.c,*.h,Makefile} "$src/guest-driver/"
	cp "$SOFTHCA_TOP"/spec/*.h "$src/spec/"
	sed "s/@VERSION@/$version/" "$SOFTHCA_TOP/guest-driver/dkms.conf" > "$src/dkms.conf"
	cat > "$stage/DEBIAN/control" <<EOF
Package: softhca-dkms
Version: $version
Architecture: all
Maintainer: $maintainer
Depends: dkms (>= 3.0), make, gcc
Recommends: linux-headers-amd64
Section: kernel
Priority: optional
Description: softhca RDMA NIC driver (DKMS)
 The Linux driver of softhca, a RoCEv2 RDMA NIC that QEMU emulates
 (-device softhca).  DKMS builds the module for every installed kernel
 that has its headers, 6.1 or newer.
EOF
	# Every kernel with headers, not only the running and the newest one
	# that dkms's common.postinst would pick.
	cat > "$stage/DEBIAN/postinst" <<EOF
#!/bin/sh
set -e
[ "\$1" = configure ] || exit 0
dkms status -m softhca -v $version | grep -q . || dkms add -m softhca -v $version
for build in /lib/modules/*/build; do
	[ -e "\$build/Makefile" ] || continue
	kernel=\${build%/build}
	dkms install -m softhca -v $version -k "\${kernel##*/}"
done
EOF
	cat > "$stage/DEBIAN/prerm" <<EOF
#!/bin/sh
set -e
case "\$1" in
remove | upgrade | deconfigure)
	dkms remove -m softhca -v $version --all || true
	;;
esac
EOF
	chmod 0755 "$stage/DEBIAN/postinst" "$stage/DEBIAN/prerm"
	build_deb "$stage"
}

# The provider uses libibverbs' private ABI (IBVERBS_PRIVATE_34), which
# only the rdma-core release it was built against is sure to export:
# guest-provider/build.sh checks the symbols, the dependency pins the
# release.
provider_deb() {
	local stage=$tmp/provider so next glibc
	so=$("$SOFTHCA_TOP/guest-provider/build.sh")
	next=${RDMA_CORE_VERSION%.*}.$((${RDMA_CORE_VERSION##*.} + 1))
	glibc=$(objdump -T "$so" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n1)
	mkdir -p "$stage/usr/lib/x86_64-linux-gnu/libibverbs" "$stage/etc/libibverbs.d" \
		"$stage/DEBIAN"
	install -m 0644 "$so" "$stage/usr/lib/x86_64-linux-gnu/libibverbs/${so##*/}"
	install -m 0644 "$SOFTHCA_TOP/guest-provider/softhca.driver" "$stage/etc/libibverbs.d/"
	echo /etc/libibverbs.d/softhca.driver > "$stage/DEBIAN/conffiles"
	cat > "$stage/DEBIAN/control" <<EOF
Package: softhca-ibverbs-provider
Version: $version
Architecture: amd64
Maintainer: $maintainer
Depends: libibverbs1 (>= $RDMA_CORE_VERSION), libibverbs1 (<< $next~), libc6 (>= ${glibc#GLIBC_})
Section: net
Priority: optional
Description: softhca RDMA NIC userspace provider for libibverbs
 The rdma-core provider of softhca, a RoCEv2 RDMA NIC that QEMU emulates
 (-device softhca): kernel-bypass send, receive and completion polling.
 Built for rdma-core $RDMA_CORE_VERSION.
EOF
	build_deb "$stage"
}

# The emulator, stripped, and links to the firmware of Debian's seabios
# and qemu-system-data where it looks for it: QEMU is relocatable, and
# finds share/qemu beside its bin.  It takes -L for other firmware.
QEMU_FIRMWARE=(/usr/share/seabios/bios-256k.bin /usr/share/seabios/bios.bin
	/usr/share/qemu/linuxboot_dma.bin /usr/share/qemu/kvmvapic.bin
	/usr/share/qemu/multiboot_dma.bin /usr/share/qemu/pvh.bin)
qemu_deb() {
	local stage=$tmp/qemu prefix=/opt/softhca-qemu qemu glibc f
	qemu=$(dirname "$("$SOFTHCA_TOP/qemu-device/build.sh")")/qemu-system-x86_64
	glibc=$(objdump -T "$qemu" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n1)
	mkdir -p "$stage$prefix/bin" "$stage$prefix/share/qemu" \
		"$stage/usr/share/doc/softhca-qemu" "$stage/DEBIAN"
	install -m 0755 -s "$qemu" "$stage$prefix/bin/qemu-system-x86_64"
	for f in "${QEMU_FIRMWARE[@]}"; do
		ln -s "$f" "$stage$prefix/share/qemu/${f##*/}"
	done
	cat > "$stage/usr/share/doc/softhca-qemu/copyright" <<EOF
QEMU $QEMU_VERSION with the softhca device (qemu-device/).
License: GPL-2.0-or-later; QEMU's own parts are under the licenses of
QEMU's sources (GPL-2.0, LGPL-2.1 and others).
EOF
	# Debian 13 renamed GLib's package for 64-bit time_t: either serves
	cat > "$stage/DEBIAN/control" <<EOF
Package: softhca-qemu
Version: $QEMU_VERSION+$version
Architecture: amd64
Maintainer: $maintainer
Depends: libc6 (>= ${glibc#GLIBC_}), libglib2.0-0t64 | libglib2.0-0 (>= 2.74), libpcre2-8-0, libslirp0, zlib1g, seabios, qemu-system-data
Section: misc
Priority: optional
Description: QEMU $QEMU_VERSION with softhca, an emulated RDMA NIC
 qemu-system-x86_64 with -device softhca, a RoCEv2 RDMA NIC, for x86
 guests (TCG and KVM), in /opt/softhca-qemu, apart from the
 distribution's QEMU.
EOF
	build_deb "$stage"
}

version=$(package_version)
mkdir -p "$out"
rm -f "$out"/softhca-*.deb	# one version at a time
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dkms_deb
provider_deb
qemu_deb
