/*
 * softhca: the work budget (spec §19.3).  Each callback a guest or a peer
 * can trigger (a register or doorbell write, a received frame, a bottom
 * half, a timer) may spend SOFTHCA_WORK_BUDGET units of work; what does
 * not fit goes on from a bottom half, so that no callback holds the vCPU
 * or the main loop for long.  A unit is about 10 ns of this host's time;
 * what each step costs is in softhca.h, calibrated in the spec.
 * And nothing runs while the VM is stopped: a stopped VM costs its host
 * no CPU (issue 25, defect 3), and its device state stands still.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/coroutine.h"
#include "system/runstate.h"
#include "softhca-rdma.h"
#include "trace.h"

void softhca_work_begin(SofthcaState *s)
{
    if (!s->work_depth++) {
        s->work_used = 0;
    }
}

void softhca_work_end(SofthcaState *s)
{
    assert(s->work_depth);
    if (--s->work_depth) {
        return;
    }
    if (s->work_used > s->work_max) {
        s->work_max = s->work_used;
        trace_softhca_work_max(s->work_max);
    }
}

/*
 * The first step of a callback always fits, so that work goes on however
 * costly a step is; every step costs less than the budget.
 */
bool softhca_work_fits(const SofthcaState *s, uint32_t units)
{
    return !s->work_used || s->work_used + units <= SOFTHCA_WORK_BUDGET;
}

bool softhca_work_spend(SofthcaState *s, uint32_t units)
{
    if (!softhca_work_fits(s, units)) {
        return false;
    }
    s->work_used += units;
    return true;
}

/*
 * In the admin coroutine (softhca-admin.c): a long command waits here for
 * the budget of later callbacks, from the admin bottom half.
 */
bool coroutine_fn softhca_work_step(SofthcaState *s, uint32_t units)
{
    while (!s->admin_abort && !softhca_work_spend(s, units)) {
        qemu_coroutine_yield();
    }
    return !s->admin_abort;
}

bool coroutine_fn softhca_work_wait(SofthcaState *s)
{
    if (!s->admin_abort) {
        qemu_coroutine_yield();
    }
    return !s->admin_abort;
}

bool softhca_work_begin_bh(SofthcaState *s)
{
    if (!runstate_is_running()) {
        return false;
    }
    softhca_work_begin(s);
    return true;
}

void softhca_work_wake(SofthcaState *s, QEMUBH *bh)
{
    s->wakeups++;
    qemu_bh_schedule(bh);
}

/*
 * The VM runs again: each bottom half that found it stopped, or that
 * would have run meanwhile, gets its turn; one with nothing to do
 * returns at once.  Timers wait on the VM's clock, which stood still.
 */
static void softhca_work_resume(SofthcaState *s)
{
    qemu_bh_schedule(s->admin_bh);
    qemu_bh_schedule(s->db_bh);
    qemu_bh_schedule(s->loopback.bh);
    qemu_bh_schedule(s->nic_tx_bh);
    qemu_bh_schedule(s->cq_error_bh);
    qemu_bh_schedule(s->sched_bh);
    qemu_bh_schedule(s->x.in_bh);
    qemu_bh_schedule(s->x.out_bh);
}

static void softhca_work_quiesced(void *opaque)
{
}

static void softhca_work_vm_state(void *opaque, bool running, RunState state)
{
    SofthcaState *s = opaque;

    if (running) {
        softhca_work_resume(s);
    } else {
        /* an iothread's engine finishes its callback, and stops */
        softhca_engine_call(s, softhca_work_quiesced, NULL);
    }
}

void softhca_work_init(SofthcaState *s)
{
    s->vm_state = qemu_add_vm_change_state_handler(softhca_work_vm_state, s);
}

void softhca_work_exit(SofthcaState *s)
{
    qemu_del_vm_change_state_handler(s->vm_state);
}
