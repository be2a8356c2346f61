#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Fetch, patch, configure and build QEMU with the softhca device and its qtest.
#
# Prints the emulator's path on stdout (all else goes to stderr), so callers
# can run `qemu=$(qemu-device/build.sh)`.  Each release builds in
# $SOFTHCA_CACHE/build/qemu-VERSION; build/qemu names the default one (the
# newest, scripts/common.sh), which the lab runs.  The qtest binaries are
# build/qemu-VERSION/tests/qtest/softhca-*-test, one per file of
# tests/qtest; run them from the build dir with
# QTEST_QEMU_BINARY=./qemu-system-x86_64.
#
# Everything lives in $SOFTHCA_CACHE, outside the checkout; each step is
# skipped when its result is already there, so a rebuild after a device edit
# recompiles just that file.  The device is linked into the QEMU tree, never
# copied: edits in the checkout are seen by the next run without any step.
#
# Environment:
#   SOFTHCA_DEVICE_DIR  device sources to link in [$SOFTHCA_TOP/qemu-device]
#   SOFTHCA_QTEST_DIR   the qtests and their helper library
#                       [$SOFTHCA_TOP/tests/qtest]
#   SOFTHCA_SANITIZE=1  build in $SOFTHCA_CACHE/build/qemu-fuzz-VERSION: clang
#                       with ASan, UBSan and libFuzzer, adding the fuzzing
#                       target qemu-fuzz-x86_64 with softhca's harnesses
#   SOFTHCA_SANITIZE=coverage  the fuzzing target alone, without sanitizers
#                       and with clang's source-based coverage, in
#                       build/qemu-fuzz-cov-VERSION (tests/fuzz/coverage)
#   SOFTHCA_QTEST_ONLY=1  for a release other than the default: an emulator
#                       for the qtests alone, without TCG, unoptimized and
#                       without debug info, in build/qemu-qtest-VERSION (a
#                       fraction of a full build's time); the default
#                       release's full build serves its qtests
#   SOFTHCA_FUZZ_SRC    the harnesses [$SOFTHCA_TOP/tests/fuzz]
#   SOFTHCA_QEMU_VERSION  another of scripts/common.sh's QEMU_RELEASES, or
#                       "all" for each of them
set -euo pipefail
# shellcheck source=SCRIPTDIR/../scripts/common.sh
. "$(dirname "$0")/../scripts/common.sh"
. "$SOFTHCA_TOP/scripts/apt-private.sh"
if [ "${SOFTHCA_QEMU_VERSION:-}" = all ]; then
	for release in "${QEMU_RELEASES[@]}"; do
		SOFTHCA_QEMU_VERSION=${release%% *} "$0"
	done
	exit
fi
[ -n "$QEMU_DEB_VERSION" ] || die "no QEMU release $QEMU_VERSION in QEMU_RELEASES"

device_dir=${SOFTHCA_DEVICE_DIR:-$SOFTHCA_TOP/qemu-device}
qtest_dir=${SOFTHCA_QTEST_DIR:-$SOFTHCA_TOP/tests/qtest}
fuzz_src=${SOFTHCA_FUZZ_SRC:-$SOFTHCA_TOP/tests/fuzz}
src=$SOFTHCA_CACHE/src/qemu-$QEMU_VERSION

mkdir -p "$SOFTHCA_CACHE/src" "$SOFTHCA_CACHE/build"
use_ccache
# Several scripts (lab, tests, make's stages) call this one.  The source
# trees are set up by one at a time; then each build folder is built by one
# at a time, while others set up or build their own.
exec 9>"$SOFTHCA_CACHE/build/qemu.lock"
flock 9

# --- 1. Source, with Debian's patches applied ------------------------------
# The stamp holds the Debian version, so a new upload of the same upstream
# version is unpacked afresh.
if [ "$(cat "$src/.softhca-unpacked" 2>/dev/null)" != "$QEMU_DEB_VERSION" ]; then
	log "fetching qemu $QEMU_DEB_VERSION source"
	# apt checks the files against the signed Sources index, dpkg-source
	# checks them against the .dsc.
	setup_apt_private "$SOFTHCA_CACHE/apt-src" $(printf '%s\n' "${QEMU_RELEASES[@]}" |
		awk '{ print "src:" $3 }' | sort -u)
	(cd "$SOFTHCA_CACHE/src" &&
		apt_private "$SOFTHCA_CACHE/apt-src" source --download-only "qemu=$QEMU_DEB_VERSION") >&2
	dsc=$SOFTHCA_CACHE/src/qemu_${QEMU_DEB_VERSION#*:}.dsc
	rm -rf "$src" "$src.tmp"
	dpkg-source -x "$dsc" "$src.tmp" >&2
	rm -rf "$src.tmp/roms"	# firmware sources, 269 MB, never built here
	echo "$QEMU_DEB_VERSION" > "$src.tmp/.softhca-unpacked"
	mv "$src.tmp" "$src"
fi

# --- 1b. Our patches to QEMU itself (qemu-device/qemu-patches) ------------
# They go upstream in the QEMU series (scripts/series/qemu.sh).  The first
# time a file is patched its release version is kept, so a changed set is
# applied to the release's files again; only the files it touches rebuild.
shopt -s nullglob
qemu_patches=("$device_dir"/qemu-patches/*.patch)
shopt -u nullglob
patches_sum=$(cat /dev/null "${qemu_patches[@]}" | sha256sum)
if [ "$(cat "$src/.softhca-patches" 2>/dev/null)" != "$patches_sum" ]; then
	pristine=$src/.softhca-pristine
	mkdir -p "$pristine"
	(cd "$pristine" && find . -type f -exec cp --parents {} "$src" \;)
	for f in $(patched_files "${qemu_patches[@]}"); do
		[ -e "$pristine/$f" ] || install -D -m 644 "$src/$f" "$pristine/$f"
	done
	for p in "${qemu_patches[@]}"; do
		log "applying ${p##*/}"
		patch -s -p1 -d "$src" < "$p" >&2 ||
			die "${p##*/} does not apply to QEMU $QEMU_VERSION"
	done
	echo "$patches_sum" > "$src/.softhca-patches"
fi

# --- 2. Hook the device and its qtest in -----------------------------------
append_once() {	# file line
	grep -qxF "$2" "$1" || printf '%s\n' "$2" >> "$1"
}
insert_after_once() {	# file anchor-line line
	grep -qxF "$3" "$1" && return
	grep -qxF "$2" "$1" || die "$1: no line '$2' to hook into"
	local anchor=$2 line=$3
	awk -v a="$anchor" -v l="$line" '{ print } $0 == a { print l }' "$1" > "$1.new"
	mv "$1.new" "$1"
}
# link_files DIR GLOB FILE...: DIR's links named GLOB are links to FILEs
# and no others.  A link already right is left alone: another build may be
# compiling through it.
link_files() {
	local dir=$1 glob=$2 l f keep
	shift 2
	for l in "$dir"/$glob; do
		[ -L "$l" ] || continue
		keep=0
		for f; do [ "${f##*/}" = "${l##*/}" ] && keep=1; done
		[ "$keep" = 1 ] || rm "$l"
	done
	for f; do
		[ "$(readlink "$dir/${f##*/}")" = "$f" ] || ln -sfn "$f" "$dir/"
	done
}

# hw/softhca is a real folder of links, checked on every run because the
# checkout may have moved since the last one (CI clones into a new folder but
# reuses the cache).  Links do not change the targets' mtimes, so this costs
# no recompilation.
hwdir=$src/hw/softhca
mkdir -p "$hwdir"
device_files=()
for f in "$device_dir"/*; do
	case ${f##*/} in build.sh | *.mak) continue ;; esac
	[ -f "$f" ] || continue
	device_files+=("$f")
done
# The hardware ABI header may not exist yet: link it anyway.
link_files "$hwdir" '*' "${device_files[@]}" "$SOFTHCA_TOP/spec/softhca_hw.h"
# `#include "trace.h"` in a device file means the generated header of its
# folder's trace-events; QEMU keeps a one-line trace.h in each such folder.
# Written only when missing: a new mtime would recompile the whole device.
[ -e "$hwdir/trace.h" ] || echo '#include "trace/trace-hw_softhca.h"' > "$hwdir/trace.h"

append_once "$src/hw/Kconfig" 'source softhca/Kconfig'
append_once "$src/hw/meson.build" "subdir('softhca')"
insert_after_once "$src/meson.build" "    'hw/remote'," "    'hw/softhca',"

# The qtests and their helper library, which the fuzzing harnesses share.
link_files "$src/tests/qtest" 'softhca-*' "$qtest_dir"/softhca-*.[ch]
qtests=()
for f in "$qtest_dir"/softhca-*.[ch]; do
	# softhca-bench (make bench) builds as a qtest does, and is no test
	case $f in *-test.c | */softhca-bench.c) t=${f##*/}; qtests+=("${t%.c}") ;; esac
done
# Our lines in meson.build are made afresh (a qtest file may be gone), and
# the file is replaced only when they changed: meson tracks it.
qmeson=$src/tests/qtest/meson.build
grep -v "'softhca-[a-z0-9-]*test'\\|'softhca-bench'" "$qmeson" > "$qmeson.softhca" || true
for t in "${qtests[@]}"; do
	insert_after_once "$qmeson.softhca" 'qtests_x86_64 = qtests_i386' \
		"qtests_x86_64 += config_all_devices.has_key('CONFIG_SOFTHCA') ? ['$t'] : []"
	insert_after_once "$qmeson.softhca" 'qtests = {' "  '$t': softhca_qtest,"
done
# the helper library compiles once for all of them, as libqos does
insert_after_once "$qmeson.softhca" 'qtests_x86_64 = qtests_i386' \
	"softhca_qtest = declare_dependency(objects: static_library('softhca-qtest', files('softhca-qtest.c'), dependencies: [qemuutil, qos], build_by_default: false).extract_all_objects(recursive: false))"
if cmp -s "$qmeson.softhca" "$qmeson"; then rm "$qmeson.softhca"; else mv "$qmeson.softhca" "$qmeson"; fi
fuzz_meson=$src/tests/qtest/fuzz/meson.build
append_once "$fuzz_meson" \
	"specific_fuzz_ss.add(when: 'CONFIG_SOFTHCA', if_true: files('../softhca-qtest.c'))"
fuzz_files=()
for f in "$fuzz_src"/softhca_*.[ch]; do
	[ -e "$f" ] && fuzz_files+=("$f")
done
link_files "$src/tests/qtest/fuzz" 'softhca_*' "${fuzz_files[@]}"
for f in "${fuzz_files[@]}"; do
	case $f in
	*_fuzz.c) append_once "$fuzz_meson" \
		"specific_fuzz_ss.add(when: 'CONFIG_SOFTHCA', if_true: files('${f##*/}'))" ;;
	esac
done

# The devices of our minimal machine.  configure only takes a name under
# configs/devices/; rewritten only when changed, since meson tracks this file.
# virtio-9p shares a kernel tree with the lab's guests (tests/lab up
# --kernel-tree); virtme-ng adds an i6300esb watchdog to every guest.
mak=$src/configs/devices/x86_64-softmmu/softhca.mak
cat > "$mak.new" <<'MAK'
# Generated by softhca's qemu-device/build.sh
CONFIG_Q35=y
CONFIG_I440FX=y
CONFIG_PCIE_PORT=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_NET=y
CONFIG_VIRTIO_BLK=y
CONFIG_VIRTIO_RNG=y
CONFIG_VIRTIO_SERIAL=y
CONFIG_VIRTIO_9P=y
CONFIG_WDT_IB6300ESB=y
CONFIG_SOFTHCA=y
MAK
# 10.2 links hw/acpi/cxl.c into every x86 ACPI machine, and its CXL stubs
# lack cxl_fmws_get_all_sorted(): without CXL itself (with the PCI expander
# bridge it needs and the memory device it calls), Q35 does not link.
case $QEMU_VERSION in
10.[0-1].*) ;;
*) printf '%s\n' CONFIG_PXB=y CONFIG_CXL=y CONFIG_CXL_MEM_DEVICE=y >> "$mak.new" ;;
esac
if cmp -s "$mak.new" "$mak"; then rm "$mak.new"; else mv "$mak.new" "$mak"; fi

# --- 3. Configure, once per option set -------------------------------------
# sanitize_cc: the C compiler of the sanitized build, a clang whose ASan and
# UBSan instrument softhca's own files: the device, its qtests and fuzzing
# harnesses, and the QEMU files of our patches.  The rest of QEMU compiles
# without them (its objects still allocate through ASan's heap, which
# checks the device's every access to that memory), since they cost 2.5
# times the CPU: 33.6 s against 13.6 s for 8 of QEMU's heavier files.  Its
# name holds its hash, so that a new list configures the build afresh.
sanitize_cc() {
	local own f text sum
	own='*/hw/softhca/*.c | */tests/qtest/softhca-*.c | */tests/qtest/fuzz/softhca_*.c'
	for f in $(patched_files "${qemu_patches[@]}"); do
		own+=" | */$f"
	done
	text=$(cat <<CC
#!/bin/sh
# Generated by softhca's qemu-device/build.sh: clang, without ASan and
# UBSan when it compiles a file that is not softhca's own.
own=no compile=no
for a; do
	case \$a in
	-c) compile=yes ;;
	$own) own=yes ;;
	esac
done
[ "\$compile" = yes ] && [ "\$own" = no ] || exec clang "\$@"
for a; do
	shift
	case \$a in -fsanitize=address | -fsanitize=undefined) continue ;; esac
	set -- "\$@" "\$a"
done
exec clang "\$@"
CC
	)
	sum=$(printf '%s\n' "$text" | sha256sum | cut -c1-12)
	f=$SOFTHCA_CACHE/build/sanitize-cc-$sum
	if [ ! -x "$f" ]; then
		rm -f "$SOFTHCA_CACHE"/build/sanitize-cc-*
		printf '%s\n' "$text" > "$f.tmp" && chmod +x "$f.tmp" && mv "$f.tmp" "$f"
	fi
	echo "$f"
}

build=$SOFTHCA_CACHE/build/qemu
opts=("${QEMU_CONFIGURE_OPTS[@]}")
targets=(qemu-system-x86_64 "${qtests[@]/#/tests/qtest/}")
if [ "${SOFTHCA_SANITIZE:-0}" = 1 ]; then
	# QEMU's fuzzing needs clang; the same build serves the sanitized qtests
	# and VM smoke, since fuzzer-no-link instrumentation changes nothing else.
	build=$SOFTHCA_CACHE/build/qemu-fuzz
	# -O1, as sanitizers and libFuzzer advise (and the line tables of
	# every build): the reports keep their lines, and the build takes far
	# less time than with -O2
	opts+=(--cc="$(sanitize_cc)" --cxx=clang++ --host-cc=clang
		--enable-fuzzing --enable-asan --enable-ubsan -Doptimization=1)
	targets+=(qemu-fuzz-x86_64)
elif [ "${SOFTHCA_SANITIZE:-0}" = coverage ]; then
	build=$SOFTHCA_CACHE/build/qemu-fuzz-cov
	opts+=(--cc=clang --cxx=clang++ --host-cc=clang --enable-fuzzing
		"--extra-cflags=-fprofile-instr-generate -fcoverage-mapping"
		"--extra-ldflags=-fprofile-instr-generate")
	targets=(qemu-fuzz-x86_64)
elif [ "${SOFTHCA_QTEST_ONLY:-0}" = 1 ] && [ "$QEMU_VERSION" != "${QEMU_RELEASES[0]%% *}" ]; then
	# qtest is an accelerator of its own: no guest code ever runs
	build=$SOFTHCA_CACHE/build/qemu-qtest
	opts=("${opts[@]/--enable-tcg/--disable-tcg}" -Doptimization=0)
fi

# Each release builds in a folder of its own; the default one's is also
# reached by the plain name (build/qemu, build/qemu-fuzz), which scripts use.
if [ "$QEMU_VERSION" = "${QEMU_RELEASES[0]%% *}" ]; then
	# a plain-named build folder is from before releases had their own
	[ -L "$build" ] || rm -rf "$build"
	[ "$(readlink "$build")" = "${build##*/}-$QEMU_VERSION" ] ||
		ln -sfn "${build##*/}-$QEMU_VERSION" "$build"
fi
build=$build-$QEMU_VERSION
# The source is set up: hold this build folder alone from here on.
exec 8>"$build.lock"
flock 8
exec 9>&-

configured "$build" "$src/configure" "${opts[@]}" || die "QEMU's configure failed in $build"

# --- 4. Build what we use --------------------------------------------------
# Plain `ninja` would build every test and tool; name the targets.
# ninja pulls in libqos and libqtest as the qtest's link dependencies.
ninja -C "$build" "${targets[@]}" >&2

# --- 5. Firmware ------------------------------------------------------------
# Run from its build dir, QEMU looks for firmware only under qemu-bundle/
# (the build has no blobs: the +ds source ships none).  Use the host's
# seabios, ipxe-qemu and qemu-system-data packages.
bundle=$build/qemu-bundle$QEMU_PREFIX/share/qemu
mkdir -p "$bundle"
for f in /usr/share/seabios/*.bin /usr/lib/ipxe/qemu/*.rom \
	/usr/share/qemu/{kvmvapic,linuxboot,linuxboot_dma,multiboot,multiboot_dma,pvh}.bin; do
	[ -f "$f" ] || die "$f missing: run scripts/host-deps.sh"
	ln -sfn "$f" "$bundle/"
done

echo "$build/qemu-system-x86_64"
