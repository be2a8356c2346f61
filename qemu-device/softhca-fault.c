/*
 * softhca: fault injection on the RoCEv2 port (spec §12).  Only the
 * transport's frames pass through here, never the NIC function's.  Each
 * direction draws from its own stream, three draws per frame whatever the
 * probabilities, so that a seed gives the same decisions for the same
 * sequence of frames, and changing one probability leaves the draws of the
 * others alone.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "softhca.h"
#include "softhca-rand.h"
#include "softhca-wire.h"
#include "trace.h"

#define SOFTHCA_FAULT_SEED_DEFAULT  0x736f667468636121ull  /* "softhca!" */
/* A held frame goes out after the next one, or after this long. */
#define SOFTHCA_FAULT_HOLD_NS       (100 * SCALE_US)

static const char *const softhca_fault_dir_name[SOFTHCA_FAULT_DIRS] = {
    [SOFTHCA_FAULT_TX] = "tx",
    [SOFTHCA_FAULT_RX] = "rx",
};

static const char *const softhca_fault_kind_name[SOFTHCA_FAULT_KINDS] = {
    [SOFTHCA_FAULT_DROP] = "drop",
    [SOFTHCA_FAULT_DUP] = "dup",
    [SOFTHCA_FAULT_REORDER] = "reorder",
};

static const unsigned softhca_fault_stat[SOFTHCA_FAULT_KINDS] = {
    [SOFTHCA_FAULT_DROP] = SHCA_STAT_FAULT_DROPPED,
    [SOFTHCA_FAULT_DUP] = SHCA_STAT_FAULT_DUPLICATED,
    [SOFTHCA_FAULT_REORDER] = SHCA_STAT_FAULT_REORDERED,
};

bool softhca_fault_check_props(SofthcaState *s, Error **errp)
{
    for (int d = 0; d < SOFTHCA_FAULT_DIRS; d++) {
        for (int k = 0; k < SOFTHCA_FAULT_KINDS; k++) {
            if (s->fault.path[d].per_mille[k] > SOFTHCA_FAULT_PER_MILLE_MAX) {
                error_setg(errp, "softhca: fault-%s-%s must be 0..%u "
                           "(per mille)", softhca_fault_dir_name[d],
                           softhca_fault_kind_name[k],
                           SOFTHCA_FAULT_PER_MILLE_MAX);
                return false;
            }
        }
    }
    return true;
}

/*
 * Put frame (NULL: none) in the held slot and pass on what it held.  The
 * slot is refilled before that: passing a frame on may bring the next
 * frame of this direction here (a peer answering synchronously), which
 * must find the slot in order.
 */
static void softhca_fault_swap_held(SofthcaFaultPath *p, const uint8_t *frame,
                                    size_t len, const SofthcaUdpFrame *udp,
                                    unsigned copies)
{
    g_autofree uint8_t *held = p->held;
    g_autofree SofthcaUdpFrame *held_udp = p->held_udp;
    size_t held_len = p->held_len;
    unsigned held_copies = p->held_copies;

    p->held = frame ? g_memdup2(frame, len) : NULL;
    p->held_udp = frame && udp ? g_memdup2(udp, sizeof(*udp)) : NULL;
    p->held_len = len;
    p->held_copies = copies;
    if (frame) {
        timer_mod(p->timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                  SOFTHCA_FAULT_HOLD_NS);
    } else {
        timer_del(p->timer);
    }
    if (!held) {
        return;
    }
    trace_softhca_fault(softhca_fault_dir_name[p->dir], "release", held_len);
    while (held_copies--) {
        p->sink(p->s, held, held_len, held_udp);
    }
}

static void softhca_fault_timer_cb(void *opaque)
{
    softhca_fault_swap_held(opaque, NULL, 0, NULL, 0);
}

bool softhca_fault_idle(SofthcaState *s, SofthcaFaultDir dir)
{
    const SofthcaFaultPath *p = &s->fault.path[dir];

    for (int k = 0; k < SOFTHCA_FAULT_KINDS; k++) {
        if (p->per_mille[k]) {
            return false;
        }
    }
    return !p->held;
}

void softhca_fault_pass(SofthcaState *s, SofthcaFaultDir dir,
                        const uint8_t *frame, size_t len,
                        const SofthcaUdpFrame *udp)
{
    SofthcaFaultPath *p = &s->fault.path[dir];
    bool hit[SOFTHCA_FAULT_KINDS], any = false;
    unsigned copies;

    for (int k = 0; k < SOFTHCA_FAULT_KINDS; k++) {
        any |= p->per_mille[k] != 0;
    }
    if (!any) {
        p->sink(s, frame, len, udp);
        return;
    }
    for (int k = 0; k < SOFTHCA_FAULT_KINDS; k++) {
        hit[k] = softhca_rand_per_mille(&p->rng, p->per_mille[k]);
    }
    /* a dropped frame is neither duplicated nor held */
    if (hit[SOFTHCA_FAULT_DROP]) {
        hit[SOFTHCA_FAULT_DUP] = hit[SOFTHCA_FAULT_REORDER] = false;
    }
    for (int k = 0; k < SOFTHCA_FAULT_KINDS; k++) {
        if (hit[k]) {
            s->rdma_stats[softhca_fault_stat[k]]++;
            trace_softhca_fault(softhca_fault_dir_name[dir],
                                softhca_fault_kind_name[k], len);
        }
    }
    if (hit[SOFTHCA_FAULT_DROP]) {
        return;
    }
    copies = hit[SOFTHCA_FAULT_DUP] ? 2 : 1;
    if (hit[SOFTHCA_FAULT_REORDER]) {
        /* a frame held before goes first; this one waits for the next */
        softhca_fault_swap_held(p, frame, len, udp, copies);
        return;
    }
    while (copies--) {
        p->sink(s, frame, len, udp);
    }
    softhca_fault_swap_held(p, NULL, 0, NULL, 0);
}

void softhca_fault_init(SofthcaState *s)
{
    for (int d = 0; d < SOFTHCA_FAULT_DIRS; d++) {
        SofthcaFaultPath *p = &s->fault.path[d];

        p->s = s;
        p->dir = d;
        p->timer = softhca_timer_new(s, softhca_fault_timer_cb, p);
    }
}

void softhca_fault_set_sink(SofthcaState *s, SofthcaFaultDir dir,
                            SofthcaFrameSink *sink)
{
    s->fault.path[dir].sink = sink;
}

void softhca_fault_reset(SofthcaState *s)
{
    uint64_t seed = s->fault.seed ?: SOFTHCA_FAULT_SEED_DEFAULT;

    for (int d = 0; d < SOFTHCA_FAULT_DIRS; d++) {
        SofthcaFaultPath *p = &s->fault.path[d];

        timer_del(p->timer);
        g_free(p->held);
        g_free(p->held_udp);
        p->held = NULL;
        p->held_udp = NULL;
        p->rng = softhca_rand_seed(seed, d);
    }
}

void softhca_fault_exit(SofthcaState *s)
{
    softhca_fault_reset(s);
    for (int d = 0; d < SOFTHCA_FAULT_DIRS; d++) {
        timer_free(s->fault.path[d].timer);
        s->fault.path[d].timer = NULL;
    }
}
