# SPDX-License-Identifier: GPL-2.0-or-later
# Shared settings for softhca's build and test scripts (sourced, not run).

SOFTHCA_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SOFTHCA_CACHE=${SOFTHCA_CACHE:-/var/cache/softhca}

# Pinned versions (../shared/design.md).
# The QEMU releases the device builds on: version, Debian source version,
# suite.  SOFTHCA_QEMU_VERSION picks one; the first, the newest the archive
# serves, is the default: the lab, the VM suite and the fuzzers run it.
# The qtests run on each.
QEMU_RELEASES=(
	"10.2.2 1:10.2.2+ds-1 sid"
	"10.0.13 1:10.0.13+ds-0+deb13u1 trixie"
)
QEMU_VERSION=${SOFTHCA_QEMU_VERSION:-${QEMU_RELEASES[0]%% *}}
QEMU_DEB_VERSION=
for _release in "${QEMU_RELEASES[@]}"; do
	read -r _v _deb QEMU_SUITE <<< "$_release"
	[ "$_v" = "$QEMU_VERSION" ] && { QEMU_DEB_VERSION=$_deb; break; }
done
unset _release _v _deb
# How the lab's QEMU is configured (qemu-device/build.sh).  The series'
# build (tests/series/run) takes the same, so that ccache serves it.
QEMU_PREFIX=/usr/local
QEMU_CONFIGURE_OPTS=(
	"--prefix=$QEMU_PREFIX"
	# A pyenv shim may come first in PATH and hide the system's meson.
	--python=/usr/bin/python3
	--target-list=x86_64-softmmu
	--without-default-features --without-default-devices
	--with-devices-x86_64=softhca
	--enable-tcg --enable-kvm --enable-slirp
	# 9p: a kernel tree shared with the guests (glibc has the xattr calls)
	--enable-virtfs --enable-attr
	--enable-trace-backends=log	# `-trace softhca_*` prints to stderr
	--disable-docs --disable-download --disable-install-blobs
	# Line tables and function names only (-g1; clang's
	# -gline-tables-only): backtraces, perf and sanitizer reports keep
	# their files and lines.  Full -g (for gdb's locals: put
	# --enable-debug-info here) took 11 % more CPU to compile.
	--disable-debug-info --extra-cflags=-g1
)
RDMA_CORE_VERSION=56.1
RDMA_CORE_SHA256=63ce7f2baa7242c2dbc76375dac957c420187dd27f8c5e148efc07971ee522a8
# The private provider ABI of Debian 13's libibverbs 56.1 (libibverbs.map.in).
IBVERBS_PABI=34
. "$SOFTHCA_TOP/scripts/kernels.sh"
GUEST_KVER=${GUEST_KERNELS[0]%% *}

# use_ccache: compile through ccache, kept in $SOFTHCA_CACHE/ccache.  Paths
# under the cache are hashed relative to the build folder, and the folder
# itself is not hashed, so two trees of the same source laid out alike
# (build/X beside src/X) share their objects: the QEMU series' build reuses
# the lab's.  ccache's compiler links come first in PATH; QEMU's configure
# and meson find gcc and clang there.  Depend mode: a miss compiles once and
# hashes the headers the compiler's -MD file lists, where the default mode
# would first run the preprocessor too; on an empty cache that costs 54 %
# more CPU than the compiler alone, depend mode 10 % (60 of QEMU's files).
use_ccache() {
	[ -d /usr/lib/ccache ] || return 0
	export PATH=/usr/lib/ccache:$PATH
	export CCACHE_DIR=$SOFTHCA_CACHE/ccache CCACHE_BASEDIR=$SOFTHCA_CACHE
	export CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=8G CCACHE_DEPEND=1
	export CCACHE_SLOPPINESS=include_file_mtime,include_file_ctime
}

# configured BUILD PROGRAM ARGS...: the build folder BUILD, configured by
# PROGRAM ARGS run in it (its output on stderr); made anew only when the
# program or its arguments changed, since a build folder cannot be
# re-pointed at another source tree or safely given other options.  A
# configured tree keeps itself up to date as its sources change.
configured() {
	local build=$1 key
	shift
	key=$(printf '%s\n' "$@" | sha256sum | cut -c1-16)
	[ "$(cat "$build/.softhca-configured" 2>/dev/null)" = "$key" ] && return 0
	log "configuring $build"
	rm -rf "$build"
	mkdir -p "$build"
	(cd "$build" && "$@") >&2 || return 1
	echo "$key" > "$build/.softhca-configured"
}

die() { echo "softhca: $*" >&2; exit 1; }
log() { echo "softhca: $*" >&2; }

# The first URI of the host's main Debian entry, read at run time so that no
# mirror host name is ever written into a file of ours.
debian_mirror() {
	awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources
}

# perftest counts time in TSC cycles, calibrated against gettimeofday()
# when it reports; on a busy host under TCG that calibration can fail
# ("Correlation coefficient r^2 ... < 0.9"), and the run then reports 0
# whatever it moved.  Whether perftest's output in file $1 says so: such a
# run measured no time.
perftest_uncalibrated() { grep -q 'Correlation coefficient' "$1"; }

# patched_files PATCH...: the files the unified diffs PATCH... change, each
# once (their "+++ b/" lines); nothing for no PATCH.
patched_files() { sed -n 's|^+++ b/||p' /dev/null "$@" | sort -u; }

# perftest_mibs FILE SIZE SECONDS: the average MiB/s of the row for SIZE
# in FILE, the output of an ib_*_bw -D SECONDS.  A run that could not
# calibrate its clock (above) still counts its messages right: its figure
# is then those messages over the window it counted them in, which its
# alarms time: SECONDS less a margin of SECONDS/4, whole seconds, at each
# end (perftest's catch_alarm()).  Nothing when FILE has no such row.
perftest_mibs() {
	local uncalibrated=0
	perftest_uncalibrated "$1" && uncalibrated=1
	awk -v size="$2" -v secs="$3" -v u="$uncalibrated" '
		$1 == size && NF >= 5 {
			if (u) printf "%.2f\n", $2 * size / (secs - 2 * int(secs / 4)) / 1048576
			else print $4
			exit
		}' "$1"
}
