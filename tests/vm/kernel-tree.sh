# SPDX-License-Identifier: GPL-2.0-or-later
# A user's own kernel tree (sourced by tests/vm/run): tests/lab up
# --kernel-tree boots the nodes on it, shares it with them read-only, and
# tests/lab reload loads a module rebuilt on the host without a new
# image.  make test runs it on a packaged kernel laid out as a built tree,
# with no kernel to compile.

# The fixture's tree keeps its path from run to run, so that its
# softhca.ko and image are made again only when it changes.
ktree=$SOFTHCA_CACHE/kernel-tree-fixture

# The modules the fixture's tree holds (with what they depend on): RDMA
# and the lab's own, not the ULPs.
FAKE_TREE_MODULES=(virtio_net virtio_rng qemu_fw_cfg configfs ib_core ib_uverbs
	ib_cm iw_cm rdma_cm rdma_ucm rdma_rxe 9pnet_virtio 9p)

# fake_tree DIR: the default guest kernel, Debian's, as a built tree in
# DIR: its headers' kbuild files (links: make -C DIR M=... builds
# softhca.ko), its image as arch/x86/boot/bzImage, and FAKE_TREE_MODULES
# uncompressed at their places in the tree, listed in modules.order.
fake_tree() {
	local dir=$1 rel=$GUEST_KVER hdr f m ko kroot
	hdr=/usr/src/linux-headers-$rel
	kroot=$SOFTHCA_CACHE/kernel/$rel
	[ -e "$hdr/Module.symvers" ] && [ -e "$kroot/boot/vmlinuz-$rel" ] ||
		{ echo "no headers in $hdr or no kernel in $kroot (make)"; return 1; }
	rm -rf "$dir"
	mkdir -p "$dir/arch/x86/boot"
	for f in "$hdr"/* "$hdr"/.config "$hdr"/.kernelvariables; do
		[ "${f##*/}" = arch ] || ln -s "$f" "$dir/${f##*/}"
	done
	for f in "$hdr"/arch/x86/*; do ln -s "$f" "$dir/arch/x86/${f##*/}"; done
	cp "$kroot/boot/vmlinuz-$rel" "$dir/arch/x86/boot/bzImage"
	for m in "${FAKE_TREE_MODULES[@]}"; do
		modprobe -d "$kroot" -S "$rel" --show-depends "$m" || return 1
	done | awk '$1 == "insmod" { print $2 }' | sort -u | while read -r f; do
		ko=${f#"$kroot"/lib/modules/"$rel"/kernel/}
		ko=${ko%.xz}
		mkdir -p "$dir/${ko%/*}"
		case $f in
		*.xz) xz -dc "$f" > "$dir/$ko" ;;
		*) cp "$f" "$dir/$ko" ;;
		esac
		echo "${ko%.ko}.o"
	done > "$dir/modules.order"
	cp "$kroot/lib/modules/$rel"/modules.builtin{,.modinfo} "$dir/"
	echo "$dir: $(wc -l < "$dir/modules.order") modules of $rel"
}

# The tree is the host's, read-only, at its own path on node $1, and the
# softhca.ko running there is the one built against it.
tree_shared() {
	local i=$1 tree=$2
	on "$i" -- sh -c '
		tree=$1
		grep " $tree 9p ro," /proc/mounts && test -s "$tree/modules.order" || exit 1
		if touch "$tree/written" 2> /dev/null; then echo "$tree is writable"; exit 1; fi
		built=$(modinfo -F srcversion /run/softhca-kmod/softhca.ko)
		echo "softhca: running $(cat /sys/module/softhca/srcversion), built against the tree $built"
		[ "$(cat /sys/module/softhca/srcversion)" = "$built" ]' sh "$tree"
}

# reload softhca on node $1: built against the tree again, loaded from
# the share, its port back up; then RC runs.
tree_reload_softhca() {
	local log
	log=$("$lab" reload "$1" softhca 2>&1) || { echo "$log"; return 1; }
	echo "$log"
	grep -q "softhca loaded from /run/softhca-kmod/softhca.ko" <<< "$log" &&
		softhca_pair 4 ibv_rc_pingpong -n 100 -s 4096
}

# A module "rebuilt" in the tree on the host (another file: an ELF note
# added) loads on node $1 through the share, with no new image: the
# kernel lists the new note of the loaded module.
tree_reload_rebuilt() {
	local i=$1 tree=$2 m=$3 ko note=$out/rebuilt.note
	ko=$tree/$(sed -n "s|\(.*/$m\)\.o$|\1.ko|p" "$tree/modules.order")
	[ -f "$ko" ] || { echo "no $m in $tree"; return 1; }
	# an ELF note: name "softhca", type 1, a 4-byte descriptor
	printf 'softhca\0' | /usr/bin/python3 -c '
import struct, sys
name = sys.stdin.buffer.read()
sys.stdout.buffer.write(struct.pack("<III", len(name), 4, 1) + name + b"lab!")' > "$note"
	objcopy --add-section .note.softhca_rebuilt="$note" \
		--set-section-flags .note.softhca_rebuilt=alloc,readonly \
		--set-section-alignment .note.softhca_rebuilt=4 "$ko" || return 1
	"$lab" reload "$i" "$m" || return 1
	on "$i" -- ls "/sys/module/$m/notes/"
	on "$i" -- test -e "/sys/module/$m/notes/.note.softhca_rebuilt"
}

# A lab whose guests mount the tree is neither saved nor moved (QEMU's 9p
# device blocks migration), and says why.
tree_no_snapshot() {
	local log
	if log=$("$lab" snapshot tree-lab 2>&1); then
		echo "a snapshot of a --kernel-tree lab was made"
		return 1
	fi
	echo "$log"
	grep -q "kernel-tree lab's guests mount the tree" <<< "$log"
}
