/*
 * softhca: queue pairs (spec §13.2), their state machine and their
 * doorbells (§14)
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

#define SOFTHCA_PSN_MASK        0xffffffu
#define SOFTHCA_QPN_MASK        0xffffffu
#define SOFTHCA_QP_ACCESS       (SHCA_ACCESS_LOCAL_WRITE | \
                                 SHCA_ACCESS_REMOTE_WRITE | \
                                 SHCA_ACCESS_REMOTE_READ | \
                                 SHCA_ACCESS_REMOTE_ATOMIC | \
                                 SHCA_ACCESS_FLUSH_GLOBAL | \
                                 SHCA_ACCESS_FLUSH_PERSISTENT)
#define SOFTHCA_QP_ATTR_ALL     ((SHCA_QP_ATTR_SQD_NOTIFY << 1) - 1)

static bool softhca_qp_has_rq(const SofthcaQp *qp)
{
    return qp->rq.buf.npages != 0;
}

uint8_t softhca_qp_create(SofthcaState *s, const struct shca_aq_create_qp *c,
                          uint32_t *qpn)
{
    uint32_t uctx = le32_to_cpu(c->uctx);
    uint32_t pdn = le32_to_cpu(c->pdn);
    uint32_t send_cqn = le32_to_cpu(c->send_cqn);
    uint32_t recv_cqn = le32_to_cpu(c->recv_cqn);
    SofthcaCq *scq = softhca_cq_get(s, send_cqn);
    SofthcaCq *rcq = softhca_cq_get(s, recv_cqn);
    static const struct shca_buf_desc no_buf;
    bool has_rq = le32_to_cpu(c->rq.npages) != 0;
    bool with_srq = c->flags & SHCA_QP_F_SRQ;
    SofthcaSrq *srq = with_srq ? softhca_srq_get(s, le16_to_cpu(c->srqn))
                               : NULL;
    SofthcaQp *qp;
    uint8_t status;

    if (c->type == SHCA_QPT_XRC_TGT && s->caps_qp) {
        return softhca_xrc_tgt_create(s, c, qpn);
    }
    if (!softhca_uctx_ok(s, uctx) || !softhca_pd_ok(s, pdn) || !scq ||
        !rcq || (with_srq && !srq)) {
        return SHCA_AQ_BAD_HANDLE;
    }
    if (scq->uctx != uctx || rcq->uctx != uctx || s->pd_uctx[pdn] != uctx ||
        (c->type != SHCA_QPT_RC && c->type != SHCA_QPT_UC &&
         c->type != SHCA_QPT_UD && c->type != SHCA_QPT_GSI &&
         c->type != SHCA_QPT_XRC_INI) ||
        /* an XRC send QP has no receive side (spec §13.7) */
        (c->type == SHCA_QPT_XRC_INI &&
         (has_rq || with_srq || send_cqn != recv_cqn)) ||
        ((c->type == SHCA_QPT_UD || c->type == SHCA_QPT_GSI) &&
         !softhca_has_dgram(s)) ||
        (c->type == SHCA_QPT_GSI && uctx != 0) ||
        (c->flags & ~(SHCA_QP_F_SQ_RECORD | SHCA_QP_F_SRQ)) ||
        (c->flags && !s->caps_qp) ||
        (!with_srq && c->srqn) ||
        /*
         * an SRQ of the QP's context, of any of its PDs (the SRQ's governs
         * its WQEs, spec §13.5), and no RQ of its own
         */
        (srq && (srq->uctx != uctx || has_rq || c->type == SHCA_QPT_GSI)) ||
        /* an XRC SRQ serves XRC target QPs only (spec §13.5) */
        (srq && srq->xrc) ||
        /* a QP without an RQ describes none at all */
        (!has_rq && (c->rq_log_size || c->rq_wqe_shift ||
                     memcmp(&c->rq, &no_buf, sizeof(no_buf))))) {
        return SHCA_AQ_BAD_PARAM;
    }
    status = softhca_qp_alloc(s, c->type, qpn);
    if (status != SHCA_AQ_OK) {
        return status;
    }
    qp = &s->qps[*qpn];
    status = softhca_wq_init(s, &qp->sq, &c->sq, c->sq_log_size,
                             c->sq_wqe_shift, SOFTHCA_SQ_SHIFT_MIN,
                             c->flags & SHCA_QP_F_SQ_RECORD ?
                             sizeof(struct shca_sq_record) : 0);
    if (status == SHCA_AQ_OK && has_rq) {
        status = softhca_wq_init(s, &qp->rq, &c->rq, c->rq_log_size,
                                 c->rq_wqe_shift, SOFTHCA_RQ_SHIFT_MIN, 0);
    }
    if (status == SHCA_AQ_OK) {
        qp->type = c->type;
        qp->qpn = *qpn;
        status = softhca_tp_create(s, qp);
    }
    if (status != SHCA_AQ_OK) {
        softhca_buf_free(&qp->sq.buf);
        softhca_buf_free(&qp->rq.buf);
        *qp = (SofthcaQp) { 0 };
        return status;
    }
    qp->valid = true;
    qp->sq_record = c->flags & SHCA_QP_F_SQ_RECORD;
    qp->state = SHCA_QPS_RESET;
    qp->uctx = uctx;
    qp->pdn = pdn;
    if (qp->type != SHCA_QPT_XRC_TGT) {
        softhca_pd_hold(s, pdn);
    }
    qp->send_cqn = send_cqn;
    qp->recv_cqn = recv_cqn;
    scq->users++;
    rcq->users++;
    if (srq) {
        qp->srqn = srq->srqn;
        srq->users++;
    }
    trace_softhca_qp_create(*qpn, c->type, uctx, pdn, qp->sq.log_size,
                            qp->rq.log_size);
    return SHCA_AQ_OK;
}

static void softhca_qp_free(SofthcaState *s, SofthcaQp *qp)
{
    softhca_tp_stop(s, qp);
    softhca_tp_destroy(s, qp);
    /* a target QP holds no CQ, SRQ or PD: it only visits them */
    if (qp->type != SHCA_QPT_XRC_TGT) {
        softhca_pd_release(s, qp->pdn);
        s->cqs[qp->send_cqn].users--;
        s->cqs[qp->recv_cqn].users--;
        if (qp->srqn) {
            s->srqs[qp->srqn].users--;
        }
    }
    softhca_buf_free(&qp->sq.buf);
    softhca_buf_free(&qp->rq.buf);
    *qp = (SofthcaQp) { 0 };
}

uint8_t softhca_qp_destroy(SofthcaState *s, uint32_t qpn)
{
    SofthcaQp *qp = softhca_qp_get(s, qpn);

    if (!qp) {
        return SHCA_AQ_BAD_HANDLE;
    }
    softhca_mcast_detach_qp(s, qpn);
    softhca_qp_free(s, qp);
    trace_softhca_qp_destroy(qpn);
    return SHCA_AQ_OK;
}

void softhca_qp_reset(SofthcaState *s)
{
    for (uint32_t i = 0; i < SOFTHCA_QP_TABLE; i++) {
        if (s->qps[i].valid) {
            softhca_qp_free(s, &s->qps[i]);
        }
    }
}

/*
 * The IBA state machine of spec §13.2: whether cur -> next is allowed for
 * a QP of this type, and which attributes it requires and allows.  UD and
 * GSI QPs take QKEY where connected ones take ACCESS, and have no path or
 * remote QP to set up.
 */
static bool softhca_qp_transition(uint8_t type, uint8_t cur, uint8_t next,
                                  uint32_t *req, uint32_t *opt)
{
    bool rc = type == SHCA_QPT_RC || type == SHCA_QPT_XRC_INI ||
              type == SHCA_QPT_XRC_TGT;
    bool ud = type == SHCA_QPT_UD || type == SHCA_QPT_GSI;
    uint32_t access = ud ? SHCA_QP_ATTR_QKEY : SHCA_QP_ATTR_ACCESS;
    uint32_t rnr_timer = ud ? 0 : SHCA_QP_ATTR_MIN_RNR_TIMER;

    *req = SHCA_QP_ATTR_STATE;
    *opt = 0;
    if (next == SHCA_QPS_RESET || next == SHCA_QPS_ERR) {
        return true;
    }
    if (cur == SHCA_QPS_RESET && next == SHCA_QPS_INIT) {
        *req |= access;
    } else if (cur == SHCA_QPS_INIT && next == SHCA_QPS_INIT) {
        *req = 0;
        *opt = SHCA_QP_ATTR_STATE | access;
    } else if (cur == SHCA_QPS_INIT && next == SHCA_QPS_RTR) {
        if (!ud) {
            *req |= SHCA_QP_ATTR_AV | SHCA_QP_ATTR_PATH_MTU |
                    SHCA_QP_ATTR_DEST_QPN | SHCA_QP_ATTR_RQ_PSN;
        }
        if (rc) {
            *req |= SHCA_QP_ATTR_MAX_DEST_RD_ATOMIC |
                    SHCA_QP_ATTR_MIN_RNR_TIMER;
        }
        *opt = access;
    } else if (cur == SHCA_QPS_RTR && next == SHCA_QPS_RTS) {
        *req |= SHCA_QP_ATTR_SQ_PSN;
        if (rc) {
            *req |= SHCA_QP_ATTR_TIMEOUT | SHCA_QP_ATTR_RETRY_CNT |
                    SHCA_QP_ATTR_RNR_RETRY | SHCA_QP_ATTR_MAX_RD_ATOMIC;
        }
        *opt = access | rnr_timer;
    } else if (cur == SHCA_QPS_RTS && next == SHCA_QPS_RTS) {
        *req = 0;
        *opt = SHCA_QP_ATTR_STATE | access | rnr_timer;
    } else if (cur == SHCA_QPS_RTS && next == SHCA_QPS_SQD) {
        *opt = SHCA_QP_ATTR_SQD_NOTIFY;
    } else if (cur == SHCA_QPS_SQD &&
               (next == SHCA_QPS_SQD || next == SHCA_QPS_RTS)) {
        *opt = access | rnr_timer;
    } else {
        return false;
    }
    return true;
}

/*
 * The values of the attributes named by mask, in host byte order: NULL if
 * they are good, else the name of the first bad one, for the guest error.
 */
static const char *softhca_qp_attr_bad(SofthcaState *s,
                                       const struct shca_qp_attr *a,
                                       uint32_t mask)
{
    struct shca_av av;

    softhca_av_from_le(&av, &a->av);
    if ((mask & SHCA_QP_ATTR_ACCESS) &&
        (le32_to_cpu(a->access) & ~SOFTHCA_QP_ACCESS)) {
        return "access";
    }
    if ((mask & SHCA_QP_ATTR_PATH_MTU) &&
        (a->path_mtu < 1 || a->path_mtu > 5)) {
        return "path_mtu";
    }
    if ((mask & SHCA_QP_ATTR_AV) && !softhca_av_ok(s, &av)) {
        return av.flow_label & ~SOFTHCA_FLOW_LABEL_MASK ? "av flow_label" :
                                                          "av sgid_index";
    }
    if (((mask & SHCA_QP_ATTR_TIMEOUT) && a->timeout > 31) ||
        ((mask & SHCA_QP_ATTR_RETRY_CNT) && a->retry_cnt > 7) ||
        ((mask & SHCA_QP_ATTR_RNR_RETRY) && a->rnr_retry > 7) ||
        ((mask & SHCA_QP_ATTR_MIN_RNR_TIMER) && a->min_rnr_timer > 31)) {
        return "timer or retry count";
    }
    if (((mask & SHCA_QP_ATTR_RQ_PSN) &&
         le32_to_cpu(a->rq_psn) & ~SOFTHCA_PSN_MASK) ||
        ((mask & SHCA_QP_ATTR_SQ_PSN) &&
         le32_to_cpu(a->sq_psn) & ~SOFTHCA_PSN_MASK) ||
        ((mask & SHCA_QP_ATTR_DEST_QPN) &&
         le32_to_cpu(a->dest_qpn) & ~SOFTHCA_QPN_MASK)) {
        return "psn or dest_qpn";
    }
    if (((mask & SHCA_QP_ATTR_MAX_RD_ATOMIC) &&
         a->max_rd_atomic > SOFTHCA_MAX_QP_RD_ATOM) ||
        ((mask & SHCA_QP_ATTR_MAX_DEST_RD_ATOMIC) &&
         a->max_dest_rd_atomic > SOFTHCA_MAX_QP_RD_ATOM)) {
        return "max_rd_atomic";
    }
    return NULL;
}

static void softhca_qp_attr_apply(SofthcaQp *qp, const struct shca_qp_attr *a,
                                  uint32_t mask)
{
    struct shca_qp_attr *q = &qp->attr;

    if (mask & SHCA_QP_ATTR_ACCESS) {
        q->access = le32_to_cpu(a->access);
    }
    if (mask & SHCA_QP_ATTR_PATH_MTU) {
        q->path_mtu = a->path_mtu;
    }
    if (mask & SHCA_QP_ATTR_AV) {
        softhca_av_from_le(&q->av, &a->av);
    }
    if (mask & SHCA_QP_ATTR_TIMEOUT) {
        q->timeout = a->timeout;
    }
    if (mask & SHCA_QP_ATTR_RETRY_CNT) {
        q->retry_cnt = a->retry_cnt;
    }
    if (mask & SHCA_QP_ATTR_RNR_RETRY) {
        q->rnr_retry = a->rnr_retry;
    }
    if (mask & SHCA_QP_ATTR_MIN_RNR_TIMER) {
        q->min_rnr_timer = a->min_rnr_timer;
    }
    /* The transport continues from the PSNs set here. */
    if (mask & SHCA_QP_ATTR_RQ_PSN) {
        q->rq_psn = le32_to_cpu(a->rq_psn);
        qp->tp.rq_psn = q->rq_psn;
    }
    if (mask & SHCA_QP_ATTR_SQ_PSN) {
        q->sq_psn = le32_to_cpu(a->sq_psn);
        qp->tp.sq_psn = q->sq_psn;
    }
    if (mask & SHCA_QP_ATTR_MAX_RD_ATOMIC) {
        q->max_rd_atomic = a->max_rd_atomic;
    }
    if (mask & SHCA_QP_ATTR_MAX_DEST_RD_ATOMIC) {
        q->max_dest_rd_atomic = a->max_dest_rd_atomic;
    }
    if (mask & SHCA_QP_ATTR_DEST_QPN) {
        q->dest_qpn = le32_to_cpu(a->dest_qpn);
    }
    if (mask & SHCA_QP_ATTR_QKEY) {
        q->qkey = le32_to_cpu(a->qkey);
    }
}

/* RESET: the WQEs are dropped, the indexes and attributes start over. */
static void softhca_qp_to_reset(SofthcaState *s, SofthcaQp *qp)
{
    qp->sq.pi = qp->sq.ci = 0;
    qp->rq.pi = qp->rq.ci = 0;
    qp->attr = (struct shca_qp_attr) { 0 };
    qp->tp.sq_psn = qp->tp.rq_psn = 0;
    softhca_tp_reset(s, qp);
}

uint8_t softhca_qp_modify(SofthcaState *s, const struct shca_aq_qp_attr *c)
{
    SofthcaQp *qp = softhca_qp_get(s, le32_to_cpu(c->qpn));
    uint32_t mask = le32_to_cpu(c->attr_mask);
    uint64_t addr = le64_to_cpu(c->attr_addr);
    struct shca_qp_attr attr;
    const char *bad;
    uint32_t req, opt;
    uint8_t old, next;

    if (!qp) {
        return SHCA_AQ_BAD_HANDLE;
    }
    if (!QEMU_IS_ALIGNED(addr, sizeof(attr)) ||
        !softhca_dma_read(s, addr, &attr, sizeof(attr))) {
        return SHCA_AQ_BAD_ADDR;
    }
    old = qp->state;
    next = mask & SHCA_QP_ATTR_STATE ? attr.state : old;
    bad = softhca_qp_attr_bad(s, &attr, mask);
    if ((mask & ~SOFTHCA_QP_ATTR_ALL) ||
        !softhca_qp_transition(qp->type, old, next, &req, &opt) ||
        (mask & req) != req || (mask & ~(req | opt)) || bad) {
        qemu_log_mask(LOG_GUEST_ERROR, "softhca: QP %u: modify %u -> %u "
                      "with mask 0x%x refused%s%s\n", qp->qpn, old, next,
                      mask, bad ? ": bad " : "", bad ? bad : "");
        return SHCA_AQ_BAD_PARAM;
    }

    if (next != old) {
        softhca_tp_stop(s, qp);
    }
    qp->state = next;
    qp->attr.state = next;
    if (next != SHCA_QPS_RTS) {
        /* POLLING only in RTS (spec §14) */
        softhca_tp_sq_polling(s, qp, false);
    }
    trace_softhca_qp_modify(qp->qpn, old, next, mask);
    if (next == SHCA_QPS_RESET) {
        softhca_qp_to_reset(s, qp);
        return SHCA_AQ_OK;
    }
    softhca_qp_attr_apply(qp, &attr, mask);
    softhca_tp_modified(s, qp, old, mask);
    if (next == SHCA_QPS_ERR && old != SHCA_QPS_ERR) {
        /* the command completes once every WQE has (spec §13.2) */
        while (!softhca_tp_flush(s, qp)) {
            if (!softhca_work_wait(s)) {
                return SHCA_AQ_OK;
            }
        }
        softhca_tp_last_wqe(s, qp);
    } else if (next == SHCA_QPS_SQD && old == SHCA_QPS_RTS) {
        softhca_tp_sqd(s, qp, mask & SHCA_QP_ATTR_SQD_NOTIFY);
    } else if (next == SHCA_QPS_RTS && old != SHCA_QPS_RTS &&
               (softhca_tp_sq_record_poll(s, qp) || qp->sq.pi != qp->sq.ci)) {
        /* SQ doorbells (or the record) held since RESET, INIT or RTR */
        softhca_tp_sq_kick(s, qp);
    }
    return SHCA_AQ_OK;
}

uint8_t softhca_qp_query(SofthcaState *s, const struct shca_aq_qp_attr *c)
{
    SofthcaQp *qp = softhca_qp_get(s, le32_to_cpu(c->qpn));
    uint64_t addr = le64_to_cpu(c->attr_addr);
    const struct shca_qp_attr *q;
    struct shca_qp_attr a;

    if (!qp) {
        return SHCA_AQ_BAD_HANDLE;
    }
    if (c->attr_mask) {
        return SHCA_AQ_BAD_PARAM;
    }
    q = &qp->attr;
    a = (struct shca_qp_attr) {
        .state = qp->state,
        .path_mtu = q->path_mtu,
        .timeout = q->timeout,
        .retry_cnt = q->retry_cnt,
        .rnr_retry = q->rnr_retry,
        .min_rnr_timer = q->min_rnr_timer,
        .max_rd_atomic = q->max_rd_atomic,
        .max_dest_rd_atomic = q->max_dest_rd_atomic,
        .dest_qpn = cpu_to_le32(q->dest_qpn),
        .rq_psn = cpu_to_le32(qp->tp.rq_psn & SOFTHCA_PSN_MASK),
        .sq_psn = cpu_to_le32(qp->tp.sq_psn & SOFTHCA_PSN_MASK),
        .qkey = cpu_to_le32(q->qkey),
        .access = cpu_to_le32(q->access),
        .av = q->av,
    };
    a.av.flow_label = cpu_to_le32(q->av.flow_label);
    a.av.sgid_index = cpu_to_le16(q->av.sgid_index);
    a.av.udp_sport = cpu_to_le16(q->av.udp_sport);
    if (!QEMU_IS_ALIGNED(addr, sizeof(a)) ||
        !softhca_dma_write(s, addr, &a, sizeof(a))) {
        return SHCA_AQ_BAD_ADDR;
    }
    return SHCA_AQ_OK;
}

/*
 * SQ and RQ doorbells (spec §14): (pi << 16) | qpn, rung through the page
 * of the QP's context.  A count more than the ring ahead of what the device
 * has taken is fatal to the QP; one at or behind the count the device has
 * changes nothing.
 */
void softhca_qp_doorbell(SofthcaState *s, uint32_t uctx, bool sq,
                         uint32_t val)
{
    uint32_t qpn = val & SHCA_DB_QN_MASK;
    uint16_t pi = val >> 16;
    SofthcaQp *qp = softhca_qp_get(s, qpn);
    SofthcaWq *wq;

    trace_softhca_qp_doorbell(uctx, qpn, sq, pi);
    if (!qp || qp->uctx != uctx || (!sq && !softhca_qp_has_rq(qp)) ||
        (sq && !qp->sq.buf.npages) ||
        (!sq && qp->state == SHCA_QPS_RESET)) {
        qemu_log_mask(LOG_GUEST_ERROR, "softhca: bad %s doorbell 0x%x from "
                      "page %u\n", sq ? "SQ" : "RQ", val, uctx);
        trace_softhca_err_doorbell(uctx, sq ? SHCA_DB_SQ : SHCA_DB_RQ, val);
        return;
    }
    wq = sq ? &qp->sq : &qp->rq;
    if (!softhca_tp_wq_post(s, qp, wq, pi)) {
        return;
    }
    if (qp->state == SHCA_QPS_ERR) {
        softhca_tp_flush(s, qp);
    } else if (!sq) {
        softhca_tp_rq_kick(s, qp);
    } else if (qp->state == SHCA_QPS_RTS) {
        softhca_tp_sq_kick(s, qp);
    }
}
