# SPDX-License-Identifier: GPL-2.0-or-later
# Making a patch series against another project's pristine source (sourced
# by scripts/series/*.sh, not run).
#
# A series is written in a scratch git repository that holds only the
# files the series touches: series_begin copies their pristine versions in
# as the base commit, each series_patch commits what the project script
# put in the work tree since, and series_end writes the patches and a cover
# letter with git format-patch.  Patches of such a repository apply to the
# whole pristine tree.

# The identity of the series' author: this checkout's committer.
series_ident() {
	git -C "$SOFTHCA_TOP" var GIT_COMMITTER_IDENT | sed 's/ [0-9]* [-+][0-9]*$//'
}

# series_begin WORK PRISTINE FILE...: a repository in WORK with the
# pristine versions of the FILEs that the series modifies.
series_begin() {
	local work=$1 pristine=$2 f
	shift 2
	rm -rf "$work"
	mkdir -p "$work"
	git -C "$work" init -q
	git -C "$work" config user.name "$(series_ident | sed 's/ <.*//')"
	git -C "$work" config user.email "$(series_ident | sed 's/.*<\(.*\)>/\1/')"
	for f in "$@"; do
		[ -f "$pristine/$f" ] || die "series: $pristine has no $f"
		mkdir -p "$(dirname "$work/$f")"
		cp "$pristine/$f" "$work/$f"
	done
	git -C "$work" add -A
	git -C "$work" commit -q -m base
}

# series_patch WORK SUBJECT BODY: commit the work tree as one patch, with
# the author's Signed-off-by.
series_patch() {
	local work=$1 subject=$2 body=$3
	git -C "$work" add -A
	git -C "$work" commit -q -s -F - <<-MSG
	$subject

	$body
	MSG
}

# series_end WORK OUT SUBJECT BLURB [PREFIX]: the patches in OUT, with a
# cover letter 0000 that has SUBJECT and BLURB, subjects "[PREFIX n/N]".
series_end() {
	local work=$1 out=$2 subject=$3 blurb=$4 prefix=${5:-PATCH}
	rm -rf "$out"
	mkdir -p "$out"
	git -C "$work" format-patch -q --cover-letter --subject-prefix="$prefix" \
		--no-signature -o "$out" HEAD~"$(($(git -C "$work" rev-list --count HEAD) - 1))"
	SUBJECT=$subject BLURB=$blurb python3 - "$out"/0000-cover-letter.patch <<-'PY'
	import os, sys
	p = sys.argv[1]
	s = open(p).read()
	s = s.replace("*** SUBJECT HERE ***", os.environ["SUBJECT"])
	s = s.replace("*** BLURB HERE ***", os.environ["BLURB"])
	open(p, "w").write(s)
	PY
}

# insert_line FILE after|before REGEX LINE: LINE next to the first line
# matching REGEX (awk syntax); fails when no line matches.
insert_line() {
	local file=$1 where=$2 re=$3 line=$4
	awk -v where="$where" -v re="$re" -v line="$line" '
		!done && $0 ~ re {
			if (where == "before") print line
			print
			if (where == "after") print line
			done = 1
			next
		}
		{ print }
		END { exit !done }' "$file" > "$file.new" ||
		die "series: no line matching '$re' in $file"
	mv "$file.new" "$file"
}

# pristine_tree NAME SOURCE: SOURCE unpacked once into the cache as NAME,
# and never written to afterwards; prints the path.  SOURCE is a tarball
# with one top folder, or a Debian source package (.dsc), unpacked with
# Debian's patches.
pristine_tree() {
	local name=$1 src=$2 dir=$SOFTHCA_CACHE/series/pristine/$1
	[ -f "$src" ] || die "series: no $src"
	if [ "$(cat "$dir/.softhca-from" 2>/dev/null)" != "${src##*/}" ]; then
		log "unpacking ${src##*/}"
		rm -rf "$dir" "$dir.tmp"
		mkdir -p "${dir%/*}"
		case $src in
		*.dsc) dpkg-source --no-check -x "$src" "$dir.tmp" >&2 ;;
		*) mkdir "$dir.tmp" &&
			tar -xf "$src" -C "$dir.tmp" --strip-components=1 ;;
		esac
		echo "${src##*/}" > "$dir.tmp/.softhca-from"
		mv "$dir.tmp" "$dir"
	fi
	echo "$dir"
}

# linux_source: the path of the newest guest kernel's pristine source
# tree, from Debian's linux-source package of its suite (also
# scripts/smb-kernel.sh's).
linux_source() {
	local rel series debs=$SOFTHCA_CACHE/series/debs deb
	rel=$(kernel_newest)
	series=$(echo "$rel" | cut -d. -f1,2)
	deb=$(compgen -G "$debs/linux-source-${series}_*_all.deb" | sort -V | tail -n1) || true
	if [ -z "$deb" ]; then
		mkdir -p "$debs"
		log "downloading linux-source-$series"
		(cd "$debs" && series_apt download "linux-source-$series") >&2
		deb=$(compgen -G "$debs/linux-source-${series}_*_all.deb" | sort -V | tail -n1)
	fi
	if [ ! -f "$debs/linux-source-$series.tar.xz" ]; then
		dpkg-deb --fsys-tarfile "$deb" |
			tar -xO "./usr/src/linux-source-$series.tar.xz" > "$debs/linux-source-$series.tar.xz.tmp"
		mv "$debs/linux-source-$series.tar.xz.tmp" "$debs/linux-source-$series.tar.xz"
	fi
	pristine_tree "linux-$series" "$debs/linux-source-$series.tar.xz"
}

# series_apt ARGS...: apt-get with the series' private configuration: the
# suite of the newest guest kernel (its linux-source) and sid's sources
# (a sparse that knows the newest kernel's C, tests/series/run).
series_apt() {
	local rel
	rel=$(kernel_newest)
	setup_apt_private "$SOFTHCA_CACHE/apt-series" "$(kernel_field "$rel" 3)" src:sid
	apt_private "$SOFTHCA_CACHE/apt-series" "$@"
}

# user_hw_header: spec/softhca_hw.h without its Linux kernel branch, for
# the projects that are not the kernel.
user_hw_header() {
	awk '
		$0 == "#ifdef __KERNEL__" { skip = 1; next }
		skip == 1 && $0 == "#else" { skip = 2; next }
		skip == 2 && $0 == "#endif" { skip = 0; next }
		skip != 1' "$SOFTHCA_TOP/spec/softhca_hw.h"
}
