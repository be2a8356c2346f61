#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Host test of the provider, no VM and no kernel module needed:
#
#   1. it builds and needs only the guest's libibverbs ABI (build.sh);
#   2. it registers itself: the PROVIDER_DRIVER alias verbs_provider_softhca
#      is its verbs_device_ops and a constructor calls
#      verbs_register_driver_34;
#   3. its queue geometry and entry formats (softhca_queue.c) match the
#      byte layouts of spec §13–§15, and post_send and the ibv_wr_* API
#      (softhca_post.c, softhca_qp_ex.c) write the same WQEs and ring once
#      per batch (provider-queue-test.c, with ASan and UBSan), and its CQs, extended ones included, poll a ring as poll_cq
#      does (provider-cq-test.c, on stubbed kernel commands);
#   4. libibverbs loads it (dlopen RTLD_NOW, as for a .driver file) and gives
#      it exactly the devices it must take, from a fake sysfs: a device is
#      matched by its parent's PCI id or by its name although its driver id
#      is RDMA_DRIVER_UNKNOWN, and refused with another uverbs ABI version.
#
# Step 4 needs a private mount namespace (for /dev/infiniband) and a host
# without RDMA netlink (else libibverbs never reads sysfs); it is skipped,
# and said so, where either is missing.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/common.sh"

so=$("$SOFTHCA_TOP/guest-provider/build.sh")
build=${so%/lib/*}
fail() { echo "FAIL unit/provider: $*"; exit 1; }

# --- 2. registration ---------------------------------------------------------

addr_of() { nm "$so" | awk -v s="$1" '$3 == s { print $1 }'; }
ops=$(addr_of softhca_dev_ops)
if [ -z "$ops" ] || [ "$(addr_of verbs_provider_softhca)" != "$ops" ]; then
	fail "verbs_provider_softhca is not softhca_dev_ops"
fi
# grep without -q reads to the end: an early exit would kill the writer with
# SIGPIPE and fail the pipeline under pipefail.
readelf -d "$so" | grep '(INIT_ARRAY)' >/dev/null || fail "no constructor"
nm "$so" | grep ' t softhca_register_driver$' >/dev/null ||
	fail "no softhca_register_driver constructor"
echo "PASS unit/provider-registration"

# --- 3. queue geometry and entries --------------------------------------------

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
here=$SOFTHCA_TOP/tests/unit
cc -std=gnu11 -g -O1 -Wall -Wextra -Werror \
	-fsanitize=address,undefined -fno-sanitize-recover=all \
	-I"$here" -isystem "$build/include" -I"$SOFTHCA_TOP/spec" \
	-I"$SOFTHCA_TOP/guest-provider" -o "$tmp/queue-test" \
	"$here/provider-queue-test.c" "$SOFTHCA_TOP/guest-provider/softhca_queue.c" \
	"$SOFTHCA_TOP/guest-provider/softhca_post.c" \
	"$SOFTHCA_TOP/guest-provider/softhca_qp_ex.c" ||
	fail "provider-queue-test: build"
"$tmp/queue-test" || fail "provider-queue-test"
# The CQ code needs libibverbs' driver headers: -isystem keeps their
# warnings out of -Werror.  The stubs ignore most of their parameters.
cc -std=gnu11 -g -O1 -Wall -Wextra -Wno-unused-parameter -Werror \
	-fsanitize=address,undefined -fno-sanitize-recover=all \
	-I"$here" -isystem "$build/include" -I"$SOFTHCA_TOP/spec" \
	-I"$SOFTHCA_TOP/guest-provider" -o "$tmp/cq-test" \
	"$here/provider-cq-test.c" "$SOFTHCA_TOP/guest-provider/softhca_cq.c" \
	"$SOFTHCA_TOP/guest-provider/softhca_cq_ex.c" \
	"$SOFTHCA_TOP/guest-provider/softhca_queue.c" ||
	fail "provider-cq-test: build"
"$tmp/cq-test" || fail "provider-cq-test"

# --- 4. matching in a fake sysfs ----------------------------------------------

if python3 -c 'import socket; socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 20)' 2>/dev/null; then
	echo "SKIP unit/provider-matching: this host has RDMA netlink (ib_core loaded)"
	exit 0
fi
if ! unshare -m true 2>/dev/null; then
	echo "SKIP unit/provider-matching: no private mount namespace (unshare -m)"
	exit 0
fi

ninja -C "$build" bin/ibv_devices >/dev/null
sys=$tmp/sys
softhca_pci=$(printf 'pci:v%08Xd%08Xsv00001AF4sd00001100bc02sc00i00' \
	"$(awk '$2 == "SHCA_PCI_VENDOR_ID" { print $3 }' "$SOFTHCA_TOP/spec/softhca_hw.h")" \
	"$(awk '$2 == "SHCA_PCI_DEVICE_ID" { print $3 }' "$SOFTHCA_TOP/spec/softhca_hw.h")")
abi=$(awk '$2 == "SOFTHCA_UVERBS_ABI_VERSION" { print $3 }' \
	"$SOFTHCA_TOP/spec/softhca-abi.h")

mkdir -p "$sys/class/infiniband_verbs"
echo 6 > "$sys/class/infiniband_verbs/abi_version"	# ib_uverbs' own
# fake_dev INDEX IBDEV UVERBS_ABI [MODALIAS]
fake_dev() {
	local uv=$sys/class/infiniband_verbs/uverbs$1 ib=$sys/class/infiniband/$2

	mkdir -p "$uv" "$ib/device"
	echo "$2" > "$uv/ibdev"
	echo "231:$((192 + $1))" > "$uv/dev"
	echo "$3" > "$uv/abi_version"
	echo "1: CA" > "$ib/node_type"
	[ -z "${4:-}" ] || echo "$4" > "$ib/device/modalias"
}
fake_dev 0 rocep0s3 "$abi" "$softhca_pci"	# renamed: by PCI id
fake_dev 1 softhca1 "$abi"			# no PCI parent: by name
fake_dev 2 other0 "$abi" \
	pci:v00001AF4d00001000sv00001AF4sd00000001bc02sc00i00
fake_dev 3 softhca3 $((abi + 1)) "$softhca_pci"	# other ABI version

# shellcheck disable=SC2016 # expanded by the inner shell
unshare -m sh -c '
	mount -t tmpfs none /dev && mkdir /dev/infiniband &&
	for i in 0 1 2 3; do : > /dev/infiniband/uverbs$i; done &&
	exec "$@"' sh env SYSFS_PATH="$sys" \
	RDMAV_DRIVERS="$build/lib/libsofthca" \
	LD_LIBRARY_PATH="$build/lib" "$build/bin/ibv_devices" \
	> "$tmp/out" 2> "$tmp/err" || fail "ibv_devices: $(cat "$tmp/err")"

found=$(awk 'NR > 2 { print $1 }' "$tmp/out" | sort | xargs)
[ "$found" = "rocep0s3 softhca1" ] ||
	fail "devices taken: '$found', expected 'rocep0s3 softhca1'"
grep -q "Driver softhca does not support the kernel ABI of $((abi + 1))" \
	"$tmp/err" || fail "softhca3 (ABI $((abi + 1))) not refused for its ABI"
echo "PASS unit/provider-matching (PCI id, name, ABI version)"
