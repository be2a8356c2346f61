#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tests/qga.py's poll of a running command (poll_delay): short commands
are seen done quickly, long ones are polled seldom.  Each poll wakes the
guest for about 8 ms of its CPU under TCG, and a poll every 0.1 s cost a
guest 7 % of a CPU for as long as a command ran: the packages layout's
400-s DKMS build, pyverbs, every bandwidth test.  The commands here are
simulated: a poll at time t finds a command of D seconds done if t >= D.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import qga  # noqa: E402

failed = 0


def check(name, ok, why):
    global failed
    print(f"PASS unit/qga-poll/{name}" if ok else f"FAIL unit/qga-poll/{name}: {why}")
    failed |= not ok


def simulate(duration):
    """(polls, lag): the polls until the command was seen done, and how
    long after its end that was."""
    t, delay, polls = 0.0, 0, 1
    while t < duration:
        delay = qga.poll_delay(delay, t)
        t += delay
        polls += 1
    return polls, t - duration


for d in (0.01, 0.05, 0.3, 0.9):
    polls, lag = simulate(d)
    check(f"short-command-seen-within-0.1s-{d}", lag <= 0.1 + 1e-9, f"seen {lag:.3f} s late")

for d in (2, 7, 20, 60, 400):
    polls, lag = simulate(d)
    bound = max(0.1, min(1.0, d / 10))
    check(f"long-command-seen-within-a-tenth-{d}s", lag <= bound + 1e-9,
          f"seen {lag:.2f} s late, more than {bound} s")

# every 0.1 s, this was 200 polls
polls, _ = simulate(20)
check("long-command-polls-seldom", polls <= 60, f"{polls} polls for a 20-s command")
polls, _ = simulate(400)
check("dkms-build-polls-once-a-second", polls <= 450, f"{polls} polls for a 400-s command")

sys.exit(failed)
