/*
 * How often qga polls a command running in a guest.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef QGA_POLL_H
#define QGA_POLL_H

/*
 * The wait before the next guest-exec-status, after waiting DELAY last,
 * ELAPSED seconds into the command.  Most commands end within a second:
 * up to then, 20 ms doubling to 0.1 s, since a slower poll would add its
 * interval to each of the thousands a test run makes.  Then a tenth of
 * the time the command has run, up to a second: under TCG each poll wakes
 * the guest, about 8 ms of its CPU (a new connection, a sync and the
 * status), so a long command polled every 0.1 s cost its guest 7 % of a
 * CPU, and is now seen done at most 10 % late.
 */
static inline double qga_poll_delay(double delay, double elapsed)
{
    double quick = delay * 2, slow = elapsed / 10;

    quick = quick < 0.02 ? 0.02 : quick > 0.1 ? 0.1 : quick;
    return slow < quick ? quick : slow > 1.0 ? 1.0 : slow;
}

#endif
