/*
 * softhca: the port's loopback (spec §7.1) -- frames for the port's own
 * MAC, and copies of multicast datagrams for its own groups, go back to
 * the receive side through a queue that a bottom half empties, so that a
 * frame's receiver never runs inside its sender.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "net/eth.h"
#include "softhca-rdma.h"
#include "softhca-wire.h"
#include "trace.h"

/*
 * Frames the queue holds; at the high mark the requesters wait, and at the
 * low mark they go on (spec §7.1).  What does not wait (datagrams,
 * responses, ACKs, the NIC's frames) has the rest.
 */
#define SOFTHCA_LOOPBACK_FRAMES 512
#define SOFTHCA_LOOPBACK_HIGH   (SOFTHCA_LOOPBACK_FRAMES / 2)
#define SOFTHCA_LOOPBACK_LOW    (SOFTHCA_LOOPBACK_FRAMES / 4)

static void softhca_loopback_queue(SofthcaState *s, const uint8_t *frame,
                                   size_t len)
{
    SofthcaLoopback *lb = &s->loopback;
    /* frames in the queue have their run coming, or are in it */
    bool wake = QSIMPLEQ_EMPTY(&lb->frames) && !lb->running;
    SofthcaFrame *f;

    if (lb->count >= SOFTHCA_LOOPBACK_FRAMES) {
        s->rdma_stats[SHCA_STAT_LOOPBACK_DROPPED]++;
        trace_softhca_loopback_drop(len);
        return;
    }
    f = softhca_frame_new(&(struct iovec) {
                              .iov_base = (void *)frame, .iov_len = len,
                          }, 1);
    QSIMPLEQ_INSERT_TAIL(&lb->frames, f, next);
    lb->count++;
    trace_softhca_loopback(len, lb->count);
    if (wake) {
        softhca_work_wake(s, lb->bh);
    }
}

/* A RoCEv2 datagram to a multicast GID that has a group on this port. */
static bool softhca_loopback_mcast(SofthcaState *s, const uint8_t *frame,
                                   size_t len)
{
    uint32_t qpns[SOFTHCA_MAX_MCAST_QP_ATTACH];
    SofthcaUdpFrame u;

    return softhca_parse_udp(frame, len, &u) &&
           u.dst_port == SOFTHCA_ROCE_UDP_PORT &&
           softhca_gid_is_mcast(u.dst_gid) &&
           softhca_mcast_qps(s, u.dst_gid, qpns);
}

bool softhca_loopback_tx(SofthcaState *s, const uint8_t *frame, size_t len,
                         bool transport)
{
    if (len < ETH_ALEN) {
        return false;
    }
    if (!memcmp(frame, s->mac, ETH_ALEN)) {
        softhca_loopback_queue(s, frame, len);
        return true;
    }
    if (transport && (frame[0] & 1) && softhca_loopback_mcast(s, frame, len)) {
        softhca_loopback_queue(s, frame, len);
    }
    return false;
}

/*
 * What the work budget allows per run: what the frames delivered send back
 * to this port joins the tail and waits for the next run.
 */
static void softhca_loopback_bh(void *opaque)
{
    SofthcaState *s = opaque;
    SofthcaLoopback *lb = &s->loopback;
    SofthcaFrame *f;

    if (!softhca_work_begin_bh(s)) {
        return;
    }
    lb->running = true;
    while ((f = QSIMPLEQ_FIRST(&lb->frames)) &&
           softhca_work_spend(s, SOFTHCA_WORK_FRAME(f->len))) {
        QSIMPLEQ_REMOVE_HEAD(&lb->frames, next);
        lb->count--;
        lb->sink(s, f->data, f->len);
        g_free(f);
    }
    lb->running = false;
    if (!QSIMPLEQ_EMPTY(&lb->frames)) {
        softhca_work_wake(s, lb->bh);
    }
    if (lb->sched_waits && lb->count <= SOFTHCA_LOOPBACK_LOW) {
        lb->sched_waits = false;
        softhca_work_wake(s, s->sched_bh);
    }
    softhca_work_end(s);
}

bool softhca_loopback_busy(SofthcaState *s)
{
    SofthcaLoopback *lb = &s->loopback;

    if (lb->count < SOFTHCA_LOOPBACK_HIGH) {
        return false;
    }
    lb->sched_waits = true;
    return true;
}

void softhca_loopback_init(SofthcaState *s, SofthcaPortInput *sink)
{
    QSIMPLEQ_INIT(&s->loopback.frames);
    s->loopback.sink = sink;
    s->loopback.bh = softhca_bh_new(s, softhca_loopback_bh);
}

void softhca_loopback_reset(SofthcaState *s)
{
    SofthcaLoopback *lb = &s->loopback;
    SofthcaFrame *f;

    qemu_bh_cancel(lb->bh);
    while ((f = QSIMPLEQ_FIRST(&lb->frames))) {
        QSIMPLEQ_REMOVE_HEAD(&lb->frames, next);
        g_free(f);
    }
    lb->count = 0;
    lb->sched_waits = false;
}

void softhca_loopback_exit(SofthcaState *s)
{
    softhca_loopback_reset(s);
    qemu_bh_delete(s->loopback.bh);
    s->loopback.bh = NULL;
}
