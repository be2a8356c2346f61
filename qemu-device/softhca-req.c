/*
 * softhca: the requester of the RoCEv2 transport (spec §15, §16) -- takes
 * send WQEs from the SQ, checks them, and sends their messages as packets
 * of at most the path MTU; keeps what it started for retransmission.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/rcu.h"
#include "softhca-tp.h"
#include "trace.h"

#define SOFTHCA_WQE_MAX         (1u << SOFTHCA_WQE_SHIFT_MAX)

SofthcaSendOp *softhca_req_op(SofthcaQp *qp, uint16_t index)
{
    SofthcaQpTransport *tp = &qp->tp;

    return (SofthcaSendOp *)((uint8_t *)tp->ops +
                             (size_t)(index & (tp->nops - 1)) * tp->op_size);
}

/* The header of a send WQE as the guest wrote it, in host byte order. */
static void softhca_req_wqe_from_le(struct shca_send_wqe *w,
                                    const uint8_t *raw)
{
    memcpy(w, raw, sizeof(*w));
    w->wr_id = le64_to_cpu(w->wr_id);
    w->remote_addr = le64_to_cpu(w->remote_addr);
    w->rkey = le32_to_cpu(w->rkey);
    w->inline_len = le32_to_cpu(w->inline_len);
    w->compare_add = le64_to_cpu(w->compare_add);
    w->swap = le64_to_cpu(w->swap);
    /* w->imm stays as it travels on the wire, remote_qpn and qkey as LE */
}

/* ATOMIC_WRITE and FLUSH take no SGEs and no inline data (spec §15). */
static uint8_t softhca_req_check_aw_flush(SofthcaSendOp *op)
{
    const struct shca_send_wqe *w = &op->wqe;
    uint8_t type = w->feth & SHCA_FLUSH_TYPE_MASK;
    uint8_t level = w->feth & SHCA_FLUSH_LEVEL_MASK;

    if (w->num_sge || (w->flags & SHCA_WQE_INLINE)) {
        return SHCA_CQE_LOC_QP_OP_ERR;
    }
    if (w->opcode == SHCA_WR_ATOMIC_WRITE) {
        if ((w->remote_addr & 7) || w->feth) {
            return SHCA_CQE_LOC_QP_OP_ERR;
        }
        op->len = 8;
        return SHCA_CQE_SUCCESS;
    }
    if (!type || (type & ~(SHCA_FLUSH_GLOBAL | SHCA_FLUSH_PERSISTENT)) ||
        level > SHCA_FLUSH_LEVEL_MR || w->compare_add > 1ull << 31) {
        return SHCA_CQE_LOC_QP_OP_ERR;
    }
    op->len = w->compare_add;
    return SHCA_CQE_SUCCESS;
}

/* Check a send WQE (spec §15); SHCA_CQE_SUCCESS or the error to complete. */
static uint8_t softhca_req_check(SofthcaQp *qp, SofthcaSendOp *op,
                                 const uint8_t *raw, uint32_t stride)
{
    const struct shca_send_wqe *w = &op->wqe;
    uint64_t len = 0;

    if (softhca_req_opcode(w->opcode, true, true,
                           softhca_tp_transport(qp)) < 0) {
        return SHCA_CQE_LOC_QP_OP_ERR;
    }
    if (softhca_wr_is_aw_flush(w->opcode)) {
        return softhca_req_check_aw_flush(op);
    }
    if (w->flags & SHCA_WQE_INLINE) {
        if (w->inline_len > SOFTHCA_MAX_INLINE ||
            sizeof(*w) + w->inline_len > stride ||
            softhca_wr_is_read_atomic(w->opcode)) {
            return SHCA_CQE_LOC_QP_OP_ERR;
        }
        memcpy(op->sge, raw + sizeof(*w), w->inline_len);
        op->len = w->inline_len;
        return SHCA_CQE_SUCCESS;
    }
    if (w->num_sge > SOFTHCA_MAX_SGE ||
        sizeof(*w) + w->num_sge * sizeof(struct shca_sge) > stride) {
        return SHCA_CQE_LOC_QP_OP_ERR;
    }
    memcpy(op->sge, raw + sizeof(*w), w->num_sge * sizeof(struct shca_sge));
    for (unsigned i = 0; i < w->num_sge; i++) {
        op->sge[i].addr = le64_to_cpu(op->sge[i].addr);
        op->sge[i].length = le32_to_cpu(op->sge[i].length);
        op->sge[i].lkey = le32_to_cpu(op->sge[i].lkey);
        len += op->sge[i].length;
    }
    if (len > SOFTHCA_MAX_MSG_SIZE) {
        return SHCA_CQE_LOC_QP_OP_ERR;
    }
    if ((w->opcode == SHCA_WR_ATOMIC_CMP_SWP ||
         w->opcode == SHCA_WR_ATOMIC_FETCH_ADD) &&
        (w->num_sge != 1 || len != 8 || (w->remote_addr & 7))) {
        return SHCA_CQE_LOC_QP_OP_ERR;
    }
    op->len = len;
    return SHCA_CQE_SUCCESS;
}

/*
 * Take the next WQE from the SQ if FENCE and MAX_RD_ATOMIC allow it.
 * A WQE found bad is taken too, with its error kept for the completer.
 */
static bool softhca_req_start(SofthcaState *s, SofthcaQp *qp)
{
    SofthcaQpTransport *tp = &qp->tp;
    uint32_t stride = 1u << qp->sq.wqe_shift;
    SofthcaSendOp *op = softhca_req_op(qp, qp->sq.ci);
    uint8_t raw[SOFTHCA_WQE_MAX];
    struct shca_send_wqe *w = &op->wqe;
    bool rd_atomic, local = false;

    if (stride > sizeof(raw)) {
        return false;
    }
    memset(op, 0, tp->op_size);
    if (!softhca_wq_read(s, &qp->sq, qp->sq.ci, raw, stride)) {
        op->status = SHCA_CQE_LOC_QP_OP_ERR;
    } else {
        softhca_req_wqe_from_le(w, raw);
        rd_atomic = softhca_wr_takes_rd(w->opcode);
        if (((w->flags & SHCA_WQE_FENCE) && tp->rd_atomic) ||
            (rd_atomic && tp->rd_atomic >= MAX(qp->attr.max_rd_atomic, 1))) {
            return false;
        }
        local = w->opcode == SHCA_WR_REG_MR ||
                w->opcode == SHCA_WR_LOCAL_INV ||
                w->opcode == SHCA_WR_BIND_MW;
        /* REG_MR, LOCAL_INV, BIND_MW take effect here, in SQ order (§18) */
        op->status = local ? softhca_mr_local_op(s, qp, raw)
                           : softhca_req_check(qp, op, raw, stride);
    }
    op->first_psn = tp->sq_psn;
    if (op->status == SHCA_CQE_SUCCESS) {
        op->npkts = local ? 0 :
                    w->opcode == SHCA_WR_ATOMIC_CMP_SWP ||
                    w->opcode == SHCA_WR_ATOMIC_FETCH_ADD ||
                    softhca_wr_is_aw_flush(w->opcode) ? 1 :
                    softhca_msg_pkts(op->len, softhca_tp_mtu(qp));
        tp->sq_psn = softhca_psn_add(tp->sq_psn, op->npkts);
        tp->rd_atomic += rd_atomic;
    } else {
        qemu_log_mask(LOG_GUEST_ERROR, "softhca: QP %u: bad send WQE %u\n",
                      qp->qpn, qp->sq.ci);
    }
    trace_softhca_tp_wqe(qp->qpn, qp->sq.ci, w->opcode, op->len,
                         op->first_psn, op->npkts, op->status);
    tp->send_pkt = 0;
    qp->sq.ci++;
    return true;
}

/*
 * A taken WQE back in the form the guest wrote it, stride bytes at raw:
 * what the migration stream carries of it (spec §20).
 */
void softhca_req_op_to_le(const SofthcaQp *qp, const SofthcaSendOp *op,
                          uint8_t *raw, uint32_t stride)
{
    const struct shca_send_wqe *w = &op->wqe;
    struct shca_send_wqe le = *w;
    uint32_t room = MIN(stride - sizeof(*w),
                        qp->tp.op_size - offsetof(SofthcaSendOp, sge));
    uint8_t *tail = raw + sizeof(*w);

    memset(raw, 0, stride);
    le.wr_id = cpu_to_le64(w->wr_id);
    le.remote_addr = cpu_to_le64(w->remote_addr);
    le.rkey = cpu_to_le32(w->rkey);
    le.inline_len = cpu_to_le32(w->inline_len);
    le.compare_add = cpu_to_le64(w->compare_add);
    le.swap = cpu_to_le64(w->swap);
    memcpy(raw, &le, sizeof(le));
    if (w->flags & SHCA_WQE_INLINE) {
        memcpy(tail, op->sge, MIN(w->inline_len, room));
        return;
    }
    for (unsigned i = 0; i < w->num_sge &&
                         (i + 1) * sizeof(struct shca_sge) <= room; i++) {
        stq_le_p(tail + i * sizeof(struct shca_sge), op->sge[i].addr);
        stl_le_p(tail + i * sizeof(struct shca_sge) + 8, op->sge[i].length);
        stl_le_p(tail + i * sizeof(struct shca_sge) + 12, op->sge[i].lkey);
    }
}

/*
 * And from it, into op, whose first_psn, npkts, resp_pkts, status and done
 * the stream gave: false if they are not what the WQE makes of them.  A
 * WQE that failed, or that took effect when taken, is only completed.
 */
bool softhca_req_op_from_le(SofthcaQp *qp, SofthcaSendOp *op,
                            const uint8_t *raw, uint32_t stride)
{
    struct shca_send_wqe *w = &op->wqe;
    uint32_t npkts = op->npkts;

    softhca_req_wqe_from_le(w, raw);
    if (op->status != SHCA_CQE_SUCCESS || !npkts) {
        return op->status != SHCA_CQE_SUCCESS || !op->resp_pkts;
    }
    if (softhca_req_check(qp, op, raw, stride) != SHCA_CQE_SUCCESS) {
        return false;
    }
    return npkts == (w->opcode == SHCA_WR_ATOMIC_CMP_SWP ||
                     w->opcode == SHCA_WR_ATOMIC_FETCH_ADD ||
                     softhca_wr_is_aw_flush(w->opcode) ? 1 :
                     softhca_msg_pkts(op->len, softhca_tp_mtu(qp))) &&
           op->resp_pkts <= npkts;
}

/*
 * The payload of a packet of op, len bytes from off, for f: written to
 * f->payload, or left in guest memory for the port to gather.
 */
static bool softhca_req_payload(SofthcaState *s, SofthcaQp *qp,
                                const SofthcaSendOp *op, uint64_t off,
                                uint32_t len, SofthcaTxFrame *f)
{
    const struct shca_send_wqe *w = &op->wqe;

    if (w->opcode == SHCA_WR_ATOMIC_WRITE) {
        /* the 8 bytes as they lay in the WQE */
        stq_le_p(f->payload, w->compare_add);
        return true;
    }
    if (w->flags & SHCA_WQE_INLINE) {
        memcpy(f->payload, (uint8_t *)op->sge + off, len);
        return true;
    }
    return softhca_sge_gather(s, qp, op->sge, w->num_sge, off, len, f) ||
           softhca_sge_copy(s, qp, op->sge, w->num_sge, off, f->payload, len,
                            false) == SOFTHCA_MEM_OK;
}

/* Send packet tp->send_pkt of op; false if the WQE failed. */
static bool softhca_req_send_pkt(SofthcaState *s, SofthcaQp *qp,
                                 SofthcaSendOp *op)
{
    SofthcaQpTransport *tp = &qp->tp;
    const struct shca_send_wqe *w = &op->wqe;
    uint32_t mtu = softhca_tp_mtu(qp);
    uint32_t i = tp->send_pkt;
    uint32_t next = i + 1;
    uint64_t off = (uint64_t)i * mtu;
    bool first = i == 0, last = i + 1 >= op->npkts;
    uint8_t transport = softhca_tp_transport(qp);
    SofthcaRocePacket p = { 0 };
    SofthcaTxFrame f;
    uint32_t end;

    /* guest memory a payload leaves from stays mapped until it is sent */
    RCU_READ_LOCK_GUARD();
    softhca_resp_ack_flush(s, qp);
    tp->ack_ride = true;

    p.bth.psn = softhca_psn_add(op->first_psn, i);
    p.bth.opcode = softhca_req_opcode(w->opcode, first, last, transport);
    switch (w->opcode) {
    case SHCA_WR_RDMA_READ:
        /* the responses from this PSN on, to the end of its chunk */
        next = MIN(op->npkts, (i / SOFTHCA_READ_CHUNK + 1) *
                              SOFTHCA_READ_CHUNK);
        p.reth.va = w->remote_addr + off;
        p.reth.rkey = w->rkey;
        p.reth.dma_len = MIN((uint64_t)next * mtu, op->len) -
                         MIN(off, op->len);
        last = true;
        break;
    case SHCA_WR_ATOMIC_CMP_SWP:
    case SHCA_WR_ATOMIC_FETCH_ADD:
        p.atomic.va = w->remote_addr;
        p.atomic.rkey = w->rkey;
        p.atomic.swap_add = w->opcode == SHCA_WR_ATOMIC_CMP_SWP ?
                            w->swap : w->compare_add;
        p.atomic.compare = w->opcode == SHCA_WR_ATOMIC_CMP_SWP ?
                           w->compare_add : 0;
        break;
    case SHCA_WR_ATOMIC_WRITE:
        p.payload_len = 8;
        p.reth.va = w->remote_addr;
        p.reth.rkey = w->rkey;
        p.reth.dma_len = 8;
        break;
    case SHCA_WR_FLUSH:
        p.feth = w->feth;
        p.reth.va = w->remote_addr;
        p.reth.rkey = w->rkey;
        p.reth.dma_len = op->len;
        break;
    default:
        p.payload_len = MIN(mtu, op->len - off);
        if (first) {
            p.reth.va = w->remote_addr;
            p.reth.rkey = w->rkey;
            p.reth.dma_len = op->len;
        }
        if (last) {
            p.bth.solicited = !!(w->flags & SHCA_WQE_SOLICITED);
            p.imm = be32_to_cpu(w->imm);
            p.inv_rkey = le32_to_cpu(w->imm);
        }
        break;
    }
    /* XRC: every request names the SRQ at the target (spec §13.7) */
    p.xrc_srqn = le32_to_cpu(w->remote_qpn) & SOFTHCA_PSN_MASK;
    p.bth.ack_req = transport != SOFTHCA_TRANSPORT_UC &&
                    softhca_ack_req(last, tp->since_ack_req);
    /* the payload goes from guest memory into the frame, or to the port */
    if (!softhca_tp_frame(s, qp, &qp->attr.av, qp->attr.dest_qpn, &p, &f)) {
        op->status = SHCA_CQE_LOC_QP_OP_ERR;
        return false;
    }
    if (p.payload_len &&
        !softhca_req_payload(s, qp, op, off, p.payload_len, &f)) {
        op->status = SHCA_CQE_LOC_PROT_ERR;
        return false;
    }
    if (!softhca_tp_frame_send(s, qp, &p, &f)) {
        op->status = SHCA_CQE_LOC_QP_OP_ERR;
        return false;
    }
    tp->since_ack_req = p.bth.ack_req ? 0 : tp->since_ack_req + 1;
    tp->send_pkt = w->opcode == SHCA_WR_RDMA_READ ? next :
                   last ? op->npkts : next;
    /* a READ request asks for the responses to the end of its chunk */
    end = softhca_psn_add(op->first_psn, tp->send_pkt);
    if (softhca_psn_diff(end, tp->sent_psn) > 0) {
        tp->sent_psn = end;
    }
    return true;
}

static void softhca_req_work(SofthcaState *s, SofthcaQp *qp, uint32_t pkts,
                             bool doorbell);

/*
 * What an ACK or a timer lets the QP send now: what the callback's work
 * budget allows, and the scheduler sends the rest.  But nothing while
 * other QPs wait for their turn: this one joins them at the back, or the
 * QPs that ACKs come back to first would take every turn (spec §19.3).
 */
void softhca_req_run(SofthcaState *s, SofthcaQp *qp)
{
    softhca_req_work(s, qp, softhca_sched_idle(s) ? UINT32_MAX : 0, false);
}

void softhca_req_run_doorbell(SofthcaState *s, SofthcaQp *qp, uint32_t pkts)
{
    softhca_req_work(s, qp, pkts, true);
}

/* The work of sending a packet of op: its payload, at most the MTU. */
static uint32_t softhca_req_pkt_work(SofthcaQp *qp, const SofthcaSendOp *op)
{
    uint64_t payload = op->wqe.opcode == SHCA_WR_RDMA_READ ? 0 : op->len;

    return SOFTHCA_WORK_FRAME(MIN(payload, softhca_tp_mtu(qp)));
}

/*
 * The SQ record's POLLING (spec §14): set while an ACK, a timer or the
 * scheduler will run the requester again, which then reads the record's
 * pi.  A doorbell that finds the QP idle leaves it clear: a ping-pong then
 * costs no record writes, and a stream sets it from the scheduler.
 */
static void softhca_req_polling(SofthcaState *s, SofthcaQp *qp,
                                bool doorbell)
{
    SofthcaQpTransport *tp = &qp->tp;
    bool busy = tp->una_psn != tp->sq_psn ||
                softhca_sched_pending(qp, SOFTHCA_SCHED_REQ) || tp->rnr_wait;

    if (busy && doorbell && !qp->sq_polling) {
        return;
    }
    if (softhca_tp_sq_polling(s, qp, busy)) {
        /* WQEs posted as it went idle: stay busy for them */
        softhca_sched_qp(s, qp, SOFTHCA_SCHED_REQ);
        softhca_tp_sq_polling(s, qp, true);
    }
}

/*
 * Send packets while the callback's work budget lasts, and at most pkts.
 * doorbell: called by softhca_tp_sq_kick, on the vCPU that rang it.
 */
static void softhca_req_work(SofthcaState *s, SofthcaQp *qp, uint32_t pkts,
                             bool doorbell)
{
    SofthcaQpTransport *tp = &qp->tp;

    /* only QPs that send need their ring */
    if (!softhca_tp_sends(qp) || tp->rnr_wait || !softhca_tp_ops(qp)) {
        return;
    }
    for (;;) {
        SofthcaSendOp *op;

        if (tp->sq_send == qp->sq.ci &&
            (qp->state != SHCA_QPS_RTS ||
             (qp->sq.ci == qp->sq.pi && !softhca_tp_sq_record_poll(s, qp)) ||
             (uint16_t)(qp->sq.ci - tp->sq_comp) >= tp->nops ||
             !softhca_req_start(s, qp))) {
            break;
        }
        op = softhca_req_op(qp, tp->sq_send);
        if (op->status != SHCA_CQE_SUCCESS) {
            break;
        }
        if (!op->npkts) {
            /* REG_MR, LOCAL_INV: done when started, no packet */
            tp->sq_send++;
            continue;
        }
        /* UC has no ACKs to wait for: the budget alone paces it */
        if (qp->type != SHCA_QPT_UC &&
            softhca_psn_diff(softhca_psn_add(op->first_psn, tp->send_pkt),
                             tp->una_psn) >= SOFTHCA_REQ_WINDOW) {
            break;
        }
        if (op->wqe.opcode == SHCA_WR_RDMA_READ &&
            tp->send_pkt != op->resp_pkts) {
            break;      /* the next chunk waits for the responses */
        }
        /* a full loopback makes requests wait, not drop (spec §7.1) */
        if (!pkts-- || softhca_loopback_busy(s) ||
            !softhca_work_spend(s, softhca_req_pkt_work(qp, op))) {
            softhca_sched_qp(s, qp, SOFTHCA_SCHED_REQ);
            break;
        }
        if (!softhca_req_send_pkt(s, qp, op)) {
            break;
        }
        if (tp->send_pkt < op->npkts) {
            continue;
        }
        tp->sq_send++;
        tp->send_pkt = 0;
        if (qp->type == SHCA_QPT_UC) {
            /* no ACKs: a message is done once it is sent */
            tp->una_psn = softhca_psn_add(op->first_psn, op->npkts);
            softhca_comp_advance(s, qp,
                                 softhca_psn_add(tp->una_psn, -1));
            if (!softhca_tp_sends(qp)) {
                return;
            }
        }
    }
    /* A WQE that failed completes once those before it have. */
    softhca_comp_advance(s, qp, softhca_psn_add(tp->una_psn, -1));
    if (softhca_tp_sends(qp)) {
        softhca_comp_timer_update(s, qp);
    }
    if (qp->state == SHCA_QPS_RTS) {
        softhca_req_polling(s, qp, doorbell);
    }
}

void softhca_req_rewind(SofthcaState *s, SofthcaQp *qp, uint32_t psn)
{
    SofthcaQpTransport *tp = &qp->tp;

    for (uint16_t i = tp->sq_comp; i != qp->sq.ci; i++) {
        SofthcaSendOp *op = softhca_req_op(qp, i);
        int32_t d = softhca_psn_diff(psn, op->first_psn);

        if (op->status != SHCA_CQE_SUCCESS || d < 0 ||
            d < (int32_t)op->npkts) {
            tp->sq_send = i;
            tp->send_pkt = MAX(d, 0);
            return;
        }
    }
    tp->sq_send = qp->sq.ci;
    tp->send_pkt = 0;
}

static void softhca_req_flush_one(SofthcaState *s, SofthcaQp *qp,
                                  uint16_t index, uint64_t wr_id)
{
    struct shca_cqe cqe = {
        .wr_id = cpu_to_le64(wr_id),
        .wqe_index = cpu_to_le16(index & ((1u << qp->sq.log_size) - 1)),
        .status = SHCA_CQE_WR_FLUSH_ERR,
    };

    softhca_tp_cqe(s, qp, qp->send_cqn, &cqe, false);
}

/* The WQEs of the SQ, started or not, in order. */
bool softhca_req_flush(SofthcaState *s, SofthcaQp *qp)
{
    SofthcaQpTransport *tp = &qp->tp;
    struct shca_send_wqe w;

    for (; tp->ops && tp->sq_comp != qp->sq.ci; tp->sq_comp++) {
        if (!softhca_work_spend(s, SOFTHCA_WORK_FLUSH)) {
            return false;
        }
        softhca_req_flush_one(s, qp, tp->sq_comp,
                              softhca_req_op(qp, tp->sq_comp)->wqe.wr_id);
    }
    for (; qp->sq.ci != qp->sq.pi; qp->sq.ci++) {
        if (!softhca_work_spend(s, SOFTHCA_WORK_FLUSH)) {
            tp->sq_comp = qp->sq.ci;
            return false;
        }
        if (!softhca_wq_read(s, &qp->sq, qp->sq.ci, &w, sizeof(w))) {
            w.wr_id = 0;
        }
        softhca_req_flush_one(s, qp, qp->sq.ci, le64_to_cpu(w.wr_id));
    }
    tp->sq_comp = tp->sq_send = qp->sq.ci;
    tp->send_pkt = 0;
    tp->rd_atomic = 0;
    return true;
}

/* Sends past a callback's budget, or the rest of a flush (ERR). */
void softhca_req_run_quantum(SofthcaState *s, SofthcaQp *qp, uint32_t pkts)
{
    if (qp->state == SHCA_QPS_ERR) {
        softhca_tp_flush(s, qp);
    } else if (softhca_qp_is_ud(qp)) {
        softhca_ud_send_run(s, qp, pkts);
    } else {
        softhca_req_work(s, qp, pkts, false);
    }
}
