#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/guest/pyverbs-run on a fake suite laid out as rdma-core's (a
# `tests` package, run_tests.py --list-tests, args_parser): every test
# gets one line, a hung test is killed, a test whose process dies is run
# again alone, and the tests after either still run, in one process.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
suite=$(mktemp -d)
trap 'rm -rf "$suite"' EXIT

cat > "$suite/args_parser.py" <<'EOF'
import argparse
parser = argparse.ArgumentParser()
parser.add_argument('--dev')
EOF
cat > "$suite/run_tests.py" <<'EOF'
print('\n'.join('tests.' + t for t in (
    'test_a.A.test_1pass', 'test_a.A.test_2skip', 'test_a.A.test_3fail',
    *(f'test_q.Q.test_{i:02}' for i in range(40)),
    'test_b.B.test_1hang', 'test_b.B.test_2after',
    'test_c.C.test_1crash_always', 'test_c.C.test_2crash_among_others',
    'test_c.C.test_3error', 'test_d.D.test_never_started')))
EOF
: > "$suite/__init__.py"
cat > "$suite/test_a.py" <<'EOF'
import os, unittest
class A(unittest.TestCase):
    def test_1pass(self): open(os.environ['PIDS'], 'a').write(f'{os.getpid()}\n')
    def test_2skip(self): self.skipTest('no such device')
    def test_3fail(self): self.fail('wrong value')
EOF
# 40 quick tests in a row, then a hung one: their lines reach the runner
# in bursts, and none may wait unseen in a buffer (regression: the last
# quick tests were reported hung, their lines read but not seen)
cat > "$suite/test_q.py" <<'EOF'
import unittest
class Q(unittest.TestCase):
    pass
for i in range(40):
    setattr(Q, f'test_{i:02}', lambda self: None)
EOF
cat > "$suite/test_b.py" <<'EOF'
import os, time, unittest
class B(unittest.TestCase):
    def test_1hang(self):
        open(os.environ['PIDS'], 'a').write(f'{os.getpid()}\n')
        time.sleep(60)
    def test_2after(self): open(os.environ['PIDS'], 'a').write(f'{os.getpid()}\n')
EOF
cat > "$suite/test_c.py" <<'EOF'
import os, unittest
class C(unittest.TestCase):
    def test_1crash_always(self): os._exit(3)
    def test_2crash_among_others(self):
        mark = os.environ['PIDS'] + '.crashed'
        if not os.path.exists(mark):
            open(mark, 'w').close()
            os.kill(os.getpid(), 11)
    def test_3error(self): raise OSError('no memory')
EOF
cat > "$suite/test_d.py" <<'EOF'
import unittest
class D(unittest.TestCase):
    @classmethod
    def setUpClass(cls): raise RuntimeError('no context')
    def test_never_started(self): pass
EOF

export PIDS=$suite/pids
got=$(cd / && PYVERBS_TESTS=$suite timeout 120 python3 "$here/../guest/pyverbs-run" dev0 2)
rc=$?
sed "s/^/    /" <<< "$got"	# the runner's lines, not this suite's
expect() {	# status test-id [reason-pattern]
	grep -Eq "^$1 tests\.$2( .*)?\$" <<< "$got" && grep -Eq "^$1 tests\.$2 ?${3:-}" <<< "$got" ||
		{ echo "FAIL unit/pyverbs-run: no '$1 $2 ${3:-}'"; ok=1; }
}
ok=0
[ "$rc" = 0 ] || { echo "FAIL unit/pyverbs-run: exit $rc"; ok=1; }
expect PASS test_a.A.test_1pass
expect SKIP test_a.A.test_2skip 'no such device'
expect FAIL test_a.A.test_3fail 'wrong value'
for i in $(seq -w 0 39); do expect PASS "test_q.Q.test_$i"; done
expect HANG test_b.B.test_1hang 'not done within 2 s'
expect PASS test_b.B.test_2after
expect ERROR test_c.C.test_1crash_always 'its process exited 3, alone too'
expect PASS test_c.C.test_2crash_among_others '\(alone; among other tests its process exited -11\)'
expect ERROR test_c.C.test_3error 'no memory'
expect ERROR test_d.D.test_never_started 'no result'
[ "$(grep -c . <<< "$got")" = 50 ] || { echo "FAIL unit/pyverbs-run: not 50 lines"; ok=1; }
grep -qx 'pyverbs dev0: 43 pass, 1 fail, 3 error, 1 hang, 1 skip, 0 xfail of 49' <<< "$got" ||
	{ echo "FAIL unit/pyverbs-run: tally"; ok=1; }
# test_a's first test and test_b's hanging one shared a process (with
# test_q's); test_b's second ran in the next
[ "$(sort -u "$PIDS" | wc -l)" = 2 ] || { echo "FAIL unit/pyverbs-run: $(sort -u "$PIDS" | wc -l) processes"; ok=1; }
[ "$ok" = 0 ] && echo "PASS unit/pyverbs-run"
