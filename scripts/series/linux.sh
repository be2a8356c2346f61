#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The driver as a Linux patch series, against the source of the newest
# guest kernel (scripts/kernels.sh), Debian's linux-source package:
#
#   scripts/series/linux.sh OUT
#
# writes OUT/0000-cover-letter.patch and the patches:
#   1. the driver id RDMA_DRIVER_SOFTHCA and the user ABI header
#      include/uapi/rdma/softhca-abi.h, with a MAINTAINERS entry;
#   2. the driver in drivers/infiniband/hw/softhca/ with its Kconfig and
#      Makefile.
# In the tree the driver is written for that kernel alone: the compat
# layer (softhca_compat.h and the Makefile's feature tests) is resolved to
# the newest API, which is the one the driver is written against.
set -euo pipefail
. "$(dirname "$0")/../common.sh"
. "$SOFTHCA_TOP/scripts/apt-private.sh"
. "$SOFTHCA_TOP/scripts/series/lib.sh"

out=${1:?usage: scripts/series/linux.sh OUT}
drv=$SOFTHCA_TOP/guest-driver

# The driver's text in the tree: the compat layer resolved for the newest
# kernel, the ABI header from include/uapi, and a driver id of its own.
upstream_driver() {	# FILE
	sed -e '/^#include "softhca_compat.h"$/{N;/\n$/d;s/.*\n//}' \
		-e 's|^#include "softhca-abi.h"$|#include <rdma/softhca-abi.h>|' \
		-e 's/struct softhca_create_cq_arg \*/struct uverbs_attr_bundle */' \
		-e 's/softhca_create_cq_udata(attrs)/attrs ? \&attrs->driver_udata : NULL/' \
		-e 's/softhca_resize_cqe_t /unsigned int /' \
		-e 's/SOFTHCA_DMAH_PARAM /struct ib_dmah *dmah, /' \
		-e 's/SOFTHCA_DMAH_GIVEN/dmah/' \
		-e 's/softhca_qp_event_handler(ibqp)/ibqp->registered_event_handler/' \
		-e 's/RDMA_DRIVER_UNKNOWN/RDMA_DRIVER_SOFTHCA/' "$1"
}

pristine=$(linux_source)
work=$SOFTHCA_CACHE/series/work/linux
series_begin "$work" "$pristine" MAINTAINERS drivers/infiniband/Kconfig \
	drivers/infiniband/hw/Makefile include/uapi/rdma/ib_user_ioctl_verbs.h
email=$(series_ident | sed 's/.*<\(.*\)>/\1/')

# --- 1. the driver id and the user ABI -------------------------------------
insert_line "$work/include/uapi/rdma/ib_user_ioctl_verbs.h" after \
	'^\tRDMA_DRIVER_IONIC,$' "$(printf '\tRDMA_DRIVER_SOFTHCA,')"
cp "$SOFTHCA_TOP/spec/softhca-abi.h" "$work/include/uapi/rdma/softhca-abi.h"
insert_line "$work/MAINTAINERS" before '^SOFTLOGIC 6x10 MPEG CODEC$' \
	"$(printf '%s\n' 'SOFTHCA RDMA DRIVER' "M:	softhca maintainers <$email>" \
		'L:	linux-rdma@vger.kernel.org' 'S:	Supported' \
		'F:	include/uapi/rdma/softhca-abi.h' '')"
series_patch "$work" "RDMA/softhca: Add the driver id and the user ABI" \
"softhca is a PCIe RDMA device with one RoCEv2 port that QEMU emulates.
Add its driver id and the ABI between its kernel driver and its rdma-core
provider: the udata of the uverbs commands, which pass the rings the
provider allocates and the doorbell page it maps."

# --- 2. the driver -----------------------------------------------------------
d=$work/drivers/infiniband/hw/softhca
mkdir -p "$d"
for f in "$drv"/softhca*.[ch]; do
	[ "${f##*/}" = softhca_compat.h ] && continue
	upstream_driver "$f" > "$d/${f##*/}"
done
# The hardware header as the kernel's copy: the kernel's types only, its
# BIT() and static_assert().
awk '
	$0 == "#ifdef __KERNEL__" { skip = 0; next }
	$0 == "#include <linux/types.h>" {
		print "#include <linux/bits.h>"
		print "#include <linux/build_bug.h>"
		print
		next
	}
	$0 == "#else" && skip == 0 { skip = 1; next }
	skip == 1 && $0 == "#endif" { skip = 2; next }
	skip != 1' "$SOFTHCA_TOP/spec/softhca_hw.h" |
	sed -e 's/\buint\(8\|16\|32\|64\)_t\b/u\1/g' \
		-e 's/(1u << \([0-9A-Z_]*\))/BIT(\1)/g' \
		-e 's/^_Static_assert(/static_assert(/' \
		-e 's/^\t       \("shca_[a-z_]*");\)$/\t      \1/' > "$d/softhca_hw.h"
# a name of the compat layer that upstream_driver does not resolve
if grep -n 'softhca_compat\|softhca_create_cq_\|softhca_resize_cqe_t\|SOFTHCA_DMAH\|softhca_qp_event_handler\|SOFTHCA_HAVE' "$d"/*; then
	die "series: the compat layer has names that upstream_driver leaves"
fi
objs=$(sed -n '/^softhca-y :=/,/[^\\]$/p' "$drv/Makefile" | sed 's/^softhca-y :=//; s/\\//' | xargs)
{
	echo '# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause'
	echo 'obj-$(CONFIG_INFINIBAND_SOFTHCA) += softhca.o'
	echo
	echo "$objs" | fold -s -w 64 | sed 's/ *$//; 1s/^/softhca-y := /; 1!s/^/\t     /; $!s/$/ \\/'
} > "$d/Makefile"
cat > "$d/Kconfig" <<'KCONFIG'
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
config INFINIBAND_SOFTHCA
	tristate "QEMU softhca RoCEv2 device support"
	depends on PCI_MSI && 64BIT && INET
	depends on INFINIBAND_USER_ACCESS
	help
	  This is the driver of softhca, an RDMA NIC with one RoCEv2 port
	  that QEMU emulates (-device softhca).  It gives a virtual machine
	  RDMA without RDMA hardware: user space and kernel verbs, rdma_cm
	  and the upper-layer protocols over RoCEv2, with other softhca
	  machines or any RoCEv2 peer, such as Soft-RoCE.

	  To compile this driver as a module, choose M here.  The module
	  will be called softhca.
KCONFIG
insert_line "$work/drivers/infiniband/Kconfig" after \
	'^source "drivers/infiniband/hw/qedr/Kconfig"$' \
	'source "drivers/infiniband/hw/softhca/Kconfig"'
insert_line "$work/drivers/infiniband/hw/Makefile" after \
	'^obj-\$\(CONFIG_INFINIBAND_IONIC\)' \
	"$(printf 'obj-$(CONFIG_INFINIBAND_SOFTHCA)\t+= softhca/')"
insert_line "$work/MAINTAINERS" before '^F:	include/uapi/rdma/softhca-abi.h$' \
	"$(printf 'F:\tdrivers/infiniband/hw/softhca/')"
series_patch "$work" "RDMA/softhca: Add a driver for QEMU's softhca device" \
"softhca is a PCIe RDMA NIC with one Ethernet port that QEMU emulates.
It implements RoCEv2 itself, so virtual machines get RDMA without RDMA
hardware, between each other and with any RoCEv2 peer such as rxe.

The driver sets up the device through an admin queue, runs its Ethernet
port as a netdev, and registers an ib_device with:
- RC, UC and UD QPs and the GSI QP, for user space (the rings live in
  the process, doorbells are mapped into it) and for kernel consumers;
- SRQs, XRC, memory windows, fast registration, atomics, ATOMIC WRITE
  and FLUSH, multicast and hardware counters.

It is tested with rdma-core's pyverbs suite, perftest, rdma_cm tools,
NVMe over RDMA, NFS over RDMA, iSER and SRP, between softhca machines
and against rxe."

series_end "$work" "$out" "RDMA/softhca: a driver for QEMU's RoCEv2 device" \
"softhca is an RDMA NIC that exists only in QEMU (-device softhca, posted
to qemu-devel as a series of its own).  It has one Ethernet port and
implements RoCEv2 itself, so virtual machines get RDMA without RDMA
hardware and without anything on the host.  It is meant for RDMA driver
and stack developers, CI systems that need clusters of RDMA machines, and
people learning RDMA.

Patch 1 adds the driver id and the user ABI, patch 2 the driver.  Its
rdma-core provider is a pull request of its own.

Unlike rxe and siw, softhca is a device: queues in guest memory, a
doorbell BAR mapped into user space, MSI-X events, so it also exercises
the parts of the RDMA stack that only hardware drivers use."
echo "$out"
