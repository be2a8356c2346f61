#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Build the guest boot images: $SOFTHCA_CACHE/images/REL/{vmlinuz,initrd.img}
# for a guest kernel release REL.
#
#   images/build.sh [--kernel VER]   VER: a version prefix naming one of
#                                    scripts/kernels.sh's kernels (default:
#                                    the first), or "all"
#   images/build.sh --kernel-tree DIR
#                                    the kernel of a built tree (make
#                                    bzImage modules): its bzImage and the
#                                    modules its modules.order lists, in
#                                    $SOFTHCA_CACHE/images/tree-ID (ID: of
#                                    DIR's path); prints that folder
#
#   kernel     the kernel's image package from its suite, only the modules
#              the lab needs plus their modules.dep closure;
#   userspace  Debian 13 (trixie) binaries fetched through a private apt
#              configuration (never the host's sources), busybox-static;
#   ours       softhca.ko and the rdma-core provider, when they are built.
#
# Downloads are cached; the initrd is two archives (main, below), each
# made again only when one of its inputs changed.
# softhca.ko comes from guest-driver/build.sh's folder for REL.
# Overrides: SOFTHCA_KO, SOFTHCA_PROVIDER (paths of our two components),
# SOFTHCA_GUEST_TESTS (a folder of test programs for /usr/local/bin).
set -euo pipefail
. "$(dirname "$0")/../scripts/common.sh"
. "$SOFTHCA_TOP/scripts/apt-private.sh"

# dash is /bin/sh: Debian's busybox ash runs its own applets before $PATH,
# so `sh -c "ip ..."` would get busybox's ip instead of iproute2's.
# nvme-cli: NVMe over RDMA (the host side; the target is set up through
# configfs).  python3-pyverbs: rdma-core's own test suite (its tests/
# folder ships as documentation; see stage_pyverbs_tests).  Kernel ULPs
# (tests/vm/ulp.sh): the NFS server and client with rpcbind, whose
# /etc/netconfig and /etc/services come from libtirpc-common and netbase,
# and open-iscsi for iSER; ksmbd's daemon and mount.cifs for SMB Direct.
# UCX: ucx_info and ucx_perftest.  Open MPI
# with its runtime (PRRTE, PMIx: their help texts and PMIx's plugins are
# files of their own), which starts its daemons over ssh: OpenSSH's client
# and dropbear's server (images/init).
GUEST_DEBS=(libibverbs1 ibverbs-utils ibverbs-providers librdmacm1t64
	rdmacm-utils perftest iproute2 qemu-guest-agent libgcc-s1 dash strace
	nvme-cli python3-pyverbs nfs-kernel-server nfs-common rpcbind
	libtirpc-common netbase open-iscsi libucx0 ucx-utils
	openmpi-bin libopenmpi40 openmpi-common libpmix2t64 openssh-client
	dropbear-bin ksmbd-tools cifs-utils)
RDMA_CORE_DEBS=(libibverbs1 ibverbs-utils ibverbs-providers librdmacm1t64
	rdmacm-utils python3-pyverbs)
# The Python the suite runs on, staged whole: the interpreter and its
# standard library are not shared libraries the closure below would find.
PYTHON_DEBS=(python3 python3-minimal python3.13 python3.13-minimal
	libpython3.13 libpython3.13-minimal libpython3.13-stdlib
	libpython3-stdlib)
PYVERBS_TESTS=usr/lib/pyverbs-tests
# Roots of the module set; their dependencies come from modules.dep.
GUEST_MODULES=(virtio_net virtio_rng ib_core ib_uverbs ib_cm iw_cm rdma_cm
	rdma_ucm rdma_rxe nvme_rdma nvmet_rdma nvme_fabrics nvmet configfs brd
	nfsd nfsv3 nfsv4 rpcrdma target_core_iblock ib_isert ib_iser ib_srpt
	ib_srp sd_mod qemu_fw_cfg)
# Modules some kernels have and others build in or do without.  6.1 has
# virtio_pci and virtio_console (the guest agent's port) as modules.
# crc32_generic is no dependency but rdma_rxe needs it for the ICRC (it
# asks the crypto API for "crc32" and fails with ENOENT without it);
# crc32c_generic likewise for the iSCSI target's login ("crc32c").  From
# 6.14 the CRC library serves both and these modules are gone.
# 9pnet_virtio and 9p mount a kernel tree the lab shares (tests/lab up
# --kernel-tree).
GUEST_MODULES_IF_ANY=(virtio_pci virtio_console crc32_generic crc32c_generic
	9pnet_virtio 9p)
# Packages staged whole. Of all other resolved packages (dependencies) only
# the shared libraries that staged ELF files need are kept: most of them are
# there for maintainer scripts (adduser, passwd, PAM, debconf, perl).
FULL_DEBS=("${GUEST_DEBS[@]}" "${PYTHON_DEBS[@]}" libc6)
# Files of the staged packages that nobody reads inside the VM.
DROP_DIRS=(usr/share/doc usr/share/man usr/share/info usr/share/locale
	usr/share/lintian usr/share/bug usr/share/bash-completion
	usr/share/zsh usr/share/gdb usr/lib/x86_64-linux-gnu/gconv)
# Files (globs) of the staged packages that would pull in what no guest
# has: UCX's modules for AMD GPUs need the ROCm runtime, hundreds of MB.
# Open MPI's Java and Fortran bindings would need a JVM and libgfortran.
DROP_FILES=(usr/lib/x86_64-linux-gnu/ucx/lib*_rocm*
	usr/lib/x86_64-linux-gnu/libmpi_java.so* usr/lib/x86_64-linux-gnu/libmpi_mpifh*
	usr/lib/x86_64-linux-gnu/libmpi_usempi*)
# The links update-alternatives would make: name, then target.
ALTERNATIVES=("usr/bin/mpirun mpirun.openmpi" "usr/bin/mpiexec mpiexec.openmpi")

# The modules a tree's guests cannot do without; the others a tree may
# leave out (then the cases that need them fail).
TREE_CORE_MODULES=(ib_core ib_uverbs rdma_ucm)

kver=$GUEST_KVER tree='' id=''
if [ "${1:-}" = --kernel ] && [ "${2:-}" = all ]; then
	for kver in $(kernel_releases); do "$0" --kernel "$kver" || exit 1; done
	exit 0
elif [ "${1:-}" = --kernel ]; then
	kver=$(kernel_select "${2:?--kernel wants a version}") || exit 1
elif [ "${1:-}" = --kernel-tree ]; then
	tree=$(cd "${2:?--kernel-tree wants a folder}" && pwd) || exit 1
	[ -s "$tree/include/config/kernel.release" ] && [ -e "$tree/arch/x86/boot/bzImage" ] ||
		die "$tree: no built kernel (include/config/kernel.release, arch/x86/boot/bzImage: make bzImage modules)"
	kver=$(cat "$tree/include/config/kernel.release")
	id=tree-$(printf %s "$tree" | sha256sum | cut -c1-12)
fi
SOFTHCA_KO=${SOFTHCA_KO:-$SOFTHCA_CACHE/build/driver/${id:-$kver}/guest-driver/softhca.ko}
SOFTHCA_PROVIDER=${SOFTHCA_PROVIDER:-$SOFTHCA_CACHE/build/rdma-core/lib/libsofthca-rdmav34.so}
SOFTHCA_GUEST_TESTS=${SOFTHCA_GUEST_TESTS:-$SOFTHCA_CACHE/build/guest-tests}

out=$SOFTHCA_CACHE/images/${id:-$kver}
debs=$SOFTHCA_CACHE/debs
kroot=$SOFTHCA_CACHE/kernel/${id:-$kver}
aptdir=$SOFTHCA_CACHE/apt-trixie
kaptdir=$SOFTHCA_CACHE/apt-kernels
init_script=$SOFTHCA_TOP/images/init

# --- kernel --------------------------------------------------------------

# The kernel's packages (one package or, from 7.x, three: the image, the
# modules and the lists of built-in modules with the kernel's config),
# fetched through a private apt configuration of their own that has the
# suites of every kernel we know.  Prints their paths.
kernel_debs() {
	local pkg pkgs pattern
	IFS=, read -ra pkgs <<< "$(kernel_field "$kver" 2)"
	for pkg in "${pkgs[@]}"; do
		pattern="$debs/${pkg}_*_amd64.deb"
		if ! compgen -G "$pattern" >/dev/null; then
			setup_apt_private "$kaptdir" $(kernel_suites)
			log "downloading $pkg"
			mkdir -p "$debs"
			(cd "$debs" && apt_private "$kaptdir" download "$pkg") >&2
		fi
		compgen -G "$pattern" | sort -V | tail -n1
	done
}

kernel_suites() {
	local line
	for line in "${GUEST_KERNELS[@]}"; do
		set -- $line
		echo "$3"
	done | sort -u
}

# Extract the kernel packages once, with modules.dep generated for them
# (the package leaves that to its postinst).  Debian 13's kernels keep
# their modules in /usr/lib/modules, where the host's depmod does not look.
extract_kernel() {
	local names deb
	names=$(printf '%s\n' "${@##*/}")
	[ -e "$kroot/.extracted" ] && [ "$(cat "$kroot/.extracted")" = "$names" ] && return
	log "extracting $(echo $names)"
	rm -rf "$kroot"
	mkdir -p "$kroot"
	for deb in "$@"; do dpkg-deb -x "$deb" "$kroot"; done
	[ -e "$kroot/lib" ] || ln -s usr/lib "$kroot/lib"
	depmod -b "$kroot" "$kver"
	echo "$names" > "$kroot/.extracted"
}

# A built tree's modules, laid out in $kroot as modules_install would
# put them, but as links to the tree's files (only those its
# modules.order lists), with the tree's lists of built-in modules and
# modules.dep.  Prints what the initrd's digest takes from the tree.
tree_modules() {
	local m ko mdir=$kroot/lib/modules/$kver f
	rm -rf "$kroot"
	mkdir -p "$mdir/kernel"
	# modules.order names the objects (.o, or .ko before 6.2)
	while read -r m; do
		ko=${m%.o}
		ko=${ko%.ko}.ko
		[ -e "$tree/$ko" ] || continue
		mkdir -p "$mdir/kernel/${ko%/*}"
		ln -s "$tree/$ko" "$mdir/kernel/$ko"
		echo "kernel/$ko"
	done < "$tree/modules.order" > "$mdir/modules.order"
	for f in modules.builtin modules.builtin.modinfo; do
		if [ -e "$tree/$f" ]; then cp "$tree/$f" "$mdir/"; else : > "$mdir/$f"; fi
	done
	depmod -b "$kroot" "$kver"
	{
		sha256sum < "$tree/arch/x86/boot/bzImage"
		sed 's|^kernel/||' "$mdir/modules.order" | (cd "$tree" && xargs -r sha256sum)
	} | sha256sum | cut -c1-16
}

# 7.x keeps the image with the modules, older kernels in /boot; a tree
# has its bzImage.
kernel_image() {
	local f
	[ -z "$tree" ] || { echo "$tree/arch/x86/boot/bzImage"; return; }
	for f in "$kroot/boot/vmlinuz-$kver" "$kroot/lib/modules/$kver/vmlinuz"; do
		[ -e "$f" ] && { echo "$f"; return; }
	done
	die "no kernel image in $kroot"
}

# Paths (relative to $kroot) of the wanted modules and everything they need.
module_closure() {
	local m missing=()
	{
		for m in "${GUEST_MODULES[@]}"; do
			modprobe -d "$kroot" -S "$kver" --show-depends "$m" 2>/dev/null && continue
			[ -n "$tree" ] && [[ " ${TREE_CORE_MODULES[*]} " != *" $m "* ]] ||
				die "module $m not found in $kver"
			missing+=("$m")
		done
		[ ${#missing[@]} = 0 ] ||
			log "$tree has no modules ${missing[*]}: what needs them will not run"
		for m in "${GUEST_MODULES_IF_ANY[@]}"; do
			modprobe -d "$kroot" -S "$kver" --show-depends "$m" 2>/dev/null || true
		done
	} | awk '$1 == "insmod" { print $2 }' | sed "s|^$kroot/||" | sort -u
}

# --- guest user space from trixie -----------------------------------------

apt_trixie() { apt_private "$aptdir" "$@"; }

# Resolve the guest packages into "name version arch" lines.
resolve_guest_debs() {
	apt_trixie -s install "${GUEST_DEBS[@]}" |
		sed -n 's/^Inst \([^ ]*\) (\([^ ]*\) [^[]*\[\([^]]*\)\]).*/\1 \2 \3/p' | sort
}

check_rdma_core() {
	local manifest=$1 pkg ver
	for pkg in "${RDMA_CORE_DEBS[@]}"; do
		ver=$(awk -v p="$pkg" '$1 == p { print $2 }' "$manifest")
		case $ver in
		"$RDMA_CORE_VERSION"-*) ;;
		*) die "trixie offers $pkg '${ver:-nothing}', need rdma-core $RDMA_CORE_VERSION-*" ;;
		esac
	done
}

# The cached .deb file of a package; apt encodes ':' of an epoch as %3a.
deb_path() { echo "$aptdir/cache/archives/${1}_${2/:/%3a}_$3.deb"; }

manifest_debs() {
	local name ver arch
	while read -r name ver arch; do deb_path "$name" "$ver" "$arch"; done < "$1"
}

download_guest_debs() {
	local manifest=$1 f missing=0
	while read -r f; do [ -e "$f" ] || missing=1; done < <(manifest_debs "$manifest")
	[ "$missing" = 0 ] && return
	log "downloading trixie packages"
	apt_trixie install --download-only -y "${GUEST_DEBS[@]}" >&2
	while read -r f; do [ -e "$f" ] || die "apt did not fetch $f"; done < <(manifest_debs "$manifest")
}

# --- staging root ---------------------------------------------------------

# Full packages go to $root, dependencies to $deps (a library quarry).
stage_debs() {
	local root=$1 deps=$2 manifest=$3 name ver arch dest d link target
	while read -r name ver arch; do
		dest=$deps
		[[ " ${FULL_DEBS[*]} " == *" $name "* ]] && dest=$root
		dpkg-deb -x "$(deb_path "$name" "$ver" "$arch")" "$dest"
	done < "$manifest"
	stage_pyverbs_tests "$root"
	for d in "${DROP_DIRS[@]}"; do rm -rf "${root:?}/$d"; done
	for d in "${DROP_FILES[@]}"; do rm -f "${root:?}"/$d; done
	for d in "${ALTERNATIVES[@]}"; do
		read -r link target <<< "$d"
		ln -sfn "$target" "$root/$link"
	done
}

# rdma-core's test suite comes as documentation, partly gzipped: it moves
# out of usr/share/doc, unpacked, to $PYVERBS_TESTS.
stage_pyverbs_tests() {
	local root=$1 src=$1/usr/share/doc/rdma-core/tests
	[ -e "$src/run_tests.py" ] || die "python3-pyverbs has no tests/run_tests.py"
	mkdir -p "$root/${PYVERBS_TESTS%/*}"
	mv "$src" "$root/$PYVERBS_TESTS"
	find "$root/$PYVERBS_TESTS" -name '*.gz' -exec gunzip {} +
}

# NEEDED sonames of the staged programs and libraries that $root lacks.
# A plugin's folder counts (UCX's modules find each other by RUNPATH).
missing_libs() {
	local root=$1 f lib
	find "$root/usr/bin" "$root/usr/sbin" "$root/usr/lib" -type f \
		\( -perm -u+x -o -name '*.so*' \) |
		while read -r f; do readelf -d "$f" 2>/dev/null; done |
		sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p' | sort -u |
		while read -r lib; do
			[ -e "$root/usr/lib/x86_64-linux-gnu/$lib" ] ||
				[ -n "$(find "$root/usr/lib" -name "$lib" -print -quit)" ] ||
				echo "$lib"
		done
}

# Copy the needed libraries out of $deps until the closure is complete.
# The file keeps its real name behind the soname link: `ip` reads libbpf's
# version from it.
add_needed_libs() {
	local root=$1 deps=$2 libdir=$1/usr/lib/x86_64-linux-gnu libs lib src real
	while libs=$(missing_libs "$root") && [ -n "$libs" ]; do
		for lib in $libs; do
			src=$(find "$deps" -name "$lib" -print -quit)
			[ -n "$src" ] || die "no guest package provides $lib"
			real=$(readlink -f "$src")
			cp "$real" "$libdir/${real##*/}"
			[ "${real##*/}" = "$lib" ] || ln -s "${real##*/}" "$libdir/$lib"
		done
	done
}

# trixie is merged-/usr but the symlinks /bin -> usr/bin ... belong to
# base-files, which a guest needs for nothing else: fold stray top-level
# directories into /usr and create the links.
merge_usr() {
	local root=$1 d
	for d in bin sbin lib lib64; do
		mkdir -p "$root/usr/$d"
		if [ -d "$root/$d" ] && [ ! -L "$root/$d" ]; then
			cp -a "$root/$d/." "$root/usr/$d/"
			rm -rf "${root:?}/$d"
		fi
		ln -sfn "usr/$d" "$root/$d"
	done
}

# Busybox applets fill in only what the packages do not provide (the real
# iproute2 `ip` must win over busybox's).
stage_busybox() {
	local root=$1 applet name
	install -m 0755 /bin/busybox "$root/usr/bin/busybox"
	ln -sfn dash "$root/usr/bin/sh"
	for applet in $(/bin/busybox --list-full); do
		name=${applet##*/}
		[ "$name" = linuxrc ] && continue
		[ -e "$root/usr/bin/$name" ] || [ -e "$root/usr/sbin/$name" ] && continue
		case $applet in
		sbin/* | usr/sbin/*) ln -s ../bin/busybox "$root/usr/sbin/$name" ;;
		*) ln -s busybox "$root/usr/bin/$name" ;;
		esac
	done
}

# Modules are stored uncompressed: busybox modprobe does not read .ko.xz,
# and the initrd is compressed as a whole anyway.
stage_modules() {
	local root=$1 mdir=$1/usr/lib/modules/$kver rel f
	mkdir -p "$mdir"
	while read -r rel; do
		mkdir -p "$root/usr/${rel%/*}"
		cp "$kroot/$rel" "$root/usr/$rel"
	done < <(module_closure)
	find "$mdir" -name '*.ko.xz' -exec xz -d {} +
	# A tree's other modules: links to its files, which the guest sees
	# once it has mounted the tree (images/init), so modprobe finds them.
	if [ -n "$tree" ]; then
		while read -r rel; do
			[ -e "$mdir/$rel" ] && continue
			mkdir -p "$mdir/${rel%/*}"
			ln -s "$tree/${rel#kernel/}" "$mdir/$rel"
		done < "$kroot/lib/modules/$kver/modules.order"
	fi
	for f in modules.builtin modules.builtin.modinfo modules.order; do
		cp "$kroot/lib/modules/$kver/$f" "$mdir/"
	done
	if [ -e "$SOFTHCA_KO" ]; then
		mkdir -p "$mdir/extra"
		# Debug info stays in the host's copy (for decoding oopses).
		strip --strip-debug -o "$mdir/extra/softhca.ko" "$SOFTHCA_KO"
	fi
	depmod -b "$root" "$kver"
}

stage_provider() {
	local root=$1
	[ -e "$SOFTHCA_PROVIDER" ] || return 0
	install -m 0644 "$SOFTHCA_PROVIDER" \
		"$root/usr/lib/x86_64-linux-gnu/libibverbs/libsofthca-rdmav34.so"
	echo "driver softhca" > "$root/etc/libibverbs.d/softhca.driver"
}

# tests/guest's programs, built by tests/guest/Makefile.
stage_guest_tests() {
	local root=$1 f
	mkdir -p "$root/usr/local/bin"
	for f in "$SOFTHCA_GUEST_TESTS"/*; do
		[ -f "$f" ] && install -m 0755 "$f" "$root/usr/local/bin/"
	done
	return 0
}

stage_skeleton() {
	local root=$1
	mkdir -p "$root"/{proc,sys,dev,run,tmp,root,mnt,etc,var/lib}
	ln -sfn ../run "$root/var/run"
	# rpcbind runs as _rpc
	printf '%s\n' "root:x:0:0:root:/root:/bin/sh" \
		"_rpc:x:100:65534::/run/rpcbind:/usr/sbin/nologin" > "$root/etc/passwd"
	printf '%s\n' "root:x:0:" "nogroup:x:65534:" > "$root/etc/group"
	# tmpfs has no UUID for NFS file handles: fsid=0, the NFSv4 root too
	echo "/srv/nfs 10.0.0.0/24(rw,sync,no_subtree_check,no_root_squash,fsid=0)" \
		> "$root/etc/exports"
	mkdir -p "$root"/srv/nfs "$root"/var/lib/nfs \
		"$root"/var/lib/iscsi/{nodes,send_targets,ifaces}
	touch "$root"/var/lib/nfs/{etab,rmtab,state}
	# the lab's nodes by name, as launchers (mpirun --host) like them
	{
		printf '127.0.0.1 localhost\n::1 localhost\n'
		for i in $(seq 254); do echo "10.0.0.$i node$i"; done
	} > "$root/etc/hosts"
	echo "include /etc/ld.so.conf.d/*.conf" > "$root/etc/ld.so.conf"
	install -m 0755 "$init_script" "$root/init"
}

# A byte-identical archive for identical inputs: fixed mtimes, sorted
# names, owner root, no inode numbers. zstd -10: smaller than gzip -9 and
# five times faster to make (the kernel has RD_ZSTD).
pack_initrd() {
	local root=$1 dest=$2
	find "$root" -exec touch -h -d @0 {} +
	(cd "$root" && find . -mindepth 1 | LC_ALL=C sort |
		cpio -o -H newc -R 0:0 --reproducible --quiet) | zstd -q -10 > "$dest"
}

# --- main -----------------------------------------------------------------

file_hash() { if [ -e "$1" ]; then sha256sum < "$1"; else echo "absent"; fi; }

# The initrd is two compressed cpio archives end to end, which the kernel
# unpacks one after the other: the user space, the same for every kernel
# and kept in $userland, then the kernel's modules and softhca.ko.  A
# kernel tree or a driver rebuilt makes the second one alone, in seconds.
userland=$SOFTHCA_CACHE/images/userland

userland_digest() {
	local manifest=$1
	{
		printf '%s\n' "${DROP_DIRS[@]}" "${DROP_FILES[@]}"
		cat "$manifest"
		file_hash "$0"
		file_hash "$init_script"
		file_hash /bin/busybox
		file_hash "$SOFTHCA_PROVIDER"
		cat "$SOFTHCA_GUEST_TESTS"/* 2>/dev/null | sha256sum
	} | sha256sum | cut -d' ' -f1
}

modules_digest() {
	local kdebs=$1
	{
		echo "$kver $kdebs"
		printf '%s\n' "${GUEST_MODULES[@]}" "${GUEST_MODULES_IF_ANY[@]}"
		file_hash "$0"
		file_hash "$SOFTHCA_KO"
	} | sha256sum | cut -d' ' -f1
}

# The user space archive, made again when one of its inputs changed.
make_userland() {
	local manifest=$1 digest stage
	digest=$(userland_digest "$manifest")
	[ -e "$userland/userland.cpio.zst" ] && [ "$(cat "$userland/digest" 2>/dev/null)" = "$digest" ] &&
		return
	mkdir -p "$userland"
	stage=$tmp/userland
	mkdir "$stage" "$tmp/deps"
	stage_debs "$stage" "$tmp/deps" "$manifest"
	merge_usr "$stage"
	add_needed_libs "$stage" "$tmp/deps"
	stage_busybox "$stage"
	stage_provider "$stage"
	stage_guest_tests "$stage"
	stage_skeleton "$stage"
	ldconfig -r "$stage"
	pack_initrd "$stage" "$userland/userland.cpio.zst.new"
	mv "$userland/userland.cpio.zst.new" "$userland/userland.cpio.zst"
	echo "$digest" > "$userland/digest"
	rm -rf "$stage" "$tmp/deps"
}

# The kernel's archive: its modules under usr/lib/modules, where the
# user space's /lib link leads.
make_modules() {
	local dest=$1 stage=$tmp/modules
	mkdir -p "$stage/usr/lib"
	ln -s usr/lib "$stage/lib"	# for depmod, which reads lib/modules
	stage_modules "$stage"
	rm "$stage/lib"
	pack_initrd "$stage" "$dest"
}

main() {
	local kdebs manifest digest start=$SECONDS
	[ "$(id -u)" = 0 ] || die "run as root (depmod on the staged tree, apt cache)"
	mkdir -p "$out"
	# Several engineers rebuild the image: one build at a time.
	exec 9> "$SOFTHCA_CACHE/images.lock"
	flock 9
	if [ -n "$tree" ]; then
		kdebs=$(tree_modules)
	else
		kdebs=$(kernel_debs)
		extract_kernel $kdebs
	fi

	setup_apt_private "$aptdir" trixie
	manifest=$out/packages.txt
	resolve_guest_debs > "$manifest.new"
	[ -s "$manifest.new" ] || die "apt resolved no packages for the guest"
	mv "$manifest.new" "$manifest"
	check_rdma_core "$manifest"
	download_guest_debs "$manifest"

	cmp -s "$(kernel_image)" "$out/vmlinuz" || cp "$(kernel_image)" "$out/vmlinuz"

	tmp=$(mktemp -d "$SOFTHCA_CACHE/stage.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	make_userland "$manifest"
	digest=$(cat "$userland/digest")-$(modules_digest "$kdebs")
	if [ -e "$out/initrd.img" ] && [ "$(cat "$out/initrd.digest" 2>/dev/null)" = "$digest" ]; then
		log "initrd.img is up to date"
		[ -z "$tree" ] || echo "$out"
		return
	fi
	make_modules "$tmp/modules.cpio.zst"
	cat "$userland/userland.cpio.zst" "$tmp/modules.cpio.zst" > "$out/initrd.img.new"
	mv "$out/initrd.img.new" "$out/initrd.img"
	echo "$digest" > "$out/initrd.digest"
	log "$kver initrd.img: $(du -h "$out/initrd.img" | cut -f1) ($(wc -l < "$manifest") packages," \
		"softhca.ko $([ -e "$SOFTHCA_KO" ] && echo in || echo absent)," \
		"provider $([ -e "$SOFTHCA_PROVIDER" ] && echo in || echo absent)) in $((SECONDS - start)) s"
	[ -z "$tree" ] || echo "$out"
}

main "$@"
