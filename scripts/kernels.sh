# SPDX-License-Identifier: GPL-2.0-or-later
# The guest kernels softhca is built and tested for (sourced, not run).
#
# One line per kernel: its release; the packages holding its image and
# modules (comma separated, % standing for the release); the suite that
# serves them; and the toolchain its modules build with: "host" (Debian
# 12's gcc-12, headers installed by host-deps.sh) or "trixie" (gcc-14 in
# the Debian 13 build root of buildroot.sh).  The first line is the lab's
# default kernel.  The archive drops superseded ABIs: when a download
# fails, the line needs the current release.
GUEST_KERNELS=(
	"6.12.95+deb12-amd64 linux-image-%-unsigned bookworm-backports host"
	"6.1.0-50-amd64 linux-image-%-unsigned bookworm host"
	"6.12.117+deb13-amd64 linux-image-%-unsigned trixie trixie"
	"7.3.4+deb13-amd64 linux-binary-%,linux-modules-%,linux-base-% trixie-backports trixie"
)

# kernel_field RELEASE N: the N-th field (1-4) of RELEASE's line.
kernel_field() {
	local line rel=$1 n=$2
	for line in "${GUEST_KERNELS[@]}"; do
		set -- $line
		[ "$1" = "$rel" ] || continue
		shift "$((n - 1))"
		echo "${1//%/$rel}"
		return 0
	done
	return 1
}

# kernel_select PREFIX: the first release that PREFIX names, as a version
# prefix ending at a component boundary: "6.1" is 6.1.0-50-amd64 and not
# 6.12, "6.12" is the default 6.12, "6.12.117" the Debian 13 one, "7" the
# newest series listed.  Empty: the default.
kernel_select() {
	local want=$1 line rel
	for line in "${GUEST_KERNELS[@]}"; do
		rel=${line%% *}
		if [ -z "$want" ] || [ "$rel" = "$want" ] ||
			[[ $rel == "$want"[!0-9]* ]]; then
			echo "$rel"
			return 0
		fi
	done
	echo "softhca: no guest kernel '$want' (known: $(kernel_releases))" >&2
	return 1
}

# kernels_built_with TOOLCHAIN: the releases whose modules build with it.
kernels_built_with() {
	local line toolchain=$1
	for line in "${GUEST_KERNELS[@]}"; do
		set -- $line
		[ "$4" != "$toolchain" ] || echo "$1"
	done
}

kernel_releases() {
	local line rels=
	for line in "${GUEST_KERNELS[@]}"; do rels+=" ${line%% *}"; done
	echo "${rels# }"
}

# kernel_newest: the newest release listed.
kernel_newest() {
	kernel_releases | tr ' ' '\n' | sed '/^$/d' | sort -V | tail -n1
}
