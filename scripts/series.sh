#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The upstream patch series, generated from the tree:
#
#   scripts/series.sh [PROJECT...]    qemu, linux, rdma-core [all three]
#
# writes each into $SOFTHCA_CACHE/series/patches/PROJECT (a cover letter
# and the patches, as git format-patch makes them) and prints the folders.
# tests/series/run checks, applies and builds them.
set -euo pipefail
. "$(dirname "$0")/common.sh"

projects=("$@")
[ ${#projects[@]} -gt 0 ] || projects=(qemu linux rdma-core)
for p in "${projects[@]}"; do
	[ -x "$SOFTHCA_TOP/scripts/series/$p.sh" ] || die "no series '$p'"
	"$SOFTHCA_TOP/scripts/series/$p.sh" "$SOFTHCA_CACHE/series/patches/$p"
done
