/*
 * softhca: the queue of one doorbell page's writes, from the vCPUs that
 * ring it without the BQL to the bottom half that takes them under it
 * (spec §14).  Bounded, multi-producer, single-consumer and lock-free: a
 * producer claims a cell by moving the tail, fills it and publishes it
 * with the cell's sequence number; the consumer takes published cells in
 * order.  A full queue refuses the write, and its producer then takes the
 * BQL instead.  Free of QEMU state so that it can be unit-tested on the
 * host (tests/unit).
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_SOFTHCA_DBQ_H
#define HW_SOFTHCA_DBQ_H

#include "qemu/atomic.h"

#define SOFTHCA_DBQ_SIZE        64      /* a power of 2 */

typedef struct SofthcaDbqCell {
    uint32_t seq;       /* pos: free for pos; pos + 1: holds pos's write */
    uint64_t write;
} SofthcaDbqCell;

typedef struct SofthcaDbq {
    uint32_t tail;      /* the producers' next position */
    uint32_t head;      /* the consumer's */
    SofthcaDbqCell cells[SOFTHCA_DBQ_SIZE];
} SofthcaDbq;

static inline void softhca_dbq_init(SofthcaDbq *q)
{
    q->tail = 0;
    q->head = 0;
    for (uint32_t i = 0; i < SOFTHCA_DBQ_SIZE; i++) {
        q->cells[i].seq = i;
    }
}

/*
 * Queue one write; false if the queue is full.  Each pass either claims a
 * cell or sees another producer's claim move the tail, so the loop ends
 * within SOFTHCA_DBQ_SIZE claims.
 */
static inline bool softhca_dbq_push(SofthcaDbq *q, uint64_t write)
{
    uint32_t pos = qatomic_read(&q->tail);

    for (;;) {
        SofthcaDbqCell *c = &q->cells[pos & (SOFTHCA_DBQ_SIZE - 1)];
        int32_t lag = (int32_t)(qatomic_load_acquire(&c->seq) - pos);

        if (lag < 0) {
            return false;       /* the consumer has not taken it yet */
        }
        if (lag == 0) {
            uint32_t seen = qatomic_cmpxchg(&q->tail, pos, pos + 1);

            if (seen == pos) {
                c->write = write;
                qatomic_store_release(&c->seq, pos + 1);
                return true;
            }
            pos = seen;
        } else {
            pos = qatomic_read(&q->tail);
        }
    }
}

/* Take the oldest published write; false if there is none. */
static inline bool softhca_dbq_pop(SofthcaDbq *q, uint64_t *write)
{
    SofthcaDbqCell *c = &q->cells[q->head & (SOFTHCA_DBQ_SIZE - 1)];

    if (qatomic_load_acquire(&c->seq) != q->head + 1) {
        return false;
    }
    *write = c->write;
    qatomic_store_release(&c->seq, q->head + SOFTHCA_DBQ_SIZE);
    q->head++;
    return true;
}

#endif
