#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Build the MPI programs of tests/guest/mpi in the Debian 13 build root,
# into $SOFTHCA_CACHE/build/mpi-tests.
set -euo pipefail
. "$(dirname "$0")/../../../scripts/common.sh"

out=$SOFTHCA_CACHE/build/mpi-tests
mkdir -p "$out/src"
cp "$SOFTHCA_TOP"/tests/guest/mpi/{Makefile,mpi-check.c} "$out/src/"
"$SOFTHCA_TOP/scripts/buildroot.sh" run "$out" make -C src OUT=/build
