# SPDX-License-Identifier: GPL-2.0-or-later
# Private apt configurations (sourced, not run): images/build.sh,
# qemu-device/build.sh.

# apt-get with a private configuration in folder $1: its own sources, lists,
# cache and an empty dpkg status, so it resolves the full dependency closure
# for a guest, or fetches a source package, and never touches the host's
# package state or sources (Debian 13 binaries there would upgrade the
# host's glibc).  The host's apt.conf.d is kept on purpose (a proxy
# configured there still applies).
apt_private() {
	local dir=$1
	shift
	apt-get -q \
		-o Dir::Etc::SourceList="$dir/sources.list" \
		-o Dir::Etc::SourceParts="$dir/sources.list.d" \
		-o Dir::Etc::Preferences="$dir/preferences" \
		-o Dir::Etc::PreferencesParts="$dir/preferences.d" \
		-o Dir::State="$dir/state" \
		-o Dir::State::status="$dir/status" \
		-o Dir::Cache="$dir/cache" \
		-o APT::Architecture=amd64 -o APT::Architectures=amd64 \
		-o APT::Install-Recommends=false -o APT::Install-Suggests=false \
		-o APT::Sandbox::User=root \
		"$@"
}

# setup_apt_private DIR SUITE...: the configuration in DIR, for the binary
# packages of each SUITE, or its source packages for src:SUITE.
setup_apt_private() {
	local dir=$1 suite mirror type
	shift
	mirror=$(debian_mirror)
	mkdir -p "$dir"/{sources.list.d,preferences.d,state/lists/partial,cache/archives/partial}
	touch "$dir/status" "$dir/preferences"
	for suite in "$@"; do
		type=deb
		[ "${suite#src:}" = "$suite" ] || { type=deb-src; suite=${suite#src:}; }
		echo "$type [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main"
	done > "$dir/sources.list.new"
	# A changed mirror or a day-old index triggers an update; otherwise the
	# cached lists are reused so a rebuild does not depend on the network.
	if ! cmp -s "$dir/sources.list.new" "$dir/sources.list" ||
		[ -z "$(find "$dir/state/lists" -name '*_InRelease' -mtime -1)" ]; then
		mv "$dir/sources.list.new" "$dir/sources.list"
		log "updating the package lists of $*"
		apt_private "$dir" update >&2
	fi
	rm -f "$dir/sources.list.new"
}
