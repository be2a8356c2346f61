# SPDX-License-Identifier: GPL-2.0-or-later
# The emulator as a package (sourced by tests/vm/run): softhca-qemu, from
# scripts/packages.sh, installed with apt on a clean Debian 13 root that
# mmdebstrap makes, boots node 2 of a lab from that root, with the
# firmware of the root's own packages; on a Debian 12 root it installs
# and runs too.

qemu_pkg_root=$out/qemu-pkg-root

# qemu_pkg_in_root SUITE ROOT: a clean root of SUITE (apt variant) with the
# package, whose dependencies apt resolves from SUITE.  The emulator there
# runs, has the device, and every firmware file it links to is in the root.
qemu_pkg_in_root() {
	local suite=$1 root=$2 deb f
	deb=$(ls "$SOFTHCA_CACHE"/packages/softhca-qemu_*_amd64.deb 2> /dev/null) ||
		{ echo "no softhca-qemu package (make packages)"; return 1; }
	debian_root "$suite" "$root" "" "$deb"
	chroot "$root" dpkg-query -W softhca-qemu || return 1
	grep VERSION= "$root/etc/os-release"
	chroot "$root" /opt/softhca-qemu/bin/qemu-system-x86_64 -device help | grep '"softhca"' ||
		return 1
	for f in "$root"/opt/softhca-qemu/share/qemu/*; do
		[ -e "$root$(readlink "$f")" ] || { echo "${f#"$root"} links to nothing"; return 1; }
	done
}

# The package on a Debian 12 host: installed and run in a bookworm root.
qemu_pkg_debian12() {
	qemu_pkg_in_root bookworm "$out/qemu-pkg-root-12" || return 1
	rm -rf "$out/qemu-pkg-root-12"
}

# The package in a Debian 13 root, whose emulator node 2 of the layout
# runs.
qemu_pkg_install() {
	local root=$qemu_pkg_root
	qemu_pkg_in_root trixie "$root" || return 1
	# the emulator that node 2 runs: the root's, with the lab's folder and
	# images at their own paths in the root
	cat > "$out/qemu-pkg" <<-EOF
		#!/bin/sh
		exec unshare --mount --propagation private sh -c '
			root=\$1
			shift
			for d in /dev /proc "$LAB_DIR" "$SOFTHCA_CACHE/images"; do
				mkdir -p "\$root\$d" && mount --rbind "\$d" "\$root\$d" || exit 1
			done
			exec chroot "\$root" /opt/softhca-qemu/bin/qemu-system-x86_64 "\$@"' sh "$root" "\$@"
	EOF
	chmod +x "$out/qemu-pkg"
}

# Node $1's QEMU is the one from the package's root.
qemu_pkg_runs() {
	local pid exe
	pid=$(cat "$LAB_DIR/node$1.pid") && exe=$(readlink "/proc/$pid/exe") || return 1
	echo "node $1: pid $pid runs $exe"
	[ "$exe" = "$qemu_pkg_root/opt/softhca-qemu/bin/qemu-system-x86_64" ]
}
