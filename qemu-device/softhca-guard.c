/*
 * softhca: timers under the device's re-entrancy guard
 *
 * MMIO, the NIC receive path and the device's bottom halves run under
 * DeviceState's MemReentrancyGuard: a DMA or MSI-X write they make to the
 * device's own BARs is refused as re-entrant.  QEMU's timers have no such
 * guard, so a guest that aims an MSI-X entry at CTRL could have a timer's
 * interrupt disable the device under the running timer (issue 11).  The
 * device's timers take the guard the same way, and the work budget
 * (softhca-work.c) as every callback of the device does.  An iothread's
 * timers have no guard: the engine's thread makes no MMIO access
 * (softhca-iothread.c).
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "softhca.h"

typedef struct SofthcaGuardedTimer {
    QEMUTimer timer;            /* first: timer_free() frees the whole */
    SofthcaState *s;
    MemReentrancyGuard *guard;
    QEMUTimerCB *cb;
    void *opaque;
} SofthcaGuardedTimer;

static void softhca_timer_guarded(void *opaque)
{
    SofthcaGuardedTimer *gt = opaque;
    bool outer = gt->guard && !gt->guard->engaged_in_io;

    if (outer) {
        gt->guard->engaged_in_io = true;
    }
    softhca_work_begin(gt->s);
    gt->cb(gt->opaque);
    softhca_work_end(gt->s);
    if (outer) {
        gt->guard->engaged_in_io = false;
    }
}

QEMUTimer *softhca_timer_new(SofthcaState *s, QEMUTimerCB *cb, void *opaque)
{
    SofthcaGuardedTimer *gt = g_new0(SofthcaGuardedTimer, 1);

    gt->s = s;
    gt->guard = softhca_bh_guard(s);
    gt->cb = cb;
    gt->opaque = opaque;
    if (s->iothread) {
        aio_timer_init(s->ctx, &gt->timer, QEMU_CLOCK_VIRTUAL, SCALE_NS,
                       softhca_timer_guarded, gt);
    } else {
        /* the main loop's own timers, which qtest's clock steps run */
        timer_init_ns(&gt->timer, QEMU_CLOCK_VIRTUAL, softhca_timer_guarded,
                      gt);
    }
    return &gt->timer;
}
