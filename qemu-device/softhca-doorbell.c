/*
 * softhca: the doorbell pages (spec §8, §14), written without the BQL
 * where QEMU allows it.
 *
 * A doorbell's work (reading WQEs, sending frames, completing) needs the
 * device's state, which the engine's thread owns: the main loop, under
 * the BQL, or an iothread (softhca-iothread.c).  So a write that comes
 * without the BQL (a KVM vCPU; TCG always holds it), or for an iothread,
 * only queues itself on its page's lock-free queue (softhca-dbq.h), marks
 * the page and schedules the bottom half, which rings the queued
 * doorbells in order.  A full queue makes its writer take the BQL and
 * catch up, in the engine's thread.  A write that holds the BQL of a
 * main-loop engine rings at once, after what its page queued before.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/bitops.h"
#include "qemu/main-loop.h"
#include "softhca.h"
#include "softhca-compat.h"
#include "softhca-rdma.h"
#include "trace.h"

/*
 * A doorbell write as the queue holds it: the value in bits 0-31, the
 * doorbell (its offset / 4) in 32-33, and for a CQ doorbell the CQ's CQE
 * count as the write found it, in 34-63 (softhca_cq_doorbell).
 */
static uint64_t softhca_db_pack(SofthcaState *s, uint32_t offset,
                                uint32_t val)
{
    uint32_t cqn = val & SHCA_DB_QN_MASK, pi = 0;

    if (offset == SHCA_DB_CQ && cqn < SOFTHCA_MAX_CQ) {
        pi = qatomic_read(&s->cqs[cqn].pi) & SOFTHCA_CQ_PI_SNAP_MASK;
    }
    return (uint64_t)pi << 34 | (uint64_t)(offset >> 2) << 32 | val;
}

/* Ring one doorbell of a page, in the engine's thread. */
static void softhca_db_ring(SofthcaState *s, uint32_t page, uint64_t w)
{
    uint32_t offset = (w >> 32 & 3) << 2, val = w;

    if (page && !test_bit(page, s->uctx_map)) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "softhca: doorbell write to unallocated page %u\n",
                      page);
        return;
    }
    /* Without CAPS.QP (version 0.1) the pages hold no doorbell. */
    if (!s->caps_qp || !softhca_ready(s)) {
        return;
    }
    switch (offset) {
    case SHCA_DB_SQ:
    case SHCA_DB_RQ:
        softhca_qp_doorbell(s, page, offset == SHCA_DB_SQ, val);
        break;
    case SHCA_DB_CQ:
        softhca_cq_doorbell(s, page, val, w >> 34);
        break;
    case SHCA_DB_SRQ:
        softhca_srq_doorbell(s, page, val);
        break;
    default:
        g_assert_not_reached();     /* softhca_db_write takes no other */
    }
}

/* Ring what a page queued, SOFTHCA_DBQ_SIZE writes at most. */
static bool softhca_db_drain_page(SofthcaState *s, uint32_t page)
{
    uint64_t w;

    for (unsigned n = 0; n < SOFTHCA_DBQ_SIZE; n++) {
        if (!softhca_dbq_pop(&s->dbq[page], &w)) {
            return true;
        }
        softhca_db_ring(s, page, w);
    }
    return false;
}

/*
 * Ring every queued doorbell, in the engine's thread.  The work is bounded
 * by the queues' size: a page whose writers keep its queue busy waits for
 * the next run of the bottom half.
 */
void softhca_db_drain(SofthcaState *s)
{
    unsigned words = BITS_TO_LONGS(s->db_pages);

    for (unsigned i = 0; i < words; i++) {
        unsigned long pending = qatomic_xchg(&s->db_pending[i], 0);

        while (pending) {
            uint32_t page = i * BITS_PER_LONG + ctzl(pending);

            pending &= pending - 1;
            if (!softhca_db_drain_page(s, page)) {
                set_bit_atomic(page, s->db_pending);
                qemu_bh_schedule(s->db_bh);
            }
        }
    }
}

/* A doorbell rung at once, in the engine's thread (softhca_engine_call). */
typedef struct SofthcaDbRing {
    SofthcaState *s;
    uint32_t page;
    uint64_t w;
} SofthcaDbRing;

static void softhca_db_ring_engine(void *opaque)
{
    SofthcaDbRing *r = opaque;

    softhca_work_begin(r->s);
    softhca_db_drain_page(r->s, r->page);
    softhca_db_ring(r->s, r->page, r->w);
    softhca_work_end(r->s);
}

static void softhca_db_bh(void *opaque)
{
    SofthcaState *s = opaque;

    if (softhca_work_begin_bh(s)) {
        softhca_db_drain(s);
        softhca_work_end(s);
    }
}

/* Doorbell pages are write-only (spec §8, §14). */
static uint64_t softhca_db_read(void *opaque, hwaddr addr, unsigned size)
{
    return 0;
}

static void softhca_db_write(void *opaque, hwaddr addr, uint64_t data,
                             unsigned size)
{
    SofthcaState *s = opaque;
    MemReentrancyGuard *guard = &DEVICE(s)->mem_reentrancy_guard;
    bool own_guard = s->db.disable_reentrancy_guard;
    uint32_t page = addr >> SHCA_DB_PAGE_SHIFT;
    uint32_t offset = addr & (SHCA_DB_PAGE_SIZE - 1);
    SofthcaDbRing ring = { .s = s, .page = page };
    bool locked;

    trace_softhca_db_write(page, offset, data);
    if (offset != SHCA_DB_SQ && offset != SHCA_DB_RQ &&
        offset != SHCA_DB_CQ && offset != SHCA_DB_SRQ) {
        qemu_log_mask(LOG_GUEST_ERROR, "softhca: write to page %u offset "
                      "0x%x: no doorbell there\n", page, offset);
        trace_softhca_err_doorbell(page, offset, data);
        return;
    }
    ring.w = softhca_db_pack(s, offset, data);
    if ((!bql_locked() || s->db_handoff || s->iothread) &&
        softhca_dbq_push(&s->dbq[page], ring.w)) {
        set_bit_atomic(page, s->db_pending);
        qemu_bh_schedule(s->db_bh);
        return;
    }
    /*
     * With the BQL, or with a full queue.  QEMU keeps no re-entrancy
     * guard for a lockless region: keep the device's here, as QEMU does
     * for its other regions, against DMA that targets this BAR.  An
     * iothread makes no MMIO access (softhca-iothread.c).
     */
    locked = bql_locked();
    if (!locked) {
        bql_lock();
    }
    if (s->iothread) {
        softhca_engine_call(s, softhca_db_ring_engine, &ring);
    } else if (own_guard && guard->engaged_in_io) {
        qemu_log_mask(LOG_GUEST_ERROR, "softhca: re-entrant doorbell write "
                      "to page %u blocked\n", page);
    } else {
        if (own_guard) {
            guard->engaged_in_io = true;
        }
        softhca_db_ring_engine(&ring);
        if (own_guard) {
            guard->engaged_in_io = false;
        }
    }
    if (!locked) {
        bql_unlock();
    }
}

static const MemoryRegionOps softhca_db_ops = {
    .read = softhca_db_read,
    .write = softhca_db_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};

void softhca_db_init(SofthcaState *s)
{
    memory_region_init_io(&s->db, OBJECT(s), &softhca_db_ops, s,
                          "softhca-doorbells",
                          (uint64_t)s->db_pages << SHCA_DB_PAGE_SHIFT);
    softhca_enable_lockless_io(&s->db);
    s->dbq = g_new(SofthcaDbq, s->db_pages);
    for (uint32_t i = 0; i < s->db_pages; i++) {
        softhca_dbq_init(&s->dbq[i]);
    }
    s->db_pending = bitmap_new(s->db_pages);
    s->db_bh = softhca_bh_new(s, softhca_db_bh);
}

void softhca_db_exit(SofthcaState *s)
{
    qemu_bh_delete(s->db_bh);
    s->db_bh = NULL;
    g_free(s->dbq);
    g_free(s->db_pending);
}

/*
 * Reset: what the pages queued is dropped.  A vCPU may still queue a
 * write as this runs; the bottom half then finds the device not ready.
 */
void softhca_db_reset(SofthcaState *s)
{
    uint64_t w;

    for (uint32_t i = 0; i < s->db_pages; i++) {
        while (softhca_dbq_pop(&s->dbq[i], &w)) {
            /* dropped */
        }
    }
    bitmap_zero(s->db_pending, s->db_pages);
}
