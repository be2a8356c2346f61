#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A small kernel of our own for make test-full: Debian's linux-source of
# the newest guest kernel (scripts/kernels.sh, fetched as the series does)
# configured for a lab guest (x86_64_defconfig, kvm_guest.config and the
# fragment below: RDMA, 9p, the lab's boot needs) with SMB Direct, ksmbd's
# and cifs's RDMA transport, which Debian's own kernels build without.
# Built with the host's compiler (through ccache) into
# $SOFTHCA_CACHE/build/linux-smb, a tree for tests/lab up --kernel-tree.
# Prints the tree's path; built again only when this file or the source
# changes.
#
# Not 6.12, which it was: 6.12's cifs queues smbd_disconnect_rdma_work
# from completions and frees the connection without waiting for it, so
# after an unmount the work could call rdma_disconnect() on a destroyed
# cm_id (an oops in 2 of 7 runs of vm/ulp-smb-direct).  Linux fixed that
# in 2025; the newest kernel's fs/smb/smbdirect disables the work before
# it frees the connection.
set -euo pipefail
. "$(dirname "$0")/common.sh"
. "$SOFTHCA_TOP/scripts/apt-private.sh"
. "$SOFTHCA_TOP/scripts/series/lib.sh"

tree=$SOFTHCA_CACHE/build/linux-smb
[ "$(id -u)" = 0 ] || die "run as root (apt-get download into the cache)"
src=$(linux_source)
stamp=$({ cat "$0" "$src/.softhca-from"; } | sha256sum | cut -c1-16)
if [ "$(cat "$tree/.softhca-stamp" 2>/dev/null)" = "$stamp" ] &&
	[ -e "$tree/arch/x86/boot/bzImage" ]; then
	echo "$tree"
	exit 0
fi

fragment() {
	cat <<-'EOF'
		CONFIG_LOCALVERSION="-softhca-smb"
		# CONFIG_LOCALVERSION_AUTO is not set
		CONFIG_BLK_DEV_INITRD=y
		CONFIG_RD_ZSTD=y
		CONFIG_DEVTMPFS=y
		CONFIG_TMPFS=y
		CONFIG_MODULES=y
		CONFIG_MODULE_UNLOAD=y
		# CONFIG_MODULE_SIG_FORCE is not set
		CONFIG_CONFIGFS_FS=y
		CONFIG_FW_CFG_SYSFS=y
		CONFIG_PCIEPORTBUS=y
		CONFIG_VIRTIO_PCI=y
		CONFIG_VIRTIO_CONSOLE=y
		CONFIG_HW_RANDOM_VIRTIO=y
		CONFIG_VIRTIO_NET=y
		CONFIG_NET_9P=y
		CONFIG_NET_9P_VIRTIO=y
		CONFIG_9P_FS=y
		CONFIG_IPV6=y
		CONFIG_INFINIBAND=m
		CONFIG_INFINIBAND_USER_ACCESS=m
		CONFIG_INFINIBAND_ADDR_TRANS=y
		CONFIG_RDMA_RXE=m
		CONFIG_SMB_SERVER=m
		CONFIG_SMB_SERVER_SMBDIRECT=y
		CONFIG_CIFS=m
		CONFIG_CIFS_SMB_DIRECT=y
		# what defconfig builds and a lab guest has no use for: half the
		# build time on two cores
		# CONFIG_DRM is not set
		# CONFIG_FB is not set
		# CONFIG_SOUND is not set
		# CONFIG_USB_SUPPORT is not set
		# CONFIG_HID is not set
		# CONFIG_WIRELESS is not set
		# CONFIG_WLAN is not set
		# CONFIG_BT is not set
		# CONFIG_RFKILL is not set
		# CONFIG_ETHERNET is not set
		# CONFIG_INPUT_JOYSTICK is not set
		# CONFIG_INPUT_TABLET is not set
		# CONFIG_INPUT_TOUCHSCREEN is not set
		# CONFIG_AGP is not set
		# CONFIG_PCCARD is not set
		# CONFIG_MD is not set
		# CONFIG_ATA is not set
		# CONFIG_EFI is not set
		# CONFIG_HIBERNATION is not set
		# CONFIG_KVM is not set
		# CONFIG_NETFILTER is not set
		# CONFIG_WATCHDOG is not set
		# CONFIG_MEDIA_SUPPORT is not set
		# CONFIG_DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT is not set
		CONFIG_DEBUG_INFO_NONE=y
	EOF
}

use_ccache
rm -rf "$tree"
mkdir -p "$tree"
fragment > "$tree/softhca.config"
make -s -C "$src" O="$tree" x86_64_defconfig kvm_guest.config >&2
"$src/scripts/kconfig/merge_config.sh" -m -O "$tree" "$tree/.config" "$tree/softhca.config" >&2
make -s -C "$src" O="$tree" olddefconfig >&2
# what the fragment asks for must have survived olddefconfig
while IFS= read -r line; do
	case $line in
	CONFIG_*) grep -qxF "$line" "$tree/.config" || die "the config lost $line" ;;
	"# CONFIG_"*" is not set")
		line=${line#\# }
		! grep -q "^${line%% *}=" "$tree/.config" || die "the config has ${line%% *} on" ;;
	esac
done < "$tree/softhca.config"
log "building $(make -s -C "$src" O="$tree" kernelrelease) (bzImage, modules)"
make -s -C "$src" O="$tree" -j"$(nproc)" bzImage modules >&2
echo "$stamp" > "$tree/.softhca-stamp"
echo "$tree"
