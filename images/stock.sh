#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A stock Debian 13 guest, as a user's own VM would be: a disk image made
# by mmdebstrap with Debian's kernel, initramfs, systemd, DKMS and the
# kernel headers, and nothing of softhca.  For the package test
# (tests/vm/packages.sh), which installs scripts/packages.sh's .debs in it.
#
#   $SOFTHCA_CACHE/images/stock-trixie/{disk.raw,vmlinuz,initrd.img}
#
# vmlinuz and initrd.img are copies of the disk's own /boot files, for
# QEMU's direct kernel boot (the disk has no boot loader).  Besides the
# packages, the disk holds one unit of the lab's: it touches
# /run/softhca-ready once the guest agent runs, as the lab's own image
# does.  Rebuilt when this file changes.
set -euo pipefail
. "$(dirname "$0")/../scripts/common.sh"

out=$SOFTHCA_CACHE/images/stock-trixie
STOCK_PACKAGES=(systemd-sysv udev kmod iproute2 initramfs-tools zstd
	linux-image-amd64 linux-headers-amd64 dkms gcc make
	libibverbs1 ibverbs-utils qemu-guest-agent)
DISK_SIZE=4G

stamp=$(sha256sum < "$0" | cut -c1-16)
[ "$(cat "$out/stamp" 2>/dev/null)" = "$stamp" ] && { echo "$out"; exit 0; }
[ "$(id -u)" = 0 ] || die "run as root (mmdebstrap, mke2fs of a root tree)"

exec 9> "$SOFTHCA_CACHE/images.lock"
flock 9
mirror=$(debian_mirror)
tmp=$(mktemp -d "$SOFTHCA_CACHE/stock.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root

log "making the stock Debian 13 disk (mmdebstrap)"
mmdebstrap --quiet --variant=minbase --components=main \
	--include="$(IFS=,; echo "${STOCK_PACKAGES[*]}")" \
	--customize-hook='echo "/dev/vda / ext4 defaults 0 1" > "$1/etc/fstab"' \
	--customize-hook='echo stock > "$1/etc/hostname"' \
	--customize-hook='chroot "$1" passwd -d root' \
	trixie "$root" "deb $mirror trixie main" >&2

cat > "$root/etc/systemd/system/softhca-lab-ready.service" <<'EOF'
[Unit]
Description=Tell the softhca lab that this guest is ready
After=qemu-guest-agent.service
Wants=qemu-guest-agent.service

[Service]
Type=oneshot
ExecStart=/usr/bin/touch /run/softhca-ready

[Install]
WantedBy=multi-user.target
EOF
ln -sf ../softhca-lab-ready.service \
	"$root/etc/systemd/system/multi-user.target.wants/softhca-lab-ready.service"
mkdir -p "$out"
cp "$(ls "$root"/boot/vmlinuz-* | sort -V | tail -n1)" "$out/vmlinuz.new"
cp "$(ls "$root"/boot/initrd.img-* | sort -V | tail -n1)" "$out/initrd.img.new"
rm -f "$out/disk.raw.new"
mke2fs -q -t ext4 -d "$root" -L stock "$out/disk.raw.new" "$DISK_SIZE"
for f in vmlinuz initrd.img disk.raw; do mv "$out/$f.new" "$out/$f"; done
echo "$stamp" > "$out/stamp"
log "stock disk: $(du -h "$out/disk.raw" | cut -f1) used of $DISK_SIZE"
echo "$out"
