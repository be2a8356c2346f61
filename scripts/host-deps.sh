#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Install the host packages softhca needs to build and test, on Debian 12.
# Idempotent: a stamp keyed by this file's content skips the work when done.
#
# Adds two apt entries, both safe for a Debian 12 host:
#   - bookworm-backports binaries (meson >= 1.5, pycotap, the 6.12 kernel
#     headers);
#     the headers of every guest kernel built with the host's compiler
#     (scripts/kernels.sh) are installed natively;
#     backports are pinned at priority 100 by their Release file;
#   - trixie *source* entries only (for `apt-get source qemu`, rdma-core).
# The mirror URI is read from the host's own sources at run time.
set -euo pipefail
. "$(dirname "$0")/common.sh"

stamp="$SOFTHCA_CACHE/stamps/host-deps-$(sha256sum "$0" | cut -c1-16)"
[ -e "$stamp" ] && exit 0

[ "$(id -u)" = 0 ] || die "host set-up needs root (apt-get)"

mirror=$(debian_mirror)
cat > /etc/apt/sources.list.d/softhca-backports.sources <<SRC
# Added by softhca scripts/host-deps.sh
Types: deb
URIs: $mirror
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
cat > /etc/apt/sources.list.d/softhca-trixie-src.sources <<SRC
# Added by softhca scripts/host-deps.sh: source packages only, never binaries
Types: deb-src
URIs: $mirror
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC

read -ra headers <<< "$(kernels_built_with host | sed 's/^/linux-headers-/' | paste -sd' ')"

export DEBIAN_FRONTEND=noninteractive
# A machine's image may hold a kernel package that was never configured,
# whose dependencies kmod completes; apt then configures it, and its
# initramfs was built twice, by the kernel's hook and by initramfs-tools'
# trigger (122 s of CPU each, measured here).  The hook skips it
# (INITRD=No); the trigger updates the initramfs the machine has, once,
# and makes none where it had none.
export INITRD=No
apt-get update -q
apt-get install -y -q --no-install-recommends \
	build-essential pkg-config ninja-build python3 python3-venv \
	libglib2.0-dev libpixman-1-dev libslirp-dev zlib1g-dev flex bison \
	dpkg-dev cmake libnl-3-dev libnl-route-3-dev libudev-dev \
	cpio gzip xz-utils zstd kmod busybox-static \
	seabios qemu-system-data ipxe-qemu \
	iproute2 bridge-utils tshark socat procps openssh-client gnuplot-nox \
	clang libclang-rt-dev llvm mmdebstrap ccache libelf-dev \
	"${headers[@]}"
# libvirt's daemon and virsh for the libvirt VM case (tests/vm/libvirt.sh
# starts its own libvirtd); qemu-img for its snapshots' disks.  No service
# starts: policy-rc.d forbids it while apt runs, as on machines where one
# already does (and none without systemd running would anyway).
policy=/usr/sbin/policy-rc.d
made_policy=
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' > "$policy"
	chmod 755 "$policy"
	made_policy=1
	trap 'rm -f "$policy"' EXIT
fi
apt-get install -y -q --no-install-recommends libvirt-daemon-system libvirt-clients qemu-utils
[ -z "$made_policy" ] || { rm -f "$policy"; trap - EXIT; }
# pycotap: a pristine QEMU tree's configure wants it (tests/series/run);
# Debian's +ds source lacks the wheel that the upstream tarball bundles
apt-get install -y -q --no-install-recommends -t bookworm-backports meson python3-pycotap

mkdir -p "$(dirname "$stamp")"
touch "$stamp"
