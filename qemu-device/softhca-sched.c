/*
 * softhca: the engine's scheduler (spec §19.3).  What a callback's work
 * budget left undone goes on from here: one bottom half runs the QPs that
 * have work in turn, each for at most SOFTHCA_SCHED_QUANTUM packets, and
 * sends the burst one budget allows per wakeup.  A QP with more to do
 * goes to the back of the queue, so that one QP's long message never
 * starves the others.  Like every bottom half of the device it does
 * nothing while the VM is stopped; the queue waits for it.  It also waits
 * while the loopback queue is past its high mark (spec §7.1), and in an
 * iothread while the frames it sent have not left (spec §12.1).
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "softhca-rdma.h"
#include "softhca-tp.h"
#include "trace.h"

void softhca_sched_qp(SofthcaState *s, SofthcaQp *qp, unsigned work)
{
    SofthcaQpTransport *tp = &qp->tp;
    /* a queue with QPs in it has its run coming, or is in it */
    bool wake = QTAILQ_EMPTY(&s->sched_qps) && !s->sched_running;

    if (!tp->sched) {
        QTAILQ_INSERT_TAIL(&s->sched_qps, qp, tp.sched_next);
    }
    tp->sched |= work;
    if (wake) {
        softhca_work_wake(s, s->sched_bh);
    }
}

void softhca_sched_cancel(SofthcaState *s, SofthcaQp *qp, unsigned work)
{
    SofthcaQpTransport *tp = &qp->tp;

    if (!tp->sched) {
        return;
    }
    tp->sched &= ~work;
    if (!tp->sched) {
        QTAILQ_REMOVE(&s->sched_qps, qp, tp.sched_next);
    }
}

bool softhca_sched_idle(const SofthcaState *s)
{
    return QTAILQ_EMPTY(&s->sched_qps);
}

bool softhca_sched_pending(const SofthcaQp *qp, unsigned work)
{
    return qp->tp.sched & work;
}

static void softhca_sched_bh(void *opaque)
{
    SofthcaState *s = opaque;
    bool waits = false;
    SofthcaQp *qp;

    /* stopped, the queue waits for the VM, which wakes this again */
    if (!softhca_work_begin_bh(s)) {
        return;
    }
    s->sched_running = true;
    while ((qp = QTAILQ_FIRST(&s->sched_qps))) {
        uint32_t used = s->work_used;
        unsigned work = qp->tp.sched;

        /* the outbox or the loopback full: they wake this again */
        if (softhca_port_busy(s, SOFTHCA_WAIT_SCHED) ||
            softhca_loopback_busy(s)) {
            waits = true;
            break;
        }

        softhca_sched_cancel(s, qp, work);
        trace_softhca_sched_run(qp->qpn, work);
        if (work & SOFTHCA_SCHED_RESP) {
            softhca_resp_run(s, qp, SOFTHCA_SCHED_QUANTUM);
        }
        if (work & SOFTHCA_SCHED_REQ) {
            softhca_req_run_quantum(s, qp, SOFTHCA_SCHED_QUANTUM);
        }
        /* queued again with nothing done: the budget is spent */
        if (s->work_used == used && qp->tp.sched) {
            break;
        }
    }
    s->sched_running = false;
    if (!waits && !QTAILQ_EMPTY(&s->sched_qps)) {
        softhca_work_wake(s, s->sched_bh);
    }
    softhca_work_end(s);
}

void softhca_sched_init(SofthcaState *s)
{
    QTAILQ_INIT(&s->sched_qps);
    s->sched_bh = softhca_bh_new(s, softhca_sched_bh);
}

void softhca_sched_exit(SofthcaState *s)
{
    qemu_bh_delete(s->sched_bh);
    s->sched_bh = NULL;
}
