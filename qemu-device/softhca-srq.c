/*
 * softhca: shared receive queues (spec §13.5) -- CREATE/MODIFY/QUERY/
 * DESTROY_SRQ, the SRQ doorbell, and the receive WQEs QPs take from them.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/cutils.h"
#include "qemu/log.h"
#include "softhca-rdma.h"
#include "trace.h"

SofthcaSrq *softhca_srq_get(SofthcaState *s, uint32_t srqn)
{
    if (!srqn || srqn > SOFTHCA_MAX_SRQ || !s->srqs[srqn].valid) {
        return NULL;
    }
    return &s->srqs[srqn];
}

static uint64_t softhca_srq_record_addr(const SofthcaSrq *srq)
{
    return softhca_buf_addr(&srq->wq.buf,
                            1ull << (srq->wq.log_size + srq->wq.wqe_shift));
}

/* Tell software which slots it has back (spec §13.5). */
static void softhca_srq_write_record(SofthcaState *s, SofthcaSrq *srq)
{
    struct shca_srq_record rec = { .ci = cpu_to_le32(srq->wq.ci) };

    if (!softhca_dma_write(s, softhca_srq_record_addr(srq), &rec,
                           sizeof(rec))) {
        qemu_log_mask(LOG_GUEST_ERROR, "softhca: SRQ %u: record not "
                      "writable\n", srq->srqn);
    }
}

static uint8_t softhca_srq_ring(SofthcaState *s, SofthcaWq *wq,
                                const struct shca_buf_desc *desc,
                                uint8_t log_size, uint8_t wqe_shift)
{
    if ((1u << MIN(log_size, 31)) > SOFTHCA_MAX_SRQ_WR) {
        return SHCA_AQ_BAD_PARAM;
    }
    return softhca_wq_init(s, wq, desc, log_size, wqe_shift,
                           SOFTHCA_RQ_SHIFT_MIN,
                           sizeof(struct shca_srq_record));
}

uint8_t softhca_srq_create(SofthcaState *s, const struct shca_aq_create_srq *c,
                           uint32_t *srqn)
{
    uint32_t uctx = le32_to_cpu(c->uctx);
    uint32_t pdn = le32_to_cpu(c->pdn);
    uint32_t limit = le32_to_cpu(c->srq_limit);
    bool xrc = c->flags & SHCA_SRQ_F_XRC;
    uint32_t xrcdn = le32_to_cpu(c->xrcdn);
    uint32_t cqn = le32_to_cpu(c->cqn);
    SofthcaCq *cq = xrc ? softhca_cq_get(s, cqn) : NULL;
    SofthcaSrq *srq = NULL;
    uint8_t status;

    if (!softhca_uctx_ok(s, uctx) || !softhca_pd_ok(s, pdn) ||
        (xrc && (!softhca_xrcd_ok(s, xrcdn) || !cq))) {
        return SHCA_AQ_BAD_HANDLE;
    }
    if (s->pd_uctx[pdn] != uctx || c->rsvd ||
        (c->flags & ~SHCA_SRQ_F_XRC) ||
        (!xrc && (xrcdn || cqn)) || (cq && cq->uctx != uctx) ||
        c->log_size > 31 || limit >= (1u << c->log_size)) {
        return SHCA_AQ_BAD_PARAM;
    }
    for (uint32_t i = 1; i <= SOFTHCA_MAX_SRQ; i++) {
        if (!s->srqs[i].valid) {
            srq = &s->srqs[i];
            *srqn = i;
            break;
        }
    }
    if (!srq) {
        return SHCA_AQ_NO_RESOURCES;
    }
    status = softhca_srq_ring(s, &srq->wq, &c->buf, c->log_size,
                              c->wqe_shift);
    if (status != SHCA_AQ_OK) {
        *srq = (SofthcaSrq) { 0 };
        return status;
    }
    srq->valid = true;
    srq->srqn = *srqn;
    srq->uctx = uctx;
    srq->pdn = pdn;
    softhca_pd_hold(s, pdn);
    srq->limit = limit;
    if (cq) {
        srq->xrc = true;
        srq->xrcdn = xrcdn;
        srq->cqn = cqn;
        cq->users++;
    }
    softhca_srq_write_record(s, srq);
    trace_softhca_srq_create(*srqn, uctx, pdn, c->log_size, limit);
    return SHCA_AQ_OK;
}

/* MAX_WR: the WQEs not taken move to the slots of the same counts. */
static uint8_t softhca_srq_resize(SofthcaState *s, SofthcaSrq *srq,
                                  const struct shca_aq_modify_srq *c)
{
    SofthcaWq wq = { 0 };
    uint32_t stride = 1u << srq->wq.wqe_shift;
    uint16_t posted = srq->wq.pi - srq->wq.ci;
    uint8_t wqe[1u << SOFTHCA_WQE_SHIFT_MAX];
    uint8_t status;

    status = softhca_srq_ring(s, &wq, &c->buf, c->log_size, srq->wq.wqe_shift);
    if (status == SHCA_AQ_OK && posted > (1u << wq.log_size)) {
        status = SHCA_AQ_BAD_PARAM;
    }
    for (uint16_t i = srq->wq.ci; status == SHCA_AQ_OK && i != srq->wq.pi;
         i++) {
        uint64_t slot = (uint64_t)(i & ((1u << wq.log_size) - 1)) <<
                        wq.wqe_shift;

        if (!softhca_wq_read(s, &srq->wq, i, wqe, stride) ||
            !softhca_dma_write(s, softhca_buf_addr(&wq.buf, slot), wqe,
                               stride)) {
            status = SHCA_AQ_BAD_ADDR;
        }
    }
    if (status != SHCA_AQ_OK) {
        softhca_buf_free(&wq.buf);
        return status;
    }
    wq.pi = srq->wq.pi;
    wq.ci = srq->wq.ci;
    softhca_buf_free(&srq->wq.buf);
    srq->wq = wq;
    softhca_srq_write_record(s, srq);
    return SHCA_AQ_OK;
}

uint8_t softhca_srq_modify(SofthcaState *s, const struct shca_aq_modify_srq *c)
{
    SofthcaSrq *srq = softhca_srq_get(s, le32_to_cpu(c->srqn));
    uint32_t mask = le32_to_cpu(c->attr_mask);
    uint32_t limit = le32_to_cpu(c->srq_limit);
    uint32_t size;
    uint8_t status;

    if (!srq) {
        return SHCA_AQ_BAD_HANDLE;
    }
    size = mask & SHCA_SRQ_ATTR_MAX_WR ? 1u << MIN(c->log_size, 31)
                                       : 1u << srq->wq.log_size;
    if (!mask || (mask & ~(SHCA_SRQ_ATTR_LIMIT | SHCA_SRQ_ATTR_MAX_WR)) ||
        !buffer_is_zero(c->rsvd, sizeof(c->rsvd)) ||
        ((mask & SHCA_SRQ_ATTR_LIMIT) && limit >= size) ||
        (!(mask & SHCA_SRQ_ATTR_MAX_WR) &&
         (c->log_size || !buffer_is_zero(&c->buf, sizeof(c->buf)))) ||
        (!(mask & SHCA_SRQ_ATTR_LIMIT) && limit)) {
        return SHCA_AQ_BAD_PARAM;
    }
    if (mask & SHCA_SRQ_ATTR_MAX_WR) {
        status = softhca_srq_resize(s, srq, c);
        if (status != SHCA_AQ_OK) {
            return status;
        }
    }
    if (mask & SHCA_SRQ_ATTR_LIMIT) {
        srq->limit = limit;
    }
    trace_softhca_srq_modify(srq->srqn, mask, srq->wq.log_size, srq->limit);
    return SHCA_AQ_OK;
}

uint8_t softhca_srq_query(SofthcaState *s, uint32_t srqn, uint32_t *limit)
{
    SofthcaSrq *srq = softhca_srq_get(s, srqn);

    if (!srq) {
        return SHCA_AQ_BAD_HANDLE;
    }
    *limit = srq->limit;
    return SHCA_AQ_OK;
}

/* An XRC target QP in the midst of a message into the SRQ srqn. */
static bool softhca_srq_targeted(SofthcaState *s, uint32_t srqn)
{
    for (uint32_t i = 0; i < SOFTHCA_QP_TABLE; i++) {
        const SofthcaQp *qp = &s->qps[i];

        if (qp->valid && qp->type == SHCA_QPT_XRC_TGT && qp->tp.have_recv &&
            qp->srqn == srqn) {
            return true;
        }
    }
    return false;
}

uint8_t softhca_srq_destroy(SofthcaState *s, uint32_t srqn)
{
    SofthcaSrq *srq = softhca_srq_get(s, srqn);

    if (!srq) {
        return SHCA_AQ_BAD_HANDLE;
    }
    if (srq->users || softhca_srq_targeted(s, srqn)) {
        return SHCA_AQ_BUSY;
    }
    if (srq->xrc) {
        s->cqs[srq->cqn].users--;
    }
    softhca_pd_release(s, srq->pdn);
    softhca_buf_free(&srq->wq.buf);
    *srq = (SofthcaSrq) { 0 };
    trace_softhca_srq_destroy(srqn);
    return SHCA_AQ_OK;
}

void softhca_srq_reset(SofthcaState *s)
{
    for (uint32_t i = 1; i <= SOFTHCA_MAX_SRQ; i++) {
        if (s->srqs[i].valid) {
            softhca_pd_release(s, s->srqs[i].pdn);
        }
        softhca_buf_free(&s->srqs[i].wq.buf);
        s->srqs[i] = (SofthcaSrq) { 0 };
    }
}

/*
 * (pi << 16) | srqn.  A count more than the ring ahead of the device is
 * ignored: unlike a QP, an SRQ has no error state to enter (spec §13.5).
 */
void softhca_srq_doorbell(SofthcaState *s, uint32_t uctx, uint32_t val)
{
    SofthcaSrq *srq = softhca_srq_get(s, val & SHCA_DB_QN_MASK);
    uint16_t pi = val >> 16;

    trace_softhca_srq_doorbell(uctx, val & SHCA_DB_QN_MASK, pi);
    if (!srq || srq->uctx != uctx ||
        (uint16_t)(pi - srq->wq.ci) > (1u << srq->wq.log_size)) {
        qemu_log_mask(LOG_GUEST_ERROR, "softhca: bad SRQ doorbell 0x%x from "
                      "page %u\n", val, uctx);
        trace_softhca_err_doorbell(uctx, SHCA_DB_SRQ, val);
        return;
    }
    srq->wq.pi = pi;
}

SofthcaWq *softhca_qp_recv_wq(SofthcaState *s, SofthcaQp *qp)
{
    return qp->srqn ? &s->srqs[qp->srqn].wq : &qp->rq;
}

/* A QP took the WQE before ci: give the slot back, check the limit. */
void softhca_srq_taken(SofthcaState *s, SofthcaQp *qp)
{
    SofthcaSrq *srq;

    if (!qp->srqn) {
        return;
    }
    srq = &s->srqs[qp->srqn];
    softhca_srq_write_record(s, srq);
    if (srq->limit && (uint16_t)(srq->wq.pi - srq->wq.ci) < srq->limit) {
        trace_softhca_srq_limit(srq->srqn, srq->limit);
        srq->limit = 0;
        softhca_eq_post(s, 0, SHCA_EQE_SRQ_LIMIT, srq->srqn, 0);
    }
}
