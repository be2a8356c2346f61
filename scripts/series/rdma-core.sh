#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The provider as an rdma-core patch series (a pull request there),
# against the pristine source of the rdma-core release the guests run:
#
#   scripts/series/rdma-core.sh OUT
#
# writes OUT/0000-cover-letter.patch and the patches:
#   1. kernel-headers: the kernel's driver ids up to RDMA_DRIVER_SOFTHCA,
#      and softhca-abi.h, registered for kernel-abi/;
#   2. providers/softhca, hooked into the build, MAINTAINERS, the README's
#      list of kernel drivers, and the packages' lists of providers.
# In rdma-core's tree the provider matches the kernel's driver id (the
# out-of-tree driver has none, so our own build matches by PCI ID alone).
set -euo pipefail
. "$(dirname "$0")/../common.sh"
. "$SOFTHCA_TOP/scripts/series/lib.sh"

out=${1:?usage: scripts/series/rdma-core.sh OUT}
prov=$SOFTHCA_TOP/guest-provider
pristine=$(pristine_tree "rdma-core-$RDMA_CORE_VERSION" \
	"$SOFTHCA_CACHE/src/rdma-core_$RDMA_CORE_VERSION.orig.tar.gz")
work=$SOFTHCA_CACHE/series/work/rdma-core
series_begin "$work" "$pristine" CMakeLists.txt MAINTAINERS README.md \
	kernel-headers/CMakeLists.txt kernel-headers/rdma/ib_user_ioctl_verbs.h \
	debian/control debian/copyright redhat/rdma-core.spec suse/rdma-core.spec

# --- 1. kernel headers -------------------------------------------------------
# The enum follows the kernel's: IONIC came before SOFTHCA there.
kh=$work/kernel-headers
grep -qx $'\tRDMA_DRIVER_IONIC,' "$kh/rdma/ib_user_ioctl_verbs.h" ||
	insert_line "$kh/rdma/ib_user_ioctl_verbs.h" after $'^\tRDMA_DRIVER_MANA,$' $'\tRDMA_DRIVER_IONIC,'
insert_line "$kh/rdma/ib_user_ioctl_verbs.h" after $'^\tRDMA_DRIVER_IONIC,$' $'\tRDMA_DRIVER_SOFTHCA,'
cp "$SOFTHCA_TOP/spec/softhca-abi.h" "$kh/rdma/softhca-abi.h"
# both lists: the build's include/rdma/ and the kernel-abi/ wrappers
for n in 1 2; do
	awk -v n=$n '$0 == "  rdma/siw-abi.h" && ++seen == n { print; print "  rdma/softhca-abi.h"; next } { print }' \
		"$kh/CMakeLists.txt" > "$kh/CMakeLists.txt.new"
	mv "$kh/CMakeLists.txt.new" "$kh/CMakeLists.txt"
done
[ "$(grep -cx '  rdma/softhca-abi.h' "$kh/CMakeLists.txt")" = 2 ] ||
	die "series: kernel-headers/CMakeLists.txt has not two lists with siw-abi.h"
series_patch "$work" "Update kernel headers" \
"To the kernel series \"RDMA/softhca: Add the driver id and the user ABI\":
RDMA_DRIVER_IONIC and RDMA_DRIVER_SOFTHCA, and softhca-abi.h."

# --- 2. the provider -----------------------------------------------------------
p=$work/providers/softhca
mkdir -p "$p"
for f in "$prov"/CMakeLists.txt "$prov"/softhca*.[ch]; do
	python3 - "$f" > "$p/${f##*/}" <<-'PY'
	import re, sys
	s = open(sys.argv[1]).read()
	# match the kernel's driver id, then the device's PCI ID
	s = re.sub(r"/\*\n \* The kernel module is out of tree.*?\*/\n", "", s, flags=re.S)
	s = s.replace('\tVERBS_NAME_MATCH("softhca", NULL),\n',
	              "\tVERBS_DRIVER_ID(RDMA_DRIVER_SOFTHCA),\n")
	s = s.replace("RDMA_DRIVER_UNKNOWN", "RDMA_DRIVER_SOFTHCA")
	sys.stdout.write(s)
	PY
done
! grep -n 'VERBS_NAME_MATCH\|RDMA_DRIVER_UNKNOWN\|out of tree' "$p"/* ||
	die "series: the provider still matches as an out-of-tree one"
user_hw_header > "$p/softhca_hw.h"
insert_line "$work/CMakeLists.txt" before '^add_subdirectory\(providers/vmw_pvrdma\)$' \
	'add_subdirectory(providers/softhca)'
insert_line "$work/MAINTAINERS" before '^SRP DAEMON ' "$(printf '%s\n' \
	'SOFTHCA USERSPACE PROVIDER (for softhca.ko)' \
	"M:	softhca maintainers <$(series_ident | sed 's/.*<\(.*\)>/\1/')>" \
	'S:	Supported' 'F:	providers/softhca/' '')"
insert_line "$work/README.md" after '^ - siw\.ko$' ' - softhca.ko'
insert_line "$work/debian/control" after '^  - siw: ' \
	"  - softhca: QEMU's softhca RoCEv2 device"
insert_line "$work/debian/copyright" before '^Files: providers/vmw_pvrdma/\*$' "$(printf '%s\n' \
	'Files: providers/softhca/*' 'Copyright: 2026 The softhca authors' \
	'License: BSD-2-clause or GPL-2' '')"
for spec in redhat/rdma-core.spec suse/rdma-core.spec; do
	insert_line "$work/$spec" after '^- libsiw: ' \
		"- libsofthca: QEMU's softhca RoCEv2 device"
done
series_patch "$work" "providers/softhca: a provider for QEMU's softhca device" \
"softhca is an RDMA NIC with one RoCEv2 port that QEMU emulates
(-device softhca); its kernel driver is drivers/infiniband/hw/softhca.

The provider keeps the QP and CQ rings in the process and rings the
device's doorbells from a page the driver maps, so the data path does not
enter the kernel.  It implements RC, UC and UD QPs, SRQs and XRC, memory
windows, the extended QP and CQ API (ibv_wr_*, ibv_create_cq_ex), atomics,
ATOMIC WRITE and FLUSH.  pyverbs passes the tests that apply to it."

series_end "$work" "$out" "providers/softhca: QEMU's softhca RoCEv2 device" \
"The rdma-core provider of softhca, an RDMA NIC that QEMU emulates.  Its
kernel driver is posted to linux-rdma as \"RDMA/softhca: a driver for
QEMU's RoCEv2 device\"; patch 1 follows that series' uapi headers."
echo "$out"
