/*
 * softhca: the responder of the RoCEv2 transport (spec §16) -- executes
 * the requests of the peer in PSN order: SEND into receive WQEs, RDMA
 * WRITE, READ and atomics into and from memory regions; answers with
 * ACKs, NAKs, READ responses and atomic ACKs (RC) or nothing (UC).
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/rcu.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "softhca-atomic.h"
#include "softhca-tp.h"
#include "trace.h"

#define SOFTHCA_RECV_WQE_MAX    (1u << 11)      /* largest stride */

static void softhca_resp_ack(SofthcaState *s, SofthcaQp *qp,
                             uint8_t syndrome, uint32_t psn)
{
    SofthcaRocePacket a = {
        .bth.opcode = softhca_tp_transport(qp) | SOFTHCA_OP_ACKNOWLEDGE,
        .bth.psn = psn,
        .aeth.syndrome = syndrome,
        .aeth.msn = qp->tp.msn & SOFTHCA_PSN_MASK,
    };

    if ((syndrome & SOFTHCA_AETH_TYPE_MASK) != SOFTHCA_AETH_ACK) {
        trace_softhca_tp_nak(qp->qpn, syndrome, psn);
    }
    softhca_tp_send(s, qp, &a, NULL);
}

void softhca_resp_recv_done(SofthcaState *s, SofthcaQp *qp,
                            struct shca_cqe *cqe, bool solicited)
{
    SofthcaQpTransport *tp = &qp->tp;

    cqe->wr_id = cpu_to_le64(tp->recv_wr_id);
    cqe->wqe_index = cpu_to_le16(tp->recv_index &
                                 ((1u << softhca_qp_recv_wq(s, qp)->log_size) -
                                  1));
    tp->have_recv = false;
    softhca_tp_cqe(s, qp, qp->recv_cqn, cqe, solicited);
}

static void softhca_resp_recv_cqe(SofthcaState *s, SofthcaQp *qp,
                                  uint8_t status, uint8_t opcode,
                                  uint8_t flags, uint32_t imm,
                                  uint64_t byte_len, bool solicited)
{
    struct shca_cqe cqe = {
        .byte_len = cpu_to_le32(byte_len),
        .imm = imm,
        .status = status,
        .opcode = opcode,
        .flags = flags,
    };

    softhca_resp_recv_done(s, qp, &cqe, solicited);
}

SofthcaRespResult softhca_resp_take_recv(SofthcaState *s, SofthcaQp *qp)
{
    SofthcaQpTransport *tp = &qp->tp;
    SofthcaWq *rq = softhca_qp_recv_wq(s, qp);
    uint32_t stride = 1u << rq->wqe_shift;
    uint8_t raw[SOFTHCA_RECV_WQE_MAX];
    struct shca_recv_wqe w;
    bool ok;

    if (tp->have_recv) {
        return SOFTHCA_RESP_DONE;
    }
    if (rq->ci == rq->pi || stride > sizeof(raw)) {
        return SOFTHCA_RESP_RNR;
    }
    ok = softhca_wq_read(s, rq, rq->ci, raw, stride);
    memcpy(&w, raw, sizeof(w));
    tp->have_recv = true;
    tp->recv_index = rq->ci++;
    softhca_srq_taken(s, qp);
    tp->recv_wr_id = ok ? le64_to_cpu(w.wr_id) : 0;
    tp->recv_off = 0;
    if (!ok || w.num_sge > SOFTHCA_MAX_SGE ||
        sizeof(w) + w.num_sge * sizeof(struct shca_sge) > stride) {
        qemu_log_mask(LOG_GUEST_ERROR, "softhca: QP %u: bad recv WQE %u\n",
                      qp->qpn, tp->recv_index);
        softhca_resp_recv_cqe(s, qp, SHCA_CQE_LOC_QP_OP_ERR,
                              SHCA_CQE_OP_RECV, 0, 0, 0, false);
        return SOFTHCA_RESP_OP_ERR;
    }
    tp->recv_nsge = w.num_sge;
    tp->recv_len = 0;
    memcpy(tp->recv_sge, raw + sizeof(w), w.num_sge * sizeof(struct shca_sge));
    for (unsigned i = 0; i < w.num_sge; i++) {
        tp->recv_sge[i].addr = le64_to_cpu(tp->recv_sge[i].addr);
        tp->recv_sge[i].length = le32_to_cpu(tp->recv_sge[i].length);
        tp->recv_sge[i].lkey = le32_to_cpu(tp->recv_sge[i].lkey);
        tp->recv_len += tp->recv_sge[i].length;
    }
    return SOFTHCA_RESP_DONE;
}

SofthcaMemStatus softhca_resp_recv_copy(SofthcaState *s, SofthcaQp *qp,
                                        uint64_t off, const void *buf,
                                        uint64_t len)
{
    SofthcaQpTransport *tp = &qp->tp;
    uint32_t pdn = qp->pdn;
    SofthcaMemStatus st;

    /* softhca_mem_copy() checks keys against qp->pdn: the SRQ's here */
    qp->pdn = qp->srqn ? s->srqs[qp->srqn].pdn : pdn;
    st = softhca_sge_copy(s, qp, tp->recv_sge, tp->recv_nsge, off,
                          (void *)buf, len, true);
    qp->pdn = pdn;
    return st;
}

static SofthcaRespResult softhca_resp_send(SofthcaState *s, SofthcaQp *qp,
                                           const SofthcaRocePacket *p,
                                           const uint8_t *payload)
{
    SofthcaQpTransport *tp = &qp->tp;
    SofthcaRespResult r = softhca_resp_take_recv(s, qp);
    uint8_t flags = 0;
    uint32_t imm = 0;

    if (r != SOFTHCA_RESP_DONE) {
        return r;
    }
    /* the key to invalidate must be good before anything is written */
    if ((p->xh & SOFTHCA_XH_IETH) &&
        !softhca_remote_inv_target(s, qp, p->inv_rkey)) {
        return SOFTHCA_RESP_INVALID;
    }
    if (p->payload_len > tp->recv_len - tp->recv_off) {
        /* longer than the receive buffers */
        softhca_resp_recv_cqe(s, qp, SHCA_CQE_LOC_LEN_ERR, SHCA_CQE_OP_RECV,
                              0, 0, tp->recv_off, false);
        return SOFTHCA_RESP_INVALID;
    }
    if (softhca_resp_recv_copy(s, qp, tp->recv_off, payload,
                               p->payload_len) != SOFTHCA_MEM_OK) {
        softhca_resp_recv_cqe(s, qp, SHCA_CQE_LOC_PROT_ERR, SHCA_CQE_OP_RECV,
                              0, 0, tp->recv_off, false);
        return SOFTHCA_RESP_OP_ERR;
    }
    tp->recv_off += p->payload_len;
    if (!softhca_op_ends(p->bth.opcode)) {
        return SOFTHCA_RESP_DONE;
    }
    if (p->xh & SOFTHCA_XH_IMMDT) {
        flags = SHCA_CQE_WITH_IMM;
        imm = cpu_to_be32(p->imm);
    } else if (p->xh & SOFTHCA_XH_IETH) {
        softhca_key_invalidate(s, softhca_remote_inv_target(s, qp,
                                                            p->inv_rkey));
        flags = SHCA_CQE_WITH_INV;
        imm = cpu_to_le32(p->inv_rkey);
    }
    softhca_resp_recv_cqe(s, qp, SHCA_CQE_SUCCESS, SHCA_CQE_OP_RECV, flags,
                          imm, tp->recv_off, p->bth.solicited);
    return SOFTHCA_RESP_DONE;
}

static SofthcaRespResult softhca_resp_write(SofthcaState *s, SofthcaQp *qp,
                                            const SofthcaRocePacket *p,
                                            const uint8_t *payload)
{
    SofthcaQpTransport *tp = &qp->tp;
    uint32_t mtu = softhca_tp_mtu(qp);
    bool last = softhca_op_ends(p->bth.opcode);
    SofthcaMemStatus st;

    if (!(qp->attr.access & SHCA_ACCESS_REMOTE_WRITE)) {
        return SOFTHCA_RESP_INVALID;
    }
    if (p->xh & SOFTHCA_XH_RETH) {
        tp->write_va = p->reth.va;
        tp->write_rkey = p->reth.rkey;
        tp->write_left = p->reth.dma_len;
        tp->write_len = p->reth.dma_len;
    }
    if (last ? p->payload_len != tp->write_left
             : p->payload_len != mtu || tp->write_left <= mtu) {
        return SOFTHCA_RESP_INVALID;
    }
    /* WRITE with immediate consumes a receive WQE: none, nothing written */
    if (p->xh & SOFTHCA_XH_IMMDT) {
        SofthcaRespResult r = softhca_resp_take_recv(s, qp);

        if (r != SOFTHCA_RESP_DONE) {
            return r;
        }
    }
    if (p->payload_len) {
        st = softhca_mem_copy(s, qp, tp->write_rkey, tp->write_va,
                              (void *)payload, p->payload_len,
                              SHCA_ACCESS_REMOTE_WRITE, true);
        if (st != SOFTHCA_MEM_OK) {
            return SOFTHCA_RESP_ACCESS;
        }
    }
    tp->write_va += p->payload_len;
    tp->write_left -= p->payload_len;
    if (p->xh & SOFTHCA_XH_IMMDT) {
        softhca_resp_recv_cqe(s, qp, SHCA_CQE_SUCCESS,
                              SHCA_CQE_OP_RECV_RDMA_IMM, SHCA_CQE_WITH_IMM,
                              cpu_to_be32(p->imm), tp->write_len,
                              p->bth.solicited);
    }
    return SOFTHCA_RESP_DONE;
}

/* The READ/atomic slots: none on a QP that has none (UC). */
static uint32_t softhca_resp_rd_count(SofthcaQp *qp)
{
    return qp->tp.rd ? qp->tp.nrd : 0;
}

/* The j-th saved READ/atomic, oldest first. */
static SofthcaRdAtomic *softhca_resp_rd_at(SofthcaQp *qp, uint32_t j)
{
    uint32_t n = softhca_resp_rd_count(qp);

    return &qp->tp.rd[(qp->tp.rd_next + j) % n];
}

static SofthcaRdAtomic *softhca_resp_rd_save(SofthcaQp *qp)
{
    SofthcaQpTransport *tp = &qp->tp;
    uint32_t n = softhca_resp_rd_count(qp);
    SofthcaRdAtomic *rd = &tp->rd[tp->rd_next % n];

    tp->rd_next = (tp->rd_next + 1) % n;
    return rd;
}

/* The oldest READ/atomic with responses still to send, or NULL. */
static SofthcaRdAtomic *softhca_resp_rd_pending(SofthcaQp *qp)
{
    uint32_t n = softhca_resp_rd_count(qp);

    for (uint32_t j = 0; j < n; j++) {
        SofthcaRdAtomic *rd = softhca_resp_rd_at(qp, j);

        if (rd->valid && rd->pending) {
            return rd;
        }
    }
    return NULL;
}

static void softhca_resp_atomic_ack(SofthcaState *s, SofthcaQp *qp,
                                    uint32_t psn, uint64_t orig)
{
    SofthcaRocePacket a = {
        .bth.opcode = softhca_tp_transport(qp) |
                      SOFTHCA_OP_ATOMIC_ACKNOWLEDGE,
        .bth.psn = psn,
        .aeth.syndrome = SOFTHCA_AETH_ACK_UNLIMITED,
        .aeth.msn = qp->tp.msn & SOFTHCA_PSN_MASK,
        .atomic_ack = orig,
    };

    softhca_tp_send(s, qp, &a, NULL);
}

/* The next response of rd, but its payload. */
static void softhca_resp_read_packet(const SofthcaQp *qp,
                                     const SofthcaRdAtomic *rd,
                                     uint32_t npkts, SofthcaRocePacket *r)
{
    uint32_t mtu = softhca_tp_mtu(qp);
    uint32_t i = rd->sent;
    uint64_t off = (uint64_t)i * mtu;
    bool first = i == 0, last = i + 1 == npkts;

    *r = (SofthcaRocePacket) {
        .bth.opcode = softhca_tp_transport(qp) |
                      (first && last ? SOFTHCA_OP_READ_RESPONSE_ONLY :
                       first ? SOFTHCA_OP_READ_RESPONSE_FIRST :
                       last ? SOFTHCA_OP_READ_RESPONSE_LAST :
                       SOFTHCA_OP_READ_RESPONSE_MIDDLE),
        .bth.psn = softhca_psn_add(rd->resume_psn, i),
        .aeth.syndrome = SOFTHCA_AETH_ACK_UNLIMITED,
        .aeth.msn = qp->tp.msn & SOFTHCA_PSN_MASK,
        .payload_len = MIN(mtu, rd->len - off),
    };
}

/*
 * Send the next READ response of rd, its payload read from memory into
 * the frame; false if the memory cannot be read any more: the requester
 * then times out.
 */
static bool softhca_resp_read_next(SofthcaState *s, SofthcaQp *qp,
                                   SofthcaRdAtomic *rd, uint32_t npkts)
{
    uint64_t off = (uint64_t)rd->sent * softhca_tp_mtu(qp);
    SofthcaRocePacket r;
    SofthcaTxFrame f;

    /* guest memory the payload leaves from stays mapped until it is sent */
    RCU_READ_LOCK_GUARD();
    softhca_resp_read_packet(qp, rd, npkts, &r);
    if (softhca_tp_frame(s, qp, &qp->attr.av, qp->attr.dest_qpn, &r, &f)) {
        if (r.payload_len &&
            !softhca_mem_gather(s, qp, rd->rkey, rd->va + off, r.payload_len,
                                SHCA_ACCESS_REMOTE_READ, &f) &&
            softhca_mem_copy(s, qp, rd->rkey, rd->va + off, f.payload,
                             r.payload_len, SHCA_ACCESS_REMOTE_READ,
                             false) != SOFTHCA_MEM_OK) {
            return false;
        }
        softhca_tp_frame_send(s, qp, &r, &f);
    }
    rd->sent++;
    return true;
}

/*
 * Send the pending responses in order while the callback's work budget
 * lasts, and at most pkts; the scheduler sends the rest.  An ACK held
 * back behind them follows.
 */
static void softhca_resp_pump(SofthcaState *s, SofthcaQp *qp, uint32_t pkts)
{
    SofthcaQpTransport *tp = &qp->tp;
    uint32_t mtu = softhca_tp_mtu(qp);
    SofthcaRdAtomic *rd;

    while ((rd = softhca_resp_rd_pending(qp))) {
        uint32_t npkts = softhca_msg_pkts(rd->len, mtu);

        if (!pkts-- ||
            !softhca_work_spend(s, SOFTHCA_WORK_FRAME(rd->atomic ? 8 :
                                                      MIN(rd->len, mtu)))) {
            softhca_sched_qp(s, qp, SOFTHCA_SCHED_RESP);
            return;
        }
        if (rd->atomic) {
            softhca_resp_atomic_ack(s, qp, rd->first_psn, rd->orig);
            rd->pending = false;
        } else if (!softhca_resp_read_next(s, qp, rd, npkts) ||
                   rd->sent >= npkts) {
            rd->pending = false;        /* all sent, or memory went bad */
        }
    }
    if (tp->ack_defer) {
        tp->ack_defer = false;
        softhca_resp_ack(s, qp, SOFTHCA_AETH_ACK_UNLIMITED,
                         softhca_psn_add(tp->rq_psn, -1));
    }
}

void softhca_resp_run(SofthcaState *s, SofthcaQp *qp, uint32_t pkts)
{
    if (softhca_tp_answers(qp)) {
        softhca_resp_pump(s, qp, pkts);
    }
}

/* An ACK: now, or after the responses still to send. */
static void softhca_resp_ack_ordered(SofthcaState *s, SofthcaQp *qp,
                                     uint32_t psn)
{
    if (softhca_resp_rd_pending(qp)) {
        qp->tp.ack_defer = true;
    } else {
        softhca_resp_ack(s, qp, SOFTHCA_AETH_ACK_UNLIMITED, psn);
    }
}

/*
 * The ACK asked for by the request just executed.  While the QP sends
 * requests of its own, the ACK waits for the next of them and goes just
 * before it (the peer then takes both in one wake-up), or goes when
 * ack_timer runs out; then ACKs go at once until the QP sends again.
 */
static void softhca_resp_ack_request(SofthcaState *s, SofthcaQp *qp)
{
    SofthcaQpTransport *tp = &qp->tp;
    uint64_t timeout = softhca_ack_timeout_ns(qp->attr.timeout);
    uint64_t delay = timeout ? MIN(SHCA_ACK_DELAY_NS, timeout / 2)
                             : SHCA_ACK_DELAY_NS;

    if (!tp->ack_ride) {
        softhca_resp_ack_ordered(s, qp, softhca_psn_add(tp->rq_psn, -1));
        return;
    }
    tp->ack_delayed = true;
    if (!timer_pending(tp->ack_timer)) {
        timer_mod(tp->ack_timer,
                  qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + delay);
    }
}

/* Send the ACK held back, if any: a request of the QP is about to go. */
void softhca_resp_ack_flush(SofthcaState *s, SofthcaQp *qp)
{
    SofthcaQpTransport *tp = &qp->tp;

    if (tp->ack_delayed) {
        tp->ack_delayed = false;
        timer_del(tp->ack_timer);
        softhca_resp_ack_ordered(s, qp, softhca_psn_add(tp->rq_psn, -1));
    }
}

void softhca_resp_ack_timer_cb(void *opaque)
{
    SofthcaQp *qp = opaque;

    if (qp->valid && softhca_tp_answers(qp)) {
        qp->tp.ack_ride = false;
        softhca_resp_ack_flush(qp->tp.s, qp);
    }
}

static SofthcaRespResult softhca_resp_read(SofthcaState *s, SofthcaQp *qp,
                                           const SofthcaRocePacket *p)
{
    uint32_t mtu = softhca_tp_mtu(qp);
    SofthcaRdAtomic *rd;

    if (!qp->tp.rd || !(qp->attr.access & SHCA_ACCESS_REMOTE_READ) ||
        p->reth.dma_len > SOFTHCA_MAX_MSG_SIZE) {
        return SOFTHCA_RESP_INVALID;
    }
    /*
     * The whole range lies in the MR and the first response can be read,
     * or a NAK answers the request: a READ past the MR's end would stop
     * short and leave the requester to time out (issue 25).  Each byte is
     * read once, when its response is sent (issue 26).
     */
    if (p->reth.dma_len &&
        (softhca_mem_check(s, qp, p->reth.rkey, p->reth.va, p->reth.dma_len,
                           SHCA_ACCESS_REMOTE_READ, false) != SOFTHCA_MEM_OK ||
         softhca_mem_readable(s, qp, p->reth.rkey, p->reth.va,
                              MIN(mtu, p->reth.dma_len),
                              SHCA_ACCESS_REMOTE_READ) != SOFTHCA_MEM_OK)) {
        return SOFTHCA_RESP_ACCESS;
    }
    qp->tp.msn++;
    rd = softhca_resp_rd_save(qp);
    *rd = (SofthcaRdAtomic) {
        .valid = true,
        .first_psn = p->bth.psn,
        .npkts = softhca_msg_pkts(p->reth.dma_len, mtu),
        .pending = true,
        .rkey = p->reth.rkey,
        .resume_psn = p->bth.psn,
        .va = p->reth.va,
        .len = p->reth.dma_len,
        .req_rkey = p->reth.rkey,
        .req_va = p->reth.va,
        .req_len = p->reth.dma_len,
    };
    if (p->reth.dma_len && softhca_resp_rd_pending(qp) == rd &&
        softhca_work_spend(s, SOFTHCA_WORK_FRAME(MIN(mtu, rd->len)))) {
        rd->pending = softhca_resp_read_next(s, qp, rd, rd->npkts) &&
                      rd->sent < rd->npkts;
    }
    softhca_resp_pump(s, qp, UINT32_MAX);
    return SOFTHCA_RESP_ANSWERED;
}

static SofthcaRespResult softhca_resp_atomic(SofthcaState *s, SofthcaQp *qp,
                                             const SofthcaRocePacket *p)
{
    const SofthcaAtomicEth *a = &p->atomic;
    SofthcaRdAtomic *rd;
    uint64_t *word;
    uint64_t orig;
    bool written;

    if (!qp->tp.rd || !(qp->attr.access & SHCA_ACCESS_REMOTE_ATOMIC) ||
        (a->va & 7)) {
        return SOFTHCA_RESP_INVALID;
    }
    word = softhca_mem_map_word(s, qp, a->rkey, a->va,
                                SHCA_ACCESS_REMOTE_ATOMIC);
    if (!word) {
        return SOFTHCA_RESP_ACCESS;
    }
    if ((p->bth.opcode & ~SOFTHCA_TRANSPORT_MASK) == SOFTHCA_OP_COMPARE_SWAP) {
        orig = softhca_atomic_cmp_swap(word, a->compare, a->swap_add);
        written = orig == a->compare;
    } else {
        orig = softhca_atomic_fetch_add(word, a->swap_add);
        written = true;
    }
    softhca_dma_unmap_word(s, word, written);
    rd = softhca_resp_rd_save(qp);
    *rd = (SofthcaRdAtomic) {
        .valid = true,
        .atomic = true,
        .first_psn = p->bth.psn,
        .npkts = 1,
        .orig = orig,
        .pending = true,        /* answered after the READs before it */
    };
    qp->tp.msn++;
    softhca_resp_pump(s, qp, UINT32_MAX);
    return SOFTHCA_RESP_ANSWERED;
}

/* Keep an ATOMIC WRITE or FLUSH executed, and answer it (spec §16). */
static SofthcaRespResult softhca_resp_empty_answer(SofthcaState *s,
                                                   SofthcaQp *qp,
                                                   uint32_t psn)
{
    SofthcaRdAtomic *rd = softhca_resp_rd_save(qp);

    *rd = (SofthcaRdAtomic) {
        .valid = true,
        .empty = true,
        .first_psn = psn,
        .npkts = 1,
        .pending = true,
        .resume_psn = psn,
    };
    qp->tp.msn++;
    softhca_resp_pump(s, qp, UINT32_MAX);
    return SOFTHCA_RESP_ANSWERED;
}

/* RDMA ATOMIC WRITE: 8 aligned bytes, stored in one piece. */
static SofthcaRespResult softhca_resp_atomic_write(SofthcaState *s,
                                                   SofthcaQp *qp,
                                                   const SofthcaRocePacket *p,
                                                   const uint8_t *payload)
{
    uint64_t *word;

    if (!qp->tp.rd || !(qp->attr.access & SHCA_ACCESS_REMOTE_WRITE) ||
        p->reth.dma_len != sizeof(*word) ||
        p->payload_len != sizeof(*word) || (p->reth.va & 7)) {
        return SOFTHCA_RESP_INVALID;
    }
    word = softhca_mem_map_word(s, qp, p->reth.rkey, p->reth.va,
                                SHCA_ACCESS_REMOTE_WRITE);
    if (!word) {
        return SOFTHCA_RESP_ACCESS;
    }
    softhca_atomic_store(word, payload);
    softhca_dma_unmap_word(s, word, true);
    return softhca_resp_empty_answer(s, qp, p->bth.psn);
}

/*
 * FLUSH: the checks are all there is to do, for writes reach guest memory
 * as they execute; the device has no persistence domain, so no MR grants
 * FLUSH_PERSISTENT.
 */
static SofthcaRespResult softhca_resp_rdma_flush(SofthcaState *s,
                                                 SofthcaQp *qp,
                                                 const SofthcaRocePacket *p)
{
    uint32_t type = p->feth & SHCA_FLUSH_TYPE_MASK;
    uint32_t level = p->feth & SHCA_FLUSH_LEVEL_MASK;
    uint32_t access = (type & SHCA_FLUSH_GLOBAL ? SHCA_ACCESS_FLUSH_GLOBAL
                                                : 0) |
                      (type & SHCA_FLUSH_PERSISTENT ?
                       SHCA_ACCESS_FLUSH_PERSISTENT : 0);

    if (!qp->tp.rd || !type ||
        (type & ~(SHCA_FLUSH_GLOBAL | SHCA_FLUSH_PERSISTENT)) ||
        level > SHCA_FLUSH_LEVEL_MR ||
        (qp->attr.access & access) != access) {
        return SOFTHCA_RESP_INVALID;
    }
    if (softhca_mem_check(s, qp, p->reth.rkey, p->reth.va, p->reth.dma_len,
                          access, level == SHCA_FLUSH_LEVEL_MR) !=
        SOFTHCA_MEM_OK) {
        return SOFTHCA_RESP_ACCESS;
    }
    return softhca_resp_empty_answer(s, qp, p->bth.psn);
}

static SofthcaRespResult softhca_resp_execute(SofthcaState *s, SofthcaQp *qp,
                                              const SofthcaRocePacket *p,
                                              const uint8_t *payload)
{
    switch (p->bth.opcode & ~SOFTHCA_TRANSPORT_MASK) {
    case SOFTHCA_OP_RDMA_READ_REQUEST:
        return softhca_resp_read(s, qp, p);
    case SOFTHCA_OP_COMPARE_SWAP:
    case SOFTHCA_OP_FETCH_ADD:
        return softhca_resp_atomic(s, qp, p);
    case SOFTHCA_OP_ATOMIC_WRITE:
        return softhca_resp_atomic_write(s, qp, p, payload);
    case SOFTHCA_OP_FLUSH:
        return softhca_resp_rdma_flush(s, qp, p);
    }
    switch (softhca_op_kind(p->bth.opcode)) {
    case 's':
        return softhca_resp_send(s, qp, p, payload);
    case 'w':
        return softhca_resp_write(s, qp, p, payload);
    default:
        return SOFTHCA_RESP_INVALID;
    }
}

/*
 * Whether a duplicate READ, d packets into rd, asks again for part of what
 * the original named, on a QP that still grants REMOTE_READ (issue 11):
 * the same rkey, the address the original reached at that PSN, no byte
 * past its end.
 */
static bool softhca_resp_dup_read_ok(SofthcaQp *qp, const SofthcaRdAtomic *rd,
                                     const SofthcaRocePacket *p, uint32_t d)
{
    uint64_t off = (uint64_t)d * softhca_tp_mtu(qp);

    return (qp->attr.access & SHCA_ACCESS_REMOTE_READ) &&
           p->reth.rkey == rd->req_rkey &&
           p->reth.va == rd->req_va + off &&
           off <= rd->req_len && p->reth.dma_len <= rd->req_len - off &&
           d + softhca_msg_pkts(p->reth.dma_len,
                                softhca_tp_mtu(qp)) <= rd->npkts;
}

/* A request with a PSN before the expected one: answer, do not execute. */
static void softhca_resp_duplicate(SofthcaState *s, SofthcaQp *qp,
                                   const SofthcaRocePacket *p)
{
    SofthcaQpTransport *tp = &qp->tp;
    uint8_t op5 = p->bth.opcode & ~SOFTHCA_TRANSPORT_MASK;
    uint32_t psn = p->bth.psn;

    s->rdma_stats[SHCA_STAT_DUPLICATES]++;
    trace_softhca_tp_duplicate(qp->qpn, p->bth.opcode, psn, tp->rq_psn);
    for (uint32_t j = 0; j < softhca_resp_rd_count(qp); j++) {
        SofthcaRdAtomic *rd = softhca_resp_rd_at(qp, j);
        int32_t d = softhca_psn_diff(psn, rd->first_psn);

        if (!rd->valid || d < 0 || d >= (int32_t)rd->npkts) {
            continue;
        }
        if (rd->atomic && (op5 == SOFTHCA_OP_COMPARE_SWAP ||
                           op5 == SOFTHCA_OP_FETCH_ADD)) {
            if (!rd->pending) {
                softhca_resp_atomic_ack(s, qp, psn, rd->orig);
            }
        } else if (rd->empty && (op5 == SOFTHCA_OP_ATOMIC_WRITE ||
                                 op5 == SOFTHCA_OP_FLUSH)) {
            if (!rd->pending) {
                rd->pending = true;
                rd->sent = 0;
                softhca_resp_pump(s, qp, UINT32_MAX);
            }
        } else if (!rd->atomic && !rd->empty &&
                   op5 == SOFTHCA_OP_RDMA_READ_REQUEST) {
            if (!softhca_resp_dup_read_ok(qp, rd, p, d)) {
                qemu_log_mask(LOG_GUEST_ERROR, "softhca: QP %u: duplicate "
                              "READ at PSN 0x%x unlike the original\n",
                              qp->qpn, psn);
                return;
            }
            /*
             * Re-execute from where the requester asks (IBA 9.7.5.1.x):
             * it has the responses before, and sends the requests after
             * this one again, so what was still to send for them is
             * dropped.
             */
            for (uint32_t k = j + 1; k < softhca_resp_rd_count(qp); k++) {
                softhca_resp_rd_at(qp, k)->pending = false;
            }
            rd->pending = true;
            rd->rkey = p->reth.rkey;
            rd->resume_psn = psn;
            rd->sent = 0;
            rd->va = p->reth.va;
            rd->len = p->reth.dma_len;
            softhca_resp_pump(s, qp, UINT32_MAX);
        }
        return;
    }
    if (softhca_op_kind(p->bth.opcode)) {
        softhca_resp_ack_ordered(s, qp, softhca_psn_add(tp->rq_psn, -1));
    }
}

/*
 * A class C error (IBA 9.9.3.1.3): NAK, then the QP goes to ERR.  A
 * receive WQE the request took (a WRITE with immediate, a SEND under way)
 * completes with the error and only those after it are flushed (issue
 * 25): a bad key, range or right of a WRITE with immediate is the verbs'
 * LOC_ACCESS_ERR, as on mlx5; an operational error completed it already.
 */
static void softhca_resp_error(SofthcaState *s, SofthcaQp *qp,
                               SofthcaRespResult r, uint32_t psn)
{
    static const uint8_t syndrome[] = {
        [SOFTHCA_RESP_INVALID] = SOFTHCA_NAK_INVALID_REQ,
        [SOFTHCA_RESP_ACCESS] = SOFTHCA_NAK_REM_ACCESS,
        [SOFTHCA_RESP_OP_ERR] = SOFTHCA_NAK_REM_OP,
    };

    s->rdma_stats[SHCA_STAT_NAKS_SENT]++;
    softhca_resp_ack(s, qp, syndrome[r], psn);
    if (qp->tp.have_recv) {
        softhca_resp_recv_cqe(s, qp, r == SOFTHCA_RESP_ACCESS ?
                              SHCA_CQE_LOC_ACCESS_ERR :
                              SHCA_CQE_REM_INV_REQ_ERR, SHCA_CQE_OP_RECV,
                              0, 0, qp->tp.recv_off, false);
    }
    softhca_tp_error(s, qp, r == SOFTHCA_RESP_ACCESS ? SHCA_EQE_QP_ACCESS_ERR
                                                     : SHCA_EQE_QP_REQ_ERR);
}

/*
 * Point an XRC target QP at the SRQ, PD and CQ of the XRC SRQ a request
 * names (spec §13.7); false if it names none of the QP's domain.
 */
static bool softhca_xrc_target(SofthcaState *s, SofthcaQp *qp,
                               const SofthcaRocePacket *p)
{
    SofthcaSrq *srq = softhca_srq_get(s, p->xrc_srqn);

    if (!(p->xh & SOFTHCA_XH_XRCETH) || !srq || !srq->xrc ||
        srq->xrcdn != qp->xrcdn) {
        return false;
    }
    /* a message in progress keeps the SRQ its first packet named */
    if (!qp->tp.have_recv) {
        qp->srqn = srq->srqn;
        qp->recv_cqn = srq->cqn;
    }
    qp->pdn = srq->pdn;
    return true;
}

/*
 * UC: in-order packets execute; a gap drops the rest of its message and
 * the next message starts afresh.  Nothing is ever answered.
 */
static void softhca_resp_uc(SofthcaState *s, SofthcaQp *qp,
                            const SofthcaRocePacket *p,
                            const uint8_t *payload)
{
    SofthcaQpTransport *tp = &qp->tp;
    uint8_t op = p->bth.opcode;
    SofthcaRespResult r;

    if (p->bth.psn != tp->rq_psn || tp->uc_drop) {
        if (!softhca_op_starts(op)) {
            tp->uc_drop = true;
            tp->rq_psn = softhca_psn_add(p->bth.psn, 1);
            return;
        }
        /* a receive WQE partly filled is filled again by the next one */
        tp->recv_off = 0;
        tp->prev_op = SOFTHCA_OP_SEND_ONLY;
        tp->uc_drop = false;
    }
    tp->rq_psn = softhca_psn_add(p->bth.psn, 1);
    if (!softhca_op_follows(tp->prev_op, op & ~SOFTHCA_TRANSPORT_MASK)) {
        tp->uc_drop = true;
        return;
    }
    r = softhca_resp_execute(s, qp, p, payload);
    if (r == SOFTHCA_RESP_DONE) {
        tp->prev_op = op & ~SOFTHCA_TRANSPORT_MASK;
        if (softhca_op_ends(op)) {
            tp->msn++;
        }
    } else if (r == SOFTHCA_RESP_RNR || r == SOFTHCA_RESP_ACCESS) {
        tp->uc_drop = true;     /* the message is silently dropped */
    } else {
        softhca_tp_error(s, qp, SHCA_EQE_QP_REQ_ERR);
    }
}

void softhca_resp_receive(SofthcaState *s, SofthcaQp *qp,
                          const SofthcaRocePacket *p, const uint8_t *payload)
{
    SofthcaQpTransport *tp = &qp->tp;
    uint8_t op = p->bth.opcode & ~SOFTHCA_TRANSPORT_MASK;
    int32_t d;
    SofthcaRespResult r;

    if (qp->type == SHCA_QPT_UC) {
        softhca_resp_uc(s, qp, p, payload);
        return;
    }
    d = softhca_psn_diff(p->bth.psn, tp->rq_psn);
    if (d < 0) {
        softhca_resp_duplicate(s, qp, p);
        return;
    }
    if (d > 0) {
        /* packets were lost: one NAK until the sequence resumes */
        s->rdma_stats[SHCA_STAT_SEQ_ERRORS]++;
        if (!tp->nak_sent) {
            tp->nak_sent = true;
            s->rdma_stats[SHCA_STAT_NAKS_SENT]++;
            softhca_resp_ack(s, qp, SOFTHCA_NAK_PSN_SEQ, tp->rq_psn);
        }
        return;
    }
    tp->nak_sent = false;
    r = softhca_op_follows(tp->prev_op, op) &&
        (qp->type != SHCA_QPT_XRC_TGT || softhca_xrc_target(s, qp, p)) ?
        softhca_resp_execute(s, qp, p, payload) : SOFTHCA_RESP_INVALID;
    switch (r) {
    case SOFTHCA_RESP_DONE:
        tp->rq_psn = softhca_psn_add(tp->rq_psn, 1);
        tp->prev_op = op;
        if (softhca_op_ends(op)) {
            tp->msn++;
        }
        if (p->bth.ack_req || softhca_op_ends(op)) {
            softhca_resp_ack_request(s, qp);
        }
        break;
    case SOFTHCA_RESP_ANSWERED:
        tp->rq_psn = softhca_psn_add(tp->rq_psn,
                                     op == SOFTHCA_OP_RDMA_READ_REQUEST ?
                                     softhca_msg_pkts(p->reth.dma_len,
                                                      softhca_tp_mtu(qp)) :
                                     1);
        tp->prev_op = op;
        break;
    case SOFTHCA_RESP_RNR:
        s->rdma_stats[SHCA_STAT_RNR_NAKS_SENT]++;
        softhca_resp_ack(s, qp, SOFTHCA_AETH_RNR_NAK |
                         (qp->attr.min_rnr_timer & SOFTHCA_AETH_VALUE_MASK),
                         p->bth.psn);
        break;
    default:
        softhca_resp_error(s, qp, r, p->bth.psn);
        break;
    }
}

/* The receive WQEs, started or not, in order. */
bool softhca_resp_flush(SofthcaState *s, SofthcaQp *qp)
{
    SofthcaQpTransport *tp = &qp->tp;
    struct shca_recv_wqe w;

    softhca_sched_cancel(s, qp, SOFTHCA_SCHED_RESP);
    for (unsigned i = 0; i < softhca_resp_rd_count(qp); i++) {
        tp->rd[i].pending = false;
    }
    tp->ack_defer = false;
    tp->ack_delayed = false;
    timer_del(tp->ack_timer);
    if (tp->have_recv) {
        softhca_resp_recv_cqe(s, qp, SHCA_CQE_WR_FLUSH_ERR, SHCA_CQE_OP_RECV,
                              0, 0, 0, false);
    }
    for (; qp->rq.ci != qp->rq.pi; qp->rq.ci++) {
        if (!softhca_work_spend(s, SOFTHCA_WORK_FLUSH)) {
            return false;
        }
        if (!softhca_wq_read(s, &qp->rq, qp->rq.ci, &w, sizeof(w))) {
            w.wr_id = 0;
        }
        tp->recv_wr_id = le64_to_cpu(w.wr_id);
        tp->recv_index = qp->rq.ci;
        softhca_resp_recv_cqe(s, qp, SHCA_CQE_WR_FLUSH_ERR, SHCA_CQE_OP_RECV,
                              0, 0, 0, false);
    }
    return true;
}
