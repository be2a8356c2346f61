# SPDX-License-Identifier: GPL-2.0-or-later
# Build stages that cases wait for (sourced by tests/vm/run): make test
# builds some stages beside the VM suite (Makefile, LATER_STAGES), and a
# case that needs one runs it again.  scripts/stage.sh holds a lock per
# stage, so this waits while the stage builds, then finds it built; run
# alone, it builds it.  Its prerequisites are taken as built (-o), as make
# test builds them before the VM suite: nothing remakes the image a lab
# runs on.

# stage_made STAGE: make's stage STAGE is built.
stage_made() {
	local start=$SECONDS
	make -C "$SOFTHCA_TOP" --no-print-directory -o deps -o image "$1" || return 1
	echo "# stage $1 ready after $((SECONDS - start)) s"
}
