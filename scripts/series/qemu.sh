#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The device as a QEMU patch series, against the source of the default
# QEMU release (scripts/common.sh):
#
#   scripts/series/qemu.sh OUT
#
# writes OUT/0000-cover-letter.patch and the patches:
#   0. our patches to QEMU itself, qemu-device/qemu-patches (the build
#      applies them too), each with its own subject and message;
#   1. the device in hw/rdma/, its hardware header in include/hw/rdma/, its
#      Kconfig and meson hooks and a MAINTAINERS entry;
#   2. its qtests in tests/qtest/;
#   3. docs/system/devices/softhca.rst.
# Each patch that adds files extends the MAINTAINERS entry, so QEMU's
# checkpatch has nothing to ask.  What the out-of-tree build needs and a
# QEMU tree does not is left out: softhca-compat.h (the tree is the newest
# release) and the fuzzing harnesses (a series of their own).
set -euo pipefail
. "$(dirname "$0")/../common.sh"
. "$SOFTHCA_TOP/scripts/series/lib.sh"

out=${1:?usage: scripts/series/qemu.sh OUT}
# The release as Debian ships its source: the +ds tarball lacks the bundled
# firmware and wheels, and Debian's patches make it build without them.
pristine=$(pristine_tree "qemu-$QEMU_VERSION" \
	"$SOFTHCA_CACHE/src/qemu_${QEMU_DEB_VERSION#*:}.dsc")
work=$SOFTHCA_CACHE/series/work/qemu
dev=$SOFTHCA_TOP/qemu-device
qt=$SOFTHCA_TOP/tests/qtest

qemu_patches=("$dev"/qemu-patches/*.patch)
# shellcheck disable=SC2046 # the files the patches touch, one word each
series_begin "$work" "$pristine" hw/Kconfig hw/meson.build meson.build \
	MAINTAINERS tests/qtest/meson.build docs/system/device-emulation.rst \
	$(patched_files "${qemu_patches[@]}")

# In a QEMU tree the hardware header is include/hw/rdma/softhca_hw.h, and
# the device is written for this release alone.
upstream_source() {	# FILE: its text as the series carries it
	sed -e 's|^#include "\(hw/softhca/\)\{0,1\}softhca_hw.h"|#include "hw/rdma/softhca_hw.h"|' \
		-e '/^#include "softhca-compat.h"$/d' \
		-e 's/SofthcaClassData \*data/const void *data/' \
		-e 's/softhca_enable_lockless_io(/memory_region_enable_lockless_io(/' "$1"
}

# --- 0. QEMU's own patches -------------------------------------------------
# Each file is a subject line, a blank line, the message, "---" and the diff.
for p in "${qemu_patches[@]}"; do
	patch -s -p1 -d "$work" < "$p" || die "series: ${p##*/} does not apply"
	series_patch "$work" "$(sed -n 1p "$p")" "$(sed -n '3,/^---$/p' "$p" | sed '$d')"
done

# --- 1. the device ----------------------------------------------------------
mkdir -p "$work/hw/rdma" "$work/include/hw/rdma"
for f in "$dev"/softhca*.[ch]; do
	[ "${f##*/}" = softhca-compat.h ] && continue
	upstream_source "$f" > "$work/hw/rdma/${f##*/}"
done
# a name of softhca-compat.h that upstream_source does not resolve
if grep -n 'SofthcaClassData\|SOFTHCA_QEMU_AT_LEAST\|softhca_enable_lockless_io\|softhca-compat' "$work/hw/rdma"/*; then
	die "series: softhca-compat.h has names that upstream_source leaves"
fi
cp "$dev/Kconfig" "$dev/meson.build" "$dev/trace-events" "$work/hw/rdma/"
printf '%s\n' '/* SPDX-License-Identifier: GPL-2.0-or-later */' \
	'#include "trace/trace-hw_rdma.h"' > "$work/hw/rdma/trace.h"
# The hardware header as QEMU's copy: without the Linux kernel's types,
# indented with spaces only (QEMU's C style), and under QEMU's preferred
# license, which its authors give this copy.
user_hw_header |
	sed '1s|^/\* SPDX-License-Identifier: .* \*/$|/* SPDX-License-Identifier: GPL-2.0-or-later */|' |
	expand -t 8 > "$work/include/hw/rdma/softhca_hw.h"
insert_line "$work/hw/Kconfig" before '^source remote/Kconfig$' 'source rdma/Kconfig'
insert_line "$work/hw/meson.build" before "^subdir\\('remote'\\)$" "subdir('rdma')"
insert_line "$work/meson.build" before "^    'hw/remote',$" "    'hw/rdma',"
insert_line "$work/MAINTAINERS" after '^F: tests/qtest/libqos/igb.c$' \
	"$(printf '%s\n' '' 'softhca' \
		'M: softhca maintainers <'"$(series_ident | sed 's/.*<\(.*\)>/\1/')"'>' \
		'S: Maintained' 'F: hw/rdma/' 'F: include/hw/rdma/softhca_hw.h')"
series_patch "$work" "hw/rdma: add softhca, an RDMA over Converged Ethernet v2 NIC" \
"softhca is a PCIe RDMA device with one Ethernet port.  Guests run real
RoCEv2 over it: RC, UC, UD and the GSI QP, SRQs, memory windows, XRC,
atomics, fast registration, multicast and loopback, with the ICRC on
every packet, so a softhca guest talks to Linux's Soft-RoCE (rdma_rxe)
or to any RoCEv2 peer on the netdev's network.

The guest posts work to queues in its own memory and rings doorbells in
a BAR of their own, one page per user context, so that user space drives
the queues without the kernel.  An admin queue creates and destroys the
objects.  Every object, every ring index and every length the guest or
the network gives is checked before use, and the work a doorbell or a
frame buys is bounded.

The hardware interface is include/hw/rdma/softhca_hw.h, and is
described in docs/system/devices/softhca.rst."

# --- 2. the qtests ----------------------------------------------------------
tests=()
for f in "$qt"/softhca-*.[ch]; do
	# the device-alone bench is this project's tool, not a qtest
	case $f in */softhca-bench.c) continue ;; esac
	upstream_source "$f" > "$work/tests/qtest/${f##*/}"
	case $f in *-test.c) t=${f##*/}; tests+=("${t%.c}") ;; esac
done
list=$(printf "'%s', " "${tests[@]}")
insert_line "$work/tests/qtest/meson.build" after "\\['intel-iommu-test'\\] : \\[\\]\\)" \
	"  (config_all_devices.has_key('CONFIG_SOFTHCA') ? [${list%, }] : []) +                 \\"
# the helper library compiles once for all of them, as libqos does
insert_line "$work/tests/qtest/meson.build" before '^qtests = [{]$' \
	"softhca_qtest = declare_dependency(objects: static_library('softhca-qtest',"
insert_line "$work/tests/qtest/meson.build" before '^qtests = [{]$' \
	"  files('softhca-qtest.c'), dependencies: [qemuutil, qos],"
insert_line "$work/tests/qtest/meson.build" before '^qtests = [{]$' \
	"  build_by_default: false).extract_all_objects(recursive: false))"
insert_line "$work/tests/qtest/meson.build" before '^qtests = [{]$' ''
for t in "${tests[@]}"; do
	insert_line "$work/tests/qtest/meson.build" before "^  'tpm-crb-swtpm-test'" \
		"  '$t': softhca_qtest,"
done
insert_line "$work/MAINTAINERS" after '^F: include/hw/rdma/softhca_hw.h$' \
	'F: tests/qtest/softhca-*'
series_patch "$work" "tests/qtest: add the softhca qtests" \
"The register and queue interface of softhca without a guest: the admin
queue, CQs, QPs and MRs, RC and UD traffic between two devices over a
socket netdev, atomics, fault injection, and malformed input from the
guest and from the network, including one test per class of the pvrdma
CVEs.  softhca-qtest.c is the helper library they share."

# --- 3. the documentation ---------------------------------------------------
mkdir -p "$work/docs/system/devices"
cp "$dev/softhca.rst" "$work/docs/system/devices/softhca.rst"
insert_line "$work/docs/system/device-emulation.rst" after '^   devices/nvme.rst$' \
	'   devices/softhca.rst'
insert_line "$work/MAINTAINERS" before '^F: hw/rdma/$' \
	'F: docs/system/devices/softhca.rst'
series_patch "$work" "docs/system/devices: document softhca" \
"How to give a guest a softhca, its properties, the guest software it
needs, and what it implements of RoCEv2."

series_end "$work" "$out" "softhca: an RDMA over Converged Ethernet v2 NIC" \
"This series adds softhca, a PCIe RDMA NIC with one Ethernet port that
speaks real RoCEv2 on the netdev it is given.  It is for RDMA driver and
stack developers without hardware, CI systems that need a cluster of RDMA
machines, and people learning RDMA.  A Linux driver (drivers/infiniband/
hw/softhca) and an rdma-core provider go with it, as series of their own.

The first patch is independent of the device: it gives -netdev dgram
batched receive and send (recvmmsg and sendmmsg), which any NIC that
sends bursts over it gains from.

Unlike pvrdma, which was removed in 9.1, softhca needs nothing from the
host: no host RDMA device, no backend daemon.  It implements the transport
itself, so two softhca guests talk to each other, and to rdma_rxe, over
any netdev.

Open question for the maintainers: the device uses an ID of the
experimental range 1af4:10f0 (docs/specs/pci-ids.rst); it would take a
1b36 ID if merged."
echo "$out"
