/*
 * softhca: the engine's thread (spec §12.1)
 *
 * With iothread=ID the engine runs in that IOThread's AioContext instead
 * of QEMU's main loop: every bottom half and timer of the device, the
 * admin queue, the doorbells, the transport and the port's frames.  One
 * thread owns the device's state, so no lock guards it; what must stay
 * on the main loop crosses here:
 *
 *  - a register access, a reset or a link change, which come with the
 *    BQL, runs in the engine's thread while its caller waits
 *    (softhca_engine_call);
 *  - a frame the netdev delivers waits in the inbox, which the engine
 *    empties within its work budget; a full inbox holds the netdev back
 *    (can_receive), so that nothing is dropped;
 *  - a frame the engine sends, and an MSI-X message it raises, wait in
 *    the outbox, which a main-loop bottom half empties with the BQL, as
 *    QEMU's net layer and MSI-X need.  A full outbox makes the scheduler
 *    and the inbox wait for it, so the engine never outruns the netdev.
 *
 * The engine's thread never takes the BQL, so a caller holding it can
 * always wait for it.  It makes no MMIO access either: the device's DMA
 * reaches guest RAM only (softhca-dma.c), which is why its bottom
 * halves and timers need no re-entrancy guard there.  Without an
 * iothread the engine's thread is the main loop and nothing crosses.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "block/aio-wait.h"
#include "qemu/iov.h"
#include "system/runstate.h"
#include "softhca.h"
#include "trace.h"

/* Frames each box holds; a burst of the scheduler fits in the outbox. */
#define SOFTHCA_INBOX_FRAMES    256
#define SOFTHCA_OUTBOX_FRAMES   256
/* Frames the main loop sends per run of its bottom half. */
#define SOFTHCA_OUT_BURST       64

/* DeviceState's guard belongs to the BQL's threads: the iothread has none */
MemReentrancyGuard *softhca_bh_guard(SofthcaState *s)
{
    return s->iothread ? NULL : &DEVICE(s)->mem_reentrancy_guard;
}

void softhca_engine_call(SofthcaState *s, QEMUBHFunc *fn, void *opaque)
{
    if (!s->iothread) {
        fn(opaque);
        return;
    }
    assert(bql_locked());
    aio_wait_bh_oneshot(s->ctx, fn, opaque);
}

/* --- from the engine to the main loop ---------------------------------- */

void softhca_port_out(SofthcaState *s, const struct iovec *iov, int cnt)
{
    SofthcaCrossing *x = &s->x;
    SofthcaFrame *f;
    bool wake;

    if (!s->iothread) {
        qemu_sendv_packet(qemu_get_queue(s->nic), iov, cnt);
        return;
    }
    f = softhca_frame_new(iov, cnt);
    WITH_QEMU_LOCK_GUARD(&x->lock) {
        wake = QSIMPLEQ_EMPTY(&x->outbox) && !x->irqs;
        QSIMPLEQ_INSERT_TAIL(&x->outbox, f, next);
        x->outbox_count++;
    }
    if (wake) {
        qemu_bh_schedule(x->out_bh);
    }
}

void softhca_irq_out(SofthcaState *s, unsigned vector)
{
    SofthcaCrossing *x = &s->x;
    bool wake;

    WITH_QEMU_LOCK_GUARD(&x->lock) {
        wake = QSIMPLEQ_EMPTY(&x->outbox) && !x->irqs;
        x->irqs |= 1ull << vector;
    }
    if (wake) {
        qemu_bh_schedule(x->out_bh);
    }
}

bool softhca_port_busy(SofthcaState *s, uint32_t waiter)
{
    SofthcaCrossing *x = &s->x;

    if (!s->iothread) {
        return false;
    }
    QEMU_LOCK_GUARD(&x->lock);
    if (x->outbox_count < SOFTHCA_OUTBOX_FRAMES) {
        return false;
    }
    x->waiting |= waiter;
    return true;
}

/*
 * The main loop's side, with the BQL: what a reset left to purge, a burst
 * of frames to the netdev, then the MSI-X messages, and the engine's
 * waiters woken once there is room.  Like the engine it waits while the
 * VM is stopped.
 */
static void softhca_out_bh(void *opaque)
{
    SofthcaState *s = opaque;
    SofthcaCrossing *x = &s->x;
    SofthcaFrameList burst = QSIMPLEQ_HEAD_INITIALIZER(burst);
    uint64_t irqs;
    uint32_t waiting = 0;
    bool release, purge, more;
    SofthcaFrame *f;

    if (!runstate_is_running()) {
        return;
    }
    WITH_QEMU_LOCK_GUARD(&x->lock) {
        for (int n = 0; n < SOFTHCA_OUT_BURST &&
                        (f = QSIMPLEQ_FIRST(&x->outbox)); n++) {
            QSIMPLEQ_REMOVE_HEAD(&x->outbox, next);
            QSIMPLEQ_INSERT_TAIL(&burst, f, next);
            x->outbox_count--;
        }
        irqs = x->irqs;
        x->irqs = 0;
        if (x->outbox_count < SOFTHCA_OUTBOX_FRAMES / 2) {
            waiting = x->waiting;
            x->waiting = 0;
        }
        release = x->inbox_held &&
                  x->inbox_count < SOFTHCA_INBOX_FRAMES / 2;
        if (release) {
            x->inbox_held = false;
        }
        purge = x->purge;
        x->purge = false;
        more = !QSIMPLEQ_EMPTY(&x->outbox);
    }
    if (purge) {
        qemu_purge_queued_packets(qemu_get_queue(s->nic));
    }
    while ((f = QSIMPLEQ_FIRST(&burst))) {
        QSIMPLEQ_REMOVE_HEAD(&burst, next);
        qemu_send_packet(qemu_get_queue(s->nic), f->data, f->len);
        g_free(f);
    }
    while (irqs) {
        softhca_irq_now(s, ctz64(irqs));
        irqs &= irqs - 1;
    }
    if (waiting & SOFTHCA_WAIT_SCHED) {
        qemu_bh_schedule(s->sched_bh);
    }
    if (waiting & SOFTHCA_WAIT_INBOX) {
        qemu_bh_schedule(x->in_bh);
    }
    if (release) {
        qemu_flush_queued_packets(qemu_get_queue(s->nic));
    }
    if (more) {
        qemu_bh_schedule(x->out_bh);
    }
}

/* --- from the netdev to the engine ------------------------------------- */

/*
 * The netdev asks before it delivers, and queues a frame that finds no
 * room without calling receive: the flush that lets it go on is owed
 * either way.
 */
bool softhca_inbox_room(SofthcaState *s)
{
    SofthcaCrossing *x = &s->x;

    QEMU_LOCK_GUARD(&x->lock);
    if (x->inbox_count < SOFTHCA_INBOX_FRAMES) {
        return true;
    }
    x->inbox_held = true;
    return false;
}

bool softhca_inbox_push(SofthcaState *s, const uint8_t *frame, size_t len)
{
    SofthcaCrossing *x = &s->x;
    SofthcaFrame *f;
    bool wake;

    WITH_QEMU_LOCK_GUARD(&x->lock) {
        if (x->inbox_count >= SOFTHCA_INBOX_FRAMES) {
            /* the netdev queues it, and waits for the flush */
            x->inbox_held = true;
            return false;
        }
        wake = QSIMPLEQ_EMPTY(&x->inbox);
        f = softhca_frame_new(&(struct iovec) {
                                   .iov_base = (void *)frame, .iov_len = len,
                               }, 1);
        QSIMPLEQ_INSERT_TAIL(&x->inbox, f, next);
        x->inbox_count++;
    }
    if (wake) {
        qemu_bh_schedule(x->in_bh);
    }
    return true;
}

static SofthcaFrame *softhca_inbox_pop(SofthcaCrossing *x, bool *held)
{
    SofthcaFrame *f;

    QEMU_LOCK_GUARD(&x->lock);
    f = QSIMPLEQ_FIRST(&x->inbox);
    if (f) {
        QSIMPLEQ_REMOVE_HEAD(&x->inbox, next);
        x->inbox_count--;
    }
    *held = x->inbox_held;
    return f;
}

/*
 * The engine's side: frames to the port within the work budget, as long
 * as the outbox has room for what they make the engine send; a full
 * outbox wakes this again when it has.
 */
static void softhca_in_bh(void *opaque)
{
    SofthcaState *s = opaque;
    SofthcaCrossing *x = &s->x;
    SofthcaFrame *f;
    bool held = false;

    if (!softhca_work_begin_bh(s)) {
        return;
    }
    while (!softhca_port_busy(s, SOFTHCA_WAIT_INBOX)) {
        if (!softhca_work_fits(s, SOFTHCA_WORK_FRAME(SHCA_NIC_FRAME_MAX))) {
            softhca_work_wake(s, x->in_bh);
            break;
        }
        f = softhca_inbox_pop(x, &held);
        if (!f) {
            break;
        }
        softhca_work_spend(s, SOFTHCA_WORK_FRAME(f->len));
        x->sink(s, f->data, f->len);
        g_free(f);
    }
    if (held) {
        /* the main loop lets the netdev go on once there is room */
        qemu_bh_schedule(x->out_bh);
    }
    softhca_work_end(s);
}

/*
 * A reset: the frames in the inbox and the outbox go, and so do those the
 * port handed the netdev that have not left yet, which the main loop
 * purges for an iothread: the net layer's queues are the BQL's.
 */
void softhca_crossing_reset(SofthcaState *s)
{
    SofthcaCrossing *x = &s->x;
    SofthcaFrame *f;

    if (!s->iothread) {
        qemu_purge_queued_packets(qemu_get_queue(s->nic));
        return;
    }
    QEMU_LOCK_GUARD(&x->lock);
    while ((f = QSIMPLEQ_FIRST(&x->inbox))) {
        QSIMPLEQ_REMOVE_HEAD(&x->inbox, next);
        g_free(f);
    }
    while ((f = QSIMPLEQ_FIRST(&x->outbox))) {
        QSIMPLEQ_REMOVE_HEAD(&x->outbox, next);
        g_free(f);
    }
    x->inbox_count = 0;
    x->outbox_count = 0;
    x->irqs = 0;
    x->purge = true;
    qemu_bh_schedule(x->out_bh);
}

void softhca_iothread_init(SofthcaState *s, SofthcaPortInput *sink)
{
    SofthcaCrossing *x = &s->x;

    x->sink = sink;
    s->ctx = s->iothread ? iothread_get_aio_context(s->iothread)
                         : qemu_get_aio_context();
    qemu_mutex_init(&x->lock);
    QSIMPLEQ_INIT(&x->inbox);
    QSIMPLEQ_INIT(&x->outbox);
    x->in_bh = softhca_bh_new(s, softhca_in_bh);
    x->out_bh = qemu_bh_new_guarded(softhca_out_bh, s,
                                    &DEVICE(s)->mem_reentrancy_guard);
}

/* In the engine's thread, which then never runs the inbox's bottom half. */
void softhca_iothread_stop(SofthcaState *s)
{
    qemu_bh_delete(s->x.in_bh);
    s->x.in_bh = NULL;
}

/* In the main loop, once the engine has stopped. */
void softhca_iothread_exit(SofthcaState *s)
{
    softhca_crossing_reset(s);
    qemu_bh_delete(s->x.out_bh);
    s->x.out_bh = NULL;
    qemu_mutex_destroy(&s->x.lock);
}
