#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# make test's stages beside its suites: tests/run --beside runs the
# command at idle priority while a suite runs, prints its stage lines and
# fails the run when it fails; scripts/stage.sh runs one stage at a time,
# so a VM case that needs a stage (tests/vm/stages.sh) waits for it.  On
# a copy of tests/run beside a fake suite; no build, no VM.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export SOFTHCA_CACHE=$tmp/cache
fail=0
result() {	# name ok why
	if [ "$2" = 0 ]; then
		echo "PASS unit/beside/$1"
	else
		echo "FAIL unit/beside/$1: $3"
		fail=1
	fi
}

mkdir -p "$tmp/tree/tests/fake"
cp -a "$top/scripts" "$tmp/tree/"
cp "$top/tests/run" "$tmp/tree/tests/"
# the fake suite: a case, and the moment it ends
cat > "$tmp/tree/tests/fake/run" <<'SUITE'
#!/usr/bin/env bash
sleep 1
echo "PASS fake/case"
date +%s.%N > "$SOFTHCA_CACHE/suite.end"
SUITE
chmod +x "$tmp/tree/tests/fake/run"
run=$tmp/tree/tests/run

# a stage beside the suite: idle priority, its line after the suite's,
# and a passing run
"$run" --beside 'chrt -p $$ > "$SOFTHCA_CACHE/policy"
	scripts/stage.sh beside-stage "a stage beside" true' fake > "$tmp/out" 2>&1
rc=$?
grep -q 'SCHED_IDLE' "$tmp/cache/policy" 2>/dev/null
result idle-priority $? "policy: $(cat "$tmp/cache/policy" 2>/dev/null)"
grep -A20 '^softhca: suite fake' "$tmp/out" | grep -q '^softhca: a stage beside \.\.\. [0-9]* s$'
result stage-line $? "$(cat "$tmp/out")"
[ $rc = 0 ] && tail -n1 "$tmp/out" | grep -qx '2 passed, 0 failed, 0 skipped'
result passes $? "exit $rc, $(tail -n1 "$tmp/out")"

# a command that fails fails the run, and says where its log is
"$run" --beside 'scripts/stage.sh broken "a broken stage" false' fake > "$tmp/out" 2>&1
rc=$?
[ $rc != 0 ] && grep -q '^FAIL build/beside: .*beside.log' "$tmp/out" &&
	grep -q '^softhca: a broken stage \.\.\. FAILED' "$tmp/out" &&
	tail -n1 "$tmp/out" | grep -qx '1 passed, 1 failed, 0 skipped'
result failure-fails $? "exit $rc, $(cat "$tmp/out")"

# the same stage twice: the second waits for the first, then runs
(cd "$tmp/tree" && scripts/stage.sh twice "first" sh -c \
	'sleep 2; date +%s.%N > "$SOFTHCA_CACHE/first.end"') > /dev/null &
first=$!
sleep 0.5
(cd "$tmp/tree" && scripts/stage.sh twice "second" sh -c \
	'date +%s.%N > "$SOFTHCA_CACHE/second.start"') > /dev/null
wait "$first"
python3 -c 'import sys; a, b = (float(open(f).read()) for f in sys.argv[1:]); sys.exit(not b >= a)' \
	"$tmp/cache/first.end" "$tmp/cache/second.start"
result stage-waits $? "the second run started before the first ended"

# another stage does not wait
(cd "$tmp/tree" && scripts/stage.sh slow "slow" sleep 3) > /dev/null &
first=$!
sleep 0.5
start=$SECONDS
(cd "$tmp/tree" && scripts/stage.sh other "other" true) > /dev/null
[ $((SECONDS - start)) -lt 2 ]
result other-stage-runs $? "another stage waited $((SECONDS - start)) s"
wait "$first"
exit "$fail"
