/*
 * softhca: the completer of the RoCEv2 transport (spec §15, §16) --
 * handles ACKs, NAKs, READ responses and atomic ACKs from the responder,
 * completes send WQEs in order, and runs the retransmit and RNR timer.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "softhca-tp.h"
#include "trace.h"

/*
 * But never sooner than 4 ms after an RNR NAK (spec §16): the timer the
 * NAK names is a minimum.  rxe on a Debian kernel waits at least a jiffy,
 * 4 ms, too.  A QP that retries for ever then costs its host 250 retries
 * a second at most, not one every 10 us, and a VM whose clock stands
 * still (a stopped VM under qtest) is not woken every 10 us to find
 * nothing to do (issue 25, defect 3).
 */
#define SOFTHCA_RNR_WAIT_MIN_NS (4 * 1000 * 1000)
/* rnr_retry 7 means: retry forever (IBA C9-141). */
#define SOFTHCA_RNR_RETRY_INFINITE  7

static const uint8_t softhca_cqe_opcode[] = {
    [SHCA_WR_SEND] = SHCA_CQE_OP_SEND,
    [SHCA_WR_SEND_IMM] = SHCA_CQE_OP_SEND,
    [SHCA_WR_SEND_INV] = SHCA_CQE_OP_SEND,
    [SHCA_WR_RDMA_WRITE] = SHCA_CQE_OP_RDMA_WRITE,
    [SHCA_WR_RDMA_WRITE_IMM] = SHCA_CQE_OP_RDMA_WRITE,
    [SHCA_WR_RDMA_READ] = SHCA_CQE_OP_RDMA_READ,
    [SHCA_WR_ATOMIC_CMP_SWP] = SHCA_CQE_OP_COMP_SWAP,
    [SHCA_WR_ATOMIC_FETCH_ADD] = SHCA_CQE_OP_FETCH_ADD,
    [SHCA_WR_REG_MR] = SHCA_CQE_OP_REG_MR,
    [SHCA_WR_LOCAL_INV] = SHCA_CQE_OP_LOCAL_INV,
    [SHCA_WR_BIND_MW] = SHCA_CQE_OP_BIND_MW,
    [SHCA_WR_FLUSH] = SHCA_CQE_OP_FLUSH,
    [SHCA_WR_ATOMIC_WRITE] = SHCA_CQE_OP_ATOMIC_WRITE,
};

static uint32_t softhca_op_last_psn(const SofthcaSendOp *op)
{
    return softhca_psn_add(op->first_psn, op->npkts - 1);
}

/* Complete the oldest started WQE; an error moves the QP to ERR. */
static void softhca_comp_one(SofthcaState *s, SofthcaQp *qp, uint8_t status)
{
    SofthcaQpTransport *tp = &qp->tp;
    uint16_t index = tp->sq_comp;
    SofthcaSendOp *op = softhca_req_op(qp, index);
    const struct shca_send_wqe *w = &op->wqe;

    if (softhca_wr_takes_rd(w->opcode) && op->npkts && tp->rd_atomic) {
        tp->rd_atomic--;
    }
    tp->sq_comp++;
    if (tp->sq_send == index) {
        tp->sq_send = tp->sq_comp;
        tp->send_pkt = 0;
    }
    if (status != SHCA_CQE_SUCCESS || (w->flags & SHCA_WQE_SIGNALED)) {
        struct shca_cqe cqe = {
            .wr_id = cpu_to_le64(w->wr_id),
            .byte_len = cpu_to_le32(op->len),
            .wqe_index = cpu_to_le16(index & ((1u << qp->sq.log_size) - 1)),
            .status = status,
            .opcode = w->opcode < ARRAY_SIZE(softhca_cqe_opcode) ?
                      softhca_cqe_opcode[w->opcode] : 0,
        };

        softhca_tp_cqe(s, qp, qp->send_cqn, &cqe, false);
    }
    if (status != SHCA_CQE_SUCCESS) {
        timer_del(tp->retry_timer);
        softhca_tp_error(s, qp, 0);
    }
}

void softhca_comp_advance(SofthcaState *s, SofthcaQp *qp, uint32_t acked)
{
    SofthcaQpTransport *tp = &qp->tp;

    while (tp->ops && tp->sq_comp != qp->sq.ci &&
           qp->state != SHCA_QPS_ERR) {
        SofthcaSendOp *op = softhca_req_op(qp, tp->sq_comp);

        if (op->status != SHCA_CQE_SUCCESS) {
            softhca_comp_one(s, qp, op->status);
            return;
        }
        if (softhca_wr_is_read_atomic(op->wqe.opcode) ? !op->done :
            softhca_psn_diff(softhca_op_last_psn(op), acked) > 0) {
            break;
        }
        softhca_comp_one(s, qp, SHCA_CQE_SUCCESS);
    }
    softhca_comp_sqd_drained(s, qp);
}

void softhca_comp_sqd_drained(SofthcaState *s, SofthcaQp *qp)
{
    if (qp->state == SHCA_QPS_SQD && qp->tp.sqd_notify &&
        qp->tp.sq_comp == qp->sq.ci) {
        qp->tp.sqd_notify = false;
        softhca_eq_post(s, 0, SHCA_EQE_SQ_DRAINED, qp->qpn, 0);
    }
}

/* Fail the oldest WQE: the peer refused it, or retries ran out. */
static void softhca_comp_fail(SofthcaState *s, SofthcaQp *qp, uint8_t status)
{
    trace_softhca_tp_fail(qp->qpn, qp->tp.sq_comp, status);
    if (qp->tp.sq_comp != qp->sq.ci) {
        softhca_comp_one(s, qp, status);
    }
}

void softhca_comp_timer_update(SofthcaState *s, SofthcaQp *qp)
{
    SofthcaQpTransport *tp = &qp->tp;
    uint64_t ns = softhca_ack_timeout_ns(qp->attr.timeout);

    if (tp->rnr_wait) {
        return;
    }
    if (!softhca_qp_is_rc(qp) || !ns || tp->sq_comp == qp->sq.ci) {
        timer_del(tp->retry_timer);
    } else if (!timer_pending(tp->retry_timer)) {
        timer_mod(tp->retry_timer,
                  qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + ns);
    }
}

/*
 * The peer has every request before psn: complete what that completes,
 * and restart the clock and the counts.  A READ or atomic is done only
 * when its responses are here, so its PSN stays unacknowledged until then.
 */
static void softhca_comp_progress(SofthcaState *s, SofthcaQp *qp,
                                  uint32_t psn)
{
    SofthcaQpTransport *tp = &qp->tp;

    softhca_comp_advance(s, qp, softhca_psn_add(psn, -1));
    if (tp->sq_comp != qp->sq.ci) {
        SofthcaSendOp *head = softhca_req_op(qp, tp->sq_comp);
        uint32_t expect = softhca_psn_add(head->first_psn, head->resp_pkts);

        if (softhca_wr_is_read_atomic(head->wqe.opcode) && !head->done &&
            softhca_psn_diff(psn, expect) > 0) {
            psn = expect;
        }
    }
    if (softhca_psn_diff(psn, tp->una_psn) > 0) {
        tp->una_psn = psn;
        tp->retry_left = qp->attr.retry_cnt;
        tp->rnr_left = qp->attr.rnr_retry;
        if (!tp->rnr_wait) {
            timer_del(tp->retry_timer);
        }
    }
}

/* Send again from psn, or fail with RETRY_EXC_ERR when retries ran out. */
static void softhca_comp_retry(SofthcaState *s, SofthcaQp *qp, uint32_t psn)
{
    SofthcaQpTransport *tp = &qp->tp;

    if (tp->rnr_wait) {
        return;         /* the RNR retry sends from there anyway */
    }
    if (!tp->retry_left) {
        softhca_comp_fail(s, qp, SHCA_CQE_RETRY_EXC_ERR);
        return;
    }
    tp->retry_left--;
    s->rdma_stats[SHCA_STAT_RETRANSMITS]++;
    trace_softhca_tp_retransmit(qp->qpn, psn, tp->retry_left);
    timer_del(tp->retry_timer);
    softhca_req_rewind(s, qp, psn);
    softhca_req_run(s, qp);
}

/*
 * Responses of a READ or atomic are missing from psn: ask again once per
 * gap (tp->read_nak, cleared when the expected response comes), whatever
 * shows the gap, a later response or an ACK past the READ.
 */
static void softhca_comp_read_retry(SofthcaState *s, SofthcaQp *qp,
                                    uint32_t psn)
{
    if (!qp->tp.read_nak) {
        qp->tp.read_nak = true;
        softhca_comp_retry(s, qp, psn);
    }
}

void softhca_comp_timer_cb(void *opaque)
{
    SofthcaQp *qp = opaque;
    SofthcaQpTransport *tp = &qp->tp;
    SofthcaState *s = tp->s;

    if (!softhca_tp_sends(qp)) {
        return;
    }
    if (tp->rnr_wait) {
        tp->rnr_wait = false;
        trace_softhca_tp_retransmit(qp->qpn, tp->una_psn, tp->rnr_left);
        softhca_req_rewind(s, qp, tp->una_psn);
        softhca_req_run(s, qp);
        return;
    }
    if (tp->sq_comp == qp->sq.ci) {
        return;
    }
    s->rdma_stats[SHCA_STAT_TIMEOUTS]++;
    trace_softhca_tp_timeout(qp->qpn, tp->una_psn);
    softhca_comp_retry(s, qp, tp->una_psn);
}

static void softhca_comp_rnr(SofthcaState *s, SofthcaQp *qp, uint32_t psn,
                             uint8_t timer)
{
    SofthcaQpTransport *tp = &qp->tp;

    s->rdma_stats[SHCA_STAT_RNR_NAKS_RECEIVED]++;
    if (qp->attr.rnr_retry != SOFTHCA_RNR_RETRY_INFINITE) {
        if (!tp->rnr_left) {
            softhca_comp_fail(s, qp, SHCA_CQE_RNR_RETRY_EXC_ERR);
            return;
        }
        tp->rnr_left--;
    }
    tp->rnr_wait = true;
    softhca_req_rewind(s, qp, psn);
    timer_mod(tp->retry_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
              MAX(softhca_rnr_timer_ns(timer), SOFTHCA_RNR_WAIT_MIN_NS));
}

static void softhca_comp_ack(SofthcaState *s, SofthcaQp *qp,
                             const SofthcaRocePacket *p)
{
    SofthcaQpTransport *tp = &qp->tp;
    uint8_t syn = p->aeth.syndrome;
    uint32_t psn = p->bth.psn;
    SofthcaSendOp *head;

    switch (syn & SOFTHCA_AETH_TYPE_MASK) {
    case SOFTHCA_AETH_ACK:
        softhca_comp_progress(s, qp, softhca_psn_add(psn, 1));
        head = softhca_req_op(qp, tp->sq_comp);
        if (softhca_tp_sends(qp) && tp->sq_comp != qp->sq.ci &&
            softhca_wr_is_read_atomic(head->wqe.opcode) && !head->done &&
            softhca_psn_diff(psn, softhca_op_last_psn(head)) >= 0) {
            /*
             * Acknowledged past a READ or atomic: its responses got lost.
             * Ask again once per gap, as for a gap in the responses: the
             * ACKs of the requests sent again after it would otherwise
             * each start another retry before its responses can arrive.
             */
            softhca_comp_read_retry(s, qp,
                                    softhca_psn_add(head->first_psn,
                                                    head->resp_pkts));
            return;
        }
        break;
    case SOFTHCA_AETH_RNR_NAK:
        softhca_comp_progress(s, qp, psn);
        if (softhca_tp_sends(qp)) {
            softhca_comp_rnr(s, qp, psn, syn & SOFTHCA_AETH_VALUE_MASK);
        }
        return;
    case SOFTHCA_AETH_NAK:
        s->rdma_stats[SHCA_STAT_NAKS_RECEIVED]++;
        softhca_comp_progress(s, qp, psn);
        if (!softhca_tp_sends(qp)) {
            return;
        }
        switch (syn) {
        case SOFTHCA_NAK_PSN_SEQ:
            softhca_comp_retry(s, qp, psn);
            return;
        case SOFTHCA_NAK_INVALID_REQ:
            softhca_comp_fail(s, qp, SHCA_CQE_REM_INV_REQ_ERR);
            return;
        case SOFTHCA_NAK_REM_ACCESS:
            softhca_comp_fail(s, qp, SHCA_CQE_REM_ACCESS_ERR);
            return;
        default:
            softhca_comp_fail(s, qp, SHCA_CQE_REM_OP_ERR);
            return;
        }
    default:
        return;                 /* reserved syndrome: ignored */
    }
    softhca_req_run(s, qp);
}

/* A READ response for the oldest WQE; false if it does not fit it. */
static bool softhca_comp_read_resp(SofthcaState *s, SofthcaQp *qp,
                                   SofthcaSendOp *op,
                                   const SofthcaRocePacket *p,
                                   const uint8_t *payload)
{
    uint8_t op5 = p->bth.opcode & ~SOFTHCA_TRANSPORT_MASK;
    uint32_t mtu = softhca_tp_mtu(qp);
    uint64_t off = (uint64_t)op->resp_pkts * mtu;
    bool first = op->resp_pkts == 0;
    bool last = op->resp_pkts + 1 == op->npkts;
    /* the last response of a request: of a chunk (softhca-req.c) */
    bool ends = last || (op->resp_pkts + 1) % SOFTHCA_READ_CHUNK == 0;
    bool fits;

    /* a retried READ starts again with FIRST or ONLY in mid chunk */
    switch (op5) {
    case SOFTHCA_OP_READ_RESPONSE_FIRST:
        fits = !ends;
        break;
    case SOFTHCA_OP_READ_RESPONSE_MIDDLE:
        fits = !first && !ends;
        break;
    case SOFTHCA_OP_READ_RESPONSE_LAST:
        fits = !first && ends;
        break;
    default:
        fits = ends;
        break;
    }
    if (!fits || p->payload_len != (last ? op->len - off : mtu)) {
        return false;
    }
    if (softhca_sge_copy(s, qp, op->sge, op->wqe.num_sge, off,
                         (void *)payload, p->payload_len,
                         true) != SOFTHCA_MEM_OK) {
        softhca_comp_fail(s, qp, SHCA_CQE_LOC_PROT_ERR);
        return true;
    }
    op->resp_pkts++;
    op->done = last;
    return true;
}

void softhca_comp_receive(SofthcaState *s, SofthcaQp *qp,
                          const SofthcaRocePacket *p, const uint8_t *payload)
{
    SofthcaQpTransport *tp = &qp->tp;
    uint8_t op5 = p->bth.opcode & ~SOFTHCA_TRANSPORT_MASK;
    uint32_t psn = p->bth.psn;
    SofthcaSendOp *op;
    uint32_t expect;

    if (!tp->ops || softhca_psn_diff(psn, tp->sent_psn) >= 0) {
        /* for a PSN no packet sent has asked an answer for: forged */
        softhca_tp_drop(s, SHCA_STAT_RX_DROPPED, 0, "response PSN not sent");
        return;
    }
    if (op5 == SOFTHCA_OP_ACKNOWLEDGE) {
        if (softhca_psn_diff(psn, tp->una_psn) >= -1) {
            softhca_comp_ack(s, qp, p);
        }
        return;
    }
    if (softhca_psn_diff(psn, tp->una_psn) < 0) {
        s->rdma_stats[SHCA_STAT_DUPLICATES]++;
        return;
    }
    /* a response implicitly acknowledges every request before it */
    softhca_comp_advance(s, qp, softhca_psn_add(psn, -1));
    if (!softhca_tp_sends(qp) || tp->sq_comp == qp->sq.ci) {
        return;
    }
    op = softhca_req_op(qp, tp->sq_comp);
    if (softhca_wr_is_aw_flush(op->wqe.opcode) && psn == op->first_psn) {
        /* its empty READ response is its ACK (spec §16) */
        if (op5 != SOFTHCA_OP_READ_RESPONSE_ONLY || p->payload_len) {
            softhca_comp_fail(s, qp, SHCA_CQE_BAD_RESP_ERR);
            return;
        }
        softhca_comp_ack(s, qp, p);
        return;
    }
    if (op->done || !softhca_wr_is_read_atomic(op->wqe.opcode)) {
        return;
    }
    expect = softhca_psn_add(op->first_psn, op->resp_pkts);
    if (softhca_psn_diff(psn, expect) < 0) {
        s->rdma_stats[SHCA_STAT_DUPLICATES]++;
        return;
    }
    softhca_comp_progress(s, qp, expect);
    if (psn != expect) {
        /*
         * A response got lost (of this READ, or this whole atomic or
         * READ): ask again from it, once per gap.
         */
        softhca_comp_read_retry(s, qp, expect);
        return;
    }
    tp->read_nak = false;
    if (op->wqe.opcode == SHCA_WR_RDMA_READ &&
        op5 >= SOFTHCA_OP_READ_RESPONSE_FIRST &&
        op5 <= SOFTHCA_OP_READ_RESPONSE_ONLY) {
        if (!softhca_comp_read_resp(s, qp, op, p, payload)) {
            softhca_comp_fail(s, qp, SHCA_CQE_BAD_RESP_ERR);
            return;
        }
    } else if (op->wqe.opcode != SHCA_WR_RDMA_READ &&
               op5 == SOFTHCA_OP_ATOMIC_ACKNOWLEDGE) {
        uint64_t orig = cpu_to_le64(p->atomic_ack);

        if (softhca_sge_copy(s, qp, op->sge, 1, 0, &orig, sizeof(orig),
                             true) != SOFTHCA_MEM_OK) {
            softhca_comp_fail(s, qp, SHCA_CQE_LOC_PROT_ERR);
            return;
        }
        op->resp_pkts = 1;
        op->done = true;
    } else {
        softhca_comp_fail(s, qp, SHCA_CQE_BAD_RESP_ERR);
        return;
    }
    if (!softhca_tp_sends(qp)) {
        return;
    }
    softhca_comp_progress(s, qp, softhca_psn_add(psn, 1));
    if (softhca_tp_sends(qp)) {
        softhca_req_run(s, qp);
    }
}
