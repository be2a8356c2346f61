/*
 * softhca: completion queues (spec §13.1) and their doorbell (§14)
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/bitops.h"
#include "qemu/cutils.h"
#include "softhca-rdma.h"
#include "trace.h"

SofthcaCq *softhca_cq_get(SofthcaState *s, uint32_t cqn)
{
    if (cqn >= SOFTHCA_MAX_CQ || !s->cqs[cqn].valid) {
        return NULL;
    }
    return &s->cqs[cqn];
}

bool softhca_cq_log_size_ok(uint32_t log_size)
{
    return log_size >= SHCA_RING_LOG_MIN &&
           (1ull << MIN(log_size, 63)) <= SOFTHCA_MAX_CQE;
}

uint8_t softhca_cq_create(SofthcaState *s, const struct shca_aq_create_cq *c,
                          uint32_t *cqn)
{
    uint32_t uctx = le32_to_cpu(c->uctx);
    uint32_t eqn = le32_to_cpu(c->eqn);
    SofthcaCq *cq = NULL;
    uint8_t status;
    uint32_t i;

    if (!softhca_uctx_ok(s, uctx) || eqn >= SOFTHCA_MAX_EQ ||
        !s->eqs[eqn].valid) {
        return SHCA_AQ_BAD_HANDLE;
    }
    if (!softhca_cq_log_size_ok(c->log_size) ||
        !buffer_is_zero(c->rsvd, sizeof(c->rsvd))) {
        return SHCA_AQ_BAD_PARAM;
    }
    for (i = 0; i < SOFTHCA_MAX_CQ; i++) {
        if (!s->cqs[i].valid) {
            cq = &s->cqs[i];
            break;
        }
    }
    if (!cq) {
        return SHCA_AQ_NO_RESOURCES;
    }
    status = softhca_buf_init(s, &cq->buf, &c->buf,
                              ((uint64_t)SHCA_CQE_SIZE << c->log_size) +
                              sizeof(struct shca_cq_record));
    if (status != SHCA_AQ_OK) {
        return status;
    }
    cq->valid = true;
    cq->uctx = uctx;
    cq->eqn = eqn;
    cq->log_size = c->log_size;
    *cqn = i;
    trace_softhca_cq_create(i, uctx, eqn, cq->log_size);
    return SHCA_AQ_OK;
}

static void softhca_cq_free(SofthcaCq *cq)
{
    softhca_buf_free(&cq->buf);
    *cq = (SofthcaCq) { 0 };
}

uint8_t softhca_cq_destroy(SofthcaState *s, uint32_t cqn)
{
    SofthcaCq *cq = softhca_cq_get(s, cqn);

    if (!cq) {
        return SHCA_AQ_BAD_HANDLE;
    }
    if (cq->users) {
        return SHCA_AQ_BUSY;
    }
    softhca_cq_free(cq);
    trace_softhca_cq_destroy(cqn);
    return SHCA_AQ_OK;
}

/*
 * The unconsumed CQEs, read from the old ring, into slots 0.. of @nbuf,
 * as steps of the command: completions that come meanwhile are copied
 * too, and must fit in @nbuf's 2^log_size.  How many, through *n.
 */
static uint8_t softhca_cq_copy(SofthcaState *s, const SofthcaCq *cq,
                               const SofthcaBuf *nbuf, uint8_t log_size,
                               uint32_t ci, uint32_t *n)
{
    uint32_t mask = (1u << cq->log_size) - 1;
    struct shca_cqe cqe;
    uint32_t k;

    for (k = 0; k != cq->pi - ci; k++) {
        uint64_t from = (uint64_t)((ci + k) & mask) * SHCA_CQE_SIZE;

        if (!softhca_work_step(s, SOFTHCA_WORK_CQE)) {
            return SHCA_AQ_BAD_ADDR;
        }
        if (cq->error || cq->pi - ci > (1u << log_size)) {
            return SHCA_AQ_BAD_PARAM;
        }

        if (!softhca_dma_read(s, softhca_buf_addr(&cq->buf, from), &cqe,
                              sizeof(cqe))) {
            return SHCA_AQ_BAD_ADDR;
        }
        cqe.phase = SHCA_PHASE_BIT;
        if (!softhca_dma_write_owned(s, softhca_buf_addr(nbuf,
                                     (uint64_t)k * SHCA_CQE_SIZE),
                                     &cqe, sizeof(cqe))) {
            return SHCA_AQ_BAD_ADDR;
        }
    }
    *n = k;
    return SHCA_AQ_OK;
}

/* RESIZE_CQ (spec §13.1): the unconsumed CQEs move to the new ring. */
uint8_t softhca_cq_resize(SofthcaState *s, const struct shca_aq_resize_cq *c,
                          uint32_t *copied)
{
    SofthcaCq *cq = softhca_cq_get(s, le32_to_cpu(c->cqn));
    uint64_t rec_off;
    struct shca_cq_record rec;
    SofthcaBuf nbuf = { 0 };
    uint32_t ci, n;
    uint8_t status;

    if (!cq) {
        return SHCA_AQ_BAD_HANDLE;
    }
    if (!softhca_cq_log_size_ok(c->log_size) ||
        !buffer_is_zero(c->rsvd, sizeof(c->rsvd)) || cq->error) {
        return SHCA_AQ_BAD_PARAM;
    }
    rec_off = (uint64_t)SHCA_CQE_SIZE << cq->log_size;
    if (!softhca_dma_read(s, softhca_buf_addr(&cq->buf, rec_off), &rec,
                          sizeof(rec))) {
        return SHCA_AQ_BAD_ADDR;
    }
    ci = le32_to_cpu(rec.ci);
    n = cq->pi - ci;
    if (n > (1u << cq->log_size) || n > (1u << c->log_size)) {
        return SHCA_AQ_BAD_PARAM;
    }
    status = softhca_buf_init(s, &nbuf, &c->buf,
                              ((uint64_t)SHCA_CQE_SIZE << c->log_size) +
                              sizeof(struct shca_cq_record));
    if (status == SHCA_AQ_OK) {
        status = softhca_cq_copy(s, cq, &nbuf, c->log_size, ci, &n);
    }
    if (status != SHCA_AQ_OK) {
        softhca_buf_free(&nbuf);
        return status;
    }
    softhca_buf_free(&cq->buf);
    cq->buf = nbuf;
    cq->log_size = c->log_size;
    cq->pi = n;
    cq->ci = 0;
    *copied = n;
    trace_softhca_cq_resize(le32_to_cpu(c->cqn), cq->log_size, n);
    return SHCA_AQ_OK;
}

/* QPs go first (softhca_qp_reset): they hold the CQs. */
void softhca_cq_reset(SofthcaState *s)
{
    for (uint32_t i = 0; i < SOFTHCA_MAX_CQ; i++) {
        softhca_cq_free(&s->cqs[i]);
    }
}

/*
 * Overrun (or a CQ that is no longer writable): the CQ is in error for good
 * and CQ_ERROR goes to EQ 0.  Moving its QPs to ERR is the engine's, which
 * learns of it from the failed push (softhca_tp_cqe).
 */
static void softhca_cq_overrun(SofthcaState *s, uint32_t cqn, SofthcaCq *cq)
{
    qemu_log_mask(LOG_GUEST_ERROR, "softhca: CQ %u overrun\n", cqn);
    trace_softhca_err_cq_overrun(cqn, cq->pi, cq->ci);
    cq->error = true;
    softhca_eq_post(s, 0, SHCA_EQE_CQ_ERROR, cqn, 0);
}

bool softhca_cq_in_error(SofthcaState *s, uint32_t cqn)
{
    SofthcaCq *cq = softhca_cq_get(s, cqn);

    return cq && cq->error;
}

/* Room for one more CQE?  The record is read only when the ring looks full. */
static bool softhca_cq_room(SofthcaState *s, SofthcaCq *cq)
{
    uint32_t size = 1u << cq->log_size;
    uint64_t rec_off = (uint64_t)SHCA_CQE_SIZE << cq->log_size;
    struct shca_cq_record rec;

    if (cq->pi - cq->ci < size) {
        return true;
    }
    if (!softhca_dma_read(s, softhca_buf_addr(&cq->buf, rec_off), &rec,
                          sizeof(rec))) {
        return false;
    }
    cq->ci = le32_to_cpu(rec.ci);
    /* A ci ahead of pi wraps to a huge distance: an overrun as well. */
    return cq->pi - cq->ci < size;
}

bool softhca_cq_push_se(SofthcaState *s, uint32_t cqn, struct shca_cqe *cqe,
                        bool solicited)
{
    SofthcaCq *cq = softhca_cq_get(s, cqn);
    uint32_t slot;

    if (!cq || cq->error || !softhca_ready(s)) {
        return false;
    }
    if (!softhca_cq_room(s, cq)) {
        softhca_cq_overrun(s, cqn, cq);
        return false;
    }
    slot = cq->pi & ((1u << cq->log_size) - 1);
    cqe->phase = (cq->pi >> cq->log_size) & 1 ? 0 : SHCA_PHASE_BIT;
    if (!softhca_dma_write_owned(s, softhca_buf_addr(&cq->buf,
                                 (uint64_t)slot * SHCA_CQE_SIZE),
                                 cqe, sizeof(*cqe))) {
        softhca_cq_overrun(s, cqn, cq);
        return false;
    }
    /* read by doorbell writes without the BQL (softhca-doorbell.c) */
    qatomic_set(&cq->pi, cq->pi + 1);
    trace_softhca_cq_push(cqn, slot, le32_to_cpu(cqe->qpn), cqe->status,
                          cqe->opcode);
    if (cq->armed && (!cq->solicited_only || solicited ||
                      cqe->status != SHCA_CQE_SUCCESS)) {
        cq->armed = false;
        softhca_eq_post(s, cq->eqn, SHCA_EQE_COMPLETION, cqn, 0);
    }
    return true;
}

/*
 * CQ doorbell (spec §14): cqn, bit 31 ARM, bit 30 SOLICITED.  pi_then is
 * the CQ's count of CQEs (its low SOFTHCA_CQ_PI_SNAP bits) when the
 * doorbell was written: one taken from its page's queue may come after
 * completions that it should have seen armed (the driver checked the CQ
 * after writing it), and those now raise the event the arm would have
 * raised then.
 */
void softhca_cq_doorbell(SofthcaState *s, uint32_t uctx, uint32_t val,
                         uint32_t pi_then)
{
    uint32_t cqn = val & SHCA_DB_QN_MASK;
    SofthcaCq *cq = softhca_cq_get(s, cqn);
    bool solicited = val & SHCA_DB_CQ_SOLICITED;

    trace_softhca_cq_doorbell(uctx, cqn, !!(val & SHCA_DB_CQ_ARM), solicited);
    if (!cq || cq->uctx != uctx ||
        (val & ~(SHCA_DB_QN_MASK | SHCA_DB_CQ_ARM | SHCA_DB_CQ_SOLICITED))) {
        qemu_log_mask(LOG_GUEST_ERROR, "softhca: bad CQ doorbell 0x%x from "
                      "page %u\n", val, uctx);
        trace_softhca_err_doorbell(uctx, SHCA_DB_CQ, val);
        return;
    }
    if (!(val & SHCA_DB_CQ_ARM)) {
        return;
    }
    /* An ARM for any completion is not narrowed by a later SOLICITED one. */
    cq->solicited_only = cq->armed ? cq->solicited_only && solicited
                                   : solicited;
    cq->armed = true;
    if ((cq->pi - pi_then) & SOFTHCA_CQ_PI_SNAP_MASK) {
        cq->armed = false;
        softhca_eq_post(s, cq->eqn, SHCA_EQE_COMPLETION, cqn, 0);
    }
}
