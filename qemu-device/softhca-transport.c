/*
 * softhca: the RoCEv2 transport engine (spec §16) -- the hooks the object
 * layer and the NIC call, receive dispatch, and the helpers the
 * requester, completer and responder share.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "softhca-tp.h"
#include "trace.h"

#define SOFTHCA_PKEY_DEFAULT    0xffff

uint8_t softhca_tp_transport(const SofthcaQp *qp)
{
    switch (qp->type) {
    case SHCA_QPT_UC:
        return SOFTHCA_TRANSPORT_UC;
    case SHCA_QPT_XRC_INI:
    case SHCA_QPT_XRC_TGT:
        return SOFTHCA_TRANSPORT_XRC;
    default:
        return SOFTHCA_TRANSPORT_RC;
    }
}

uint32_t softhca_tp_mtu(const SofthcaQp *qp)
{
    return softhca_mtu_bytes(qp->attr.path_mtu) ?: 256;
}

static bool softhca_tp_envelope(SofthcaState *s, SofthcaQp *qp,
                                const struct shca_av *av, uint32_t dest_qpn,
                                SofthcaRoceEnvelope *env)
{
    if (!softhca_av_ok(s, av)) {
        return false;
    }
    memcpy(env->dst_mac, av->dmac, 6);
    memcpy(env->src_mac, s->mac, 6);
    memcpy(env->src_gid, s->gids[av->sgid_index].raw, 16);
    memcpy(env->dst_gid, av->dgid, 16);
    env->src_port = av->udp_sport ?:
        softhca_roce_src_port(av->flow_label, qp->qpn, dest_qpn);
    env->traffic_class = av->traffic_class;
    env->hop_limit = av->hop_limit ?: 64;
    env->flow_label = av->flow_label;
    env->ip_id = qp->tp.ip_id++;
    return true;
}

static bool softhca_tp_unbuildable(const SofthcaQp *qp,
                                   const SofthcaRocePacket *p)
{
    qemu_log_mask(LOG_GUEST_ERROR,
                  "softhca: QP %u: cannot build opcode 0x%02x\n",
                  qp->qpn, p->bth.opcode);
    return false;
}

bool softhca_tp_frame(SofthcaState *s, SofthcaQp *qp,
                      const struct shca_av *av, uint32_t dest_qpn,
                      SofthcaRocePacket *p, SofthcaTxFrame *f)
{
    size_t off;

    p->bth.pkey = SOFTHCA_PKEY_DEFAULT;
    p->bth.dest_qpn = dest_qpn & SOFTHCA_PSN_MASK;
    if (!softhca_tp_envelope(s, qp, av, p->bth.dest_qpn, &f->env)) {
        qemu_log_mask(LOG_GUEST_ERROR, "softhca: QP %u: no source GID %u\n",
                      qp->qpn, av->sgid_index);
        return false;
    }
    off = softhca_roce_payload_off(&f->env, p->bth.opcode);
    /* the payload, its pad and the ICRC fit */
    if (!off || off + p->payload_len + 3 + SOFTHCA_ICRC_LEN >
                sizeof(f->buf)) {
        return softhca_tp_unbuildable(qp, p);
    }
    f->payload = f->buf + off;
    f->pieces = 0;
    return true;
}

/* f's headers and tail around the payload it leaves in guest memory */
static bool softhca_tp_frame_sendv(SofthcaState *s, SofthcaQp *qp,
                                   const SofthcaRocePacket *p,
                                   SofthcaTxFrame *f)
{
    size_t tail_len;
    size_t len = softhca_build_roce_gather(f->buf, sizeof(f->buf), &f->env, p,
                                           f->iov + 1, f->pieces, f->tail,
                                           &tail_len);

    if (!len) {
        return softhca_tp_unbuildable(qp, p);
    }
    f->iov[0] = (struct iovec) { .iov_base = f->buf, .iov_len = len };
    f->iov[f->pieces + 1] = (struct iovec) {
        .iov_base = f->tail, .iov_len = tail_len,
    };
    trace_softhca_tp_tx(qp->qpn, p->bth.dest_qpn, p->bth.opcode, p->bth.psn,
                        p->bth.ack_req, p->payload_len);
    trace_softhca_tp_tx_gather(qp->qpn, p->bth.psn, f->pieces);
    softhca_port_sendv(s, f->iov, f->pieces + 2);
    return true;
}

bool softhca_tp_frame_send(SofthcaState *s, SofthcaQp *qp,
                           const SofthcaRocePacket *p, SofthcaTxFrame *f)
{
    size_t len;

    if (f->pieces) {
        return softhca_tp_frame_sendv(s, qp, p, f);
    }
    len = softhca_build_roce(f->buf, sizeof(f->buf), &f->env, p, f->payload);

    if (!len) {
        return softhca_tp_unbuildable(qp, p);
    }
    if (s->rxe_flush_icrc &&
        p->bth.opcode == (SOFTHCA_TRANSPORT_RC | SOFTHCA_OP_FLUSH)) {
        softhca_icrc_set_rxe_flush(f->buf, len);
    }
    trace_softhca_tp_tx(qp->qpn, p->bth.dest_qpn, p->bth.opcode, p->bth.psn,
                        p->bth.ack_req, p->payload_len);
    softhca_port_send(s, f->buf, len);
    return true;
}

bool softhca_tp_send_av(SofthcaState *s, SofthcaQp *qp,
                        const struct shca_av *av, uint32_t dest_qpn,
                        SofthcaRocePacket *p, const void *payload)
{
    SofthcaTxFrame f;

    if (!softhca_tp_frame(s, qp, av, dest_qpn, p, &f)) {
        return false;
    }
    if (p->payload_len) {
        memcpy(f.payload, payload, p->payload_len);
    }
    return softhca_tp_frame_send(s, qp, p, &f);
}

bool softhca_tp_send(SofthcaState *s, SofthcaQp *qp, SofthcaRocePacket *p,
                     const void *payload)
{
    return softhca_tp_send_av(s, qp, &qp->attr.av, qp->attr.dest_qpn, p,
                              payload);
}

SofthcaMemStatus softhca_sge_copy(SofthcaState *s, SofthcaQp *qp,
                                  const struct shca_sge *sge, unsigned nsge,
                                  uint64_t off, void *buf, uint64_t len,
                                  bool to_guest)
{
    uint8_t *p = buf;

    for (unsigned i = 0; i < nsge && len; i++) {
        uint64_t n;
        SofthcaMemStatus st;

        if (off >= sge[i].length) {
            off -= sge[i].length;
            continue;
        }
        n = MIN(len, sge[i].length - off);
        st = softhca_mem_copy(s, qp, sge[i].lkey, sge[i].addr + off, p,
                              n, to_guest ? SHCA_ACCESS_LOCAL_WRITE : 0,
                              to_guest);
        if (st != SOFTHCA_MEM_OK) {
            return st;
        }
        p += n;
        len -= n;
        off = 0;
    }
    return len ? SOFTHCA_MEM_BAD_RANGE : SOFTHCA_MEM_OK;
}

static bool softhca_tp_gather(SofthcaState *s, SofthcaQp *qp, uint32_t key,
                              uint64_t addr, uint64_t len, uint32_t access,
                              SofthcaTxFrame *f)
{
    if (!softhca_mem_map_read(s, qp, key, addr, len, access, f->iov + 1,
                              &f->pieces, SOFTHCA_TX_PIECES)) {
        f->pieces = 0;
        return false;
    }
    return true;
}

/* Whether a payload of len bytes for f is worth leaving in pieces. */
static bool softhca_tp_gathers(SofthcaState *s, uint64_t len,
                               const SofthcaTxFrame *f)
{
    return len >= SOFTHCA_TX_GATHER_MIN &&
           softhca_port_takes_iov(s, f->env.dst_mac);
}

bool softhca_sge_gather(SofthcaState *s, SofthcaQp *qp,
                        const struct shca_sge *sge, unsigned nsge,
                        uint64_t off, uint64_t len, SofthcaTxFrame *f)
{
    f->pieces = 0;
    if (!softhca_tp_gathers(s, len, f)) {
        return false;
    }
    for (unsigned i = 0; i < nsge && len; i++) {
        uint64_t n;

        if (off >= sge[i].length) {
            off -= sge[i].length;
            continue;
        }
        n = MIN(len, sge[i].length - off);
        if (!softhca_tp_gather(s, qp, sge[i].lkey, sge[i].addr + off, n, 0,
                               f)) {
            return false;
        }
        len -= n;
        off = 0;
    }
    if (len) {
        f->pieces = 0;
    }
    return f->pieces > 0;
}

bool softhca_mem_gather(SofthcaState *s, SofthcaQp *qp, uint32_t key,
                        uint64_t addr, uint64_t len, uint32_t access,
                        SofthcaTxFrame *f)
{
    f->pieces = 0;
    return softhca_tp_gathers(s, len, f) &&
           softhca_tp_gather(s, qp, key, addr, len, access, f);
}

/*
 * Take count pi of wq as its doorbell; false if it runs past the ring.  A
 * count at or behind the one the device has is old news: a queued
 * doorbell that the SQ record overtook (spec §14).
 */
bool softhca_tp_wq_post(SofthcaState *s, SofthcaQp *qp, SofthcaWq *wq,
                        uint16_t pi)
{
    if ((int16_t)(pi - wq->pi) <= 0) {
        return true;
    }
    if ((uint16_t)(pi - wq->ci) > (1u << wq->log_size)) {
        qemu_log_mask(LOG_GUEST_ERROR, "softhca: QP %u %s count %u runs "
                      "past the ring (device at %u)\n", qp->qpn,
                      wq == &qp->sq ? "SQ" : "RQ", pi, wq->ci);
        softhca_tp_error(s, qp, SHCA_EQE_QP_FATAL);
        return false;
    }
    wq->pi = pi;
    return true;
}

static uint64_t softhca_sq_record_addr(const SofthcaQp *qp, size_t field)
{
    return softhca_buf_addr(&qp->sq.buf,
                            (1ull << (qp->sq.log_size + qp->sq.wqe_shift)) +
                            field);
}

bool softhca_tp_sq_record_poll(SofthcaState *s, SofthcaQp *qp)
{
    uint32_t pi;

    if (!qp->sq_record ||
        !softhca_dma_read(s, softhca_sq_record_addr(qp,
                          offsetof(struct shca_sq_record, pi)), &pi,
                          sizeof(pi))) {
        return false;
    }
    smp_rmb();      /* the WQEs up to pi after pi */
    pi = le32_to_cpu(pi);
    return (uint16_t)pi != qp->sq.pi && softhca_tp_wq_post(s, qp, &qp->sq, pi);
}

bool softhca_tp_sq_polling(SofthcaState *s, SofthcaQp *qp, bool busy)
{
    uint32_t word = cpu_to_le32(busy ? SHCA_SQ_RECORD_POLLING : 0);

    if (!qp->sq_record || busy == qp->sq_polling) {
        return false;
    }
    qp->sq_polling = busy;
    if (!softhca_dma_write(s, softhca_sq_record_addr(qp,
                           offsetof(struct shca_sq_record, device)), &word,
                           sizeof(word))) {
        qemu_log_mask(LOG_GUEST_ERROR, "softhca: QP %u: SQ record not "
                      "writable\n", qp->qpn);
    }
    if (busy) {
        return false;
    }
    /* Software writes pi, then reads POLLING: one of us sees the other. */
    smp_mb();
    return softhca_tp_sq_record_poll(s, qp);
}

void softhca_tp_last_wqe(SofthcaState *s, SofthcaQp *qp)
{
    if (qp->srqn) {
        softhca_eq_post(s, 0, SHCA_EQE_QP_LAST_WQE, qp->qpn, 0);
    }
}

void softhca_tp_error(SofthcaState *s, SofthcaQp *qp, uint8_t eqe_type)
{
    if (!qp->valid || qp->state == SHCA_QPS_ERR) {
        return;
    }
    trace_softhca_qp_error(qp->qpn, qp->state, eqe_type);
    qp->state = SHCA_QPS_ERR;
    qp->attr.state = SHCA_QPS_ERR;
    softhca_tp_flush(s, qp);
    if (eqe_type) {
        softhca_eq_post(s, 0, eqe_type, qp->qpn, 0);
    }
    softhca_tp_last_wqe(s, qp);
}

/*
 * A completion that finds its CQ overrun moves the QP to ERR (spec §13.1):
 * this QP at once, and every other QP completing to a CQ in error from
 * the bottom half, not from inside the push, whose flushes would push
 * again.  Flushes that overrun other CQs schedule it again, and each run
 * moves QPs to ERR for good, so it ends.
 */
static void softhca_tp_cq_error_bh(void *opaque)
{
    SofthcaState *s = opaque;

    if (!softhca_work_begin_bh(s)) {
        return;
    }
    for (uint32_t i = 0; i < SOFTHCA_QP_TABLE; i++) {
        SofthcaQp *qp = &s->qps[i];

        if (qp->valid && qp->state != SHCA_QPS_ERR &&
            (softhca_cq_in_error(s, qp->send_cqn) ||
             softhca_cq_in_error(s, qp->recv_cqn))) {
            softhca_tp_error(s, qp, SHCA_EQE_QP_FATAL);
        }
    }
    softhca_work_end(s);
}

void softhca_tp_cqe(SofthcaState *s, SofthcaQp *qp, uint32_t cqn,
                    struct shca_cqe *cqe, bool solicited)
{
    trace_softhca_tp_cqe(qp->qpn, cqn, le16_to_cpu(cqe->wqe_index),
                         cqe->opcode, cqe->status);
    cqe->qpn = cpu_to_le32(qp->qpn);
    if (!softhca_cq_push_se(s, cqn, cqe, solicited) &&
        softhca_cq_in_error(s, cqn)) {
        softhca_tp_error(s, qp, SHCA_EQE_QP_FATAL);
        qemu_bh_schedule(s->cq_error_bh);
    }
}

void softhca_tp_init(SofthcaState *s)
{
    softhca_fault_set_sink(s, SOFTHCA_FAULT_RX, softhca_tp_deliver);
    softhca_sched_init(s);
    s->cq_error_bh = softhca_bh_new(s, softhca_tp_cq_error_bh);
}

void softhca_tp_exit(SofthcaState *s)
{
    qemu_bh_delete(s->cq_error_bh);
    s->cq_error_bh = NULL;
    softhca_sched_exit(s);
}

/* --- hooks ---------------------------------------------------------------- */

/*
 * The requester's ring of started WQEs (spec §19): one entry per SQ slot
 * up to SOFTHCA_REQ_OPS_MAX, each with room for what follows the WQE in a
 * slot of the SQ's stride.  QPs without a requester of their own (UD and
 * GSI send from the SQ directly, an XRC target has no SQ) have none.
 */
static uint32_t softhca_tp_nops(const SofthcaQp *qp)
{
    if (softhca_qp_is_ud(qp) || !qp->sq.buf.npages) {
        return 0;
    }
    return MIN(1u << qp->sq.log_size, SOFTHCA_REQ_OPS_MAX);
}

/*
 * The bytes spec §13.2 reserves for an entry of the requester's ring (the
 * part before what follows the WQE) and of the responder's; the structs
 * may be smaller on some hosts, never larger.
 */
#define SOFTHCA_TP_OP_BYTES     88
#define SOFTHCA_TP_RD_BYTES     80
QEMU_BUILD_BUG_ON(sizeof(SofthcaSendOp) > SOFTHCA_TP_OP_BYTES);
QEMU_BUILD_BUG_ON(sizeof(SofthcaRdAtomic) > SOFTHCA_TP_RD_BYTES);

static uint32_t softhca_tp_op_size(const SofthcaQp *qp)
{
    uint32_t room = (1u << qp->sq.wqe_shift) - sizeof(struct shca_send_wqe);

    return SOFTHCA_TP_OP_BYTES +
           MIN(room, MAX(SOFTHCA_MAX_SGE * sizeof(struct shca_sge),
                         SOFTHCA_MAX_INLINE));
}

/*
 * The host memory of a QP's transport state, by its SQ and type, taken
 * from transport-mem (spec §19) into qp->tp.mem; false if it does not fit.
 */
static bool softhca_tp_reserve(SofthcaState *s, SofthcaQp *qp)
{
    uint64_t mem = (uint64_t)softhca_tp_nops(qp) * softhca_tp_op_size(qp);

    if (softhca_qp_is_rc(qp)) {
        mem += SOFTHCA_MAX_QP_RD_ATOM * SOFTHCA_TP_RD_BYTES;
    }
    if (mem > s->tp_mem_max - s->tp_mem) {
        return false;
    }
    s->tp_mem += mem;
    qp->tp.mem = mem;
    return true;
}

uint8_t softhca_tp_create(SofthcaState *s, SofthcaQp *qp)
{
    if (!softhca_tp_reserve(s, qp)) {
        qemu_log_mask(LOG_GUEST_ERROR, "softhca: QP %u: transport-mem "
                      "spent (%" PRIu64 " of %" PRIu64 " bytes)\n", qp->qpn,
                      s->tp_mem, s->tp_mem_max);
        return SHCA_AQ_NO_RESOURCES;
    }
    softhca_tp_reset(s, qp);
    return SHCA_AQ_OK;
}

/*
 * Before a save (spec §20): the expiry of the QP's timers on the VM clock,
 * or -1, into the fields the stream carries.
 */
void softhca_tp_save_timers(SofthcaQp *qp)
{
    SofthcaQpTransport *tp = &qp->tp;

    tp->retry_expiry = timer_expire_time_ns(tp->retry_timer);
    tp->ack_expiry = timer_expire_time_ns(tp->ack_timer);
}

/*
 * A QP the migration stream gave (spec §20), its fields checked: reserve
 * its transport memory as CREATE_QP did, give it its timers, armed as
 * they were, and its turn if it had work left; false if transport-mem
 * has no room for it.
 */
bool softhca_tp_loaded(SofthcaState *s, SofthcaQp *qp)
{
    SofthcaQpTransport *tp = &qp->tp;
    unsigned work = tp->sched;

    if (!softhca_tp_reserve(s, qp)) {
        return false;
    }
    tp->s = s;
    tp->retry_timer = softhca_timer_new(s, softhca_comp_timer_cb, qp);
    tp->ack_timer = softhca_timer_new(s, softhca_resp_ack_timer_cb, qp);
    if (tp->retry_expiry >= 0) {
        timer_mod_ns(tp->retry_timer, tp->retry_expiry);
    }
    if (tp->ack_expiry >= 0) {
        timer_mod_ns(tp->ack_timer, tp->ack_expiry);
    }
    tp->sched = 0;
    if (work) {
        softhca_sched_qp(s, qp, work);
    }
    return true;
}

void softhca_tp_reset(SofthcaState *s, SofthcaQp *qp)
{
    SofthcaQpTransport *tp = &qp->tp;

    if (tp->retry_timer) {
        timer_del(tp->retry_timer);
    } else {
        tp->retry_timer = softhca_timer_new(s, softhca_comp_timer_cb, qp);
    }
    if (tp->ack_timer) {
        timer_del(tp->ack_timer);
    } else {
        tp->ack_timer = softhca_timer_new(s, softhca_resp_ack_timer_cb, qp);
    }
    softhca_sched_cancel(s, qp, SOFTHCA_SCHED_REQ | SOFTHCA_SCHED_RESP);
    /* INIT -> RTR sizes it anew, from max_dest_rd_atomic */
    g_free(tp->rd);
    *tp = (SofthcaQpTransport) {
        .s = s,
        .mem = tp->mem,
        .ops = tp->ops,
        .nops = tp->nops,
        .op_size = tp->op_size,
        .retry_timer = tp->retry_timer,
        .ack_timer = tp->ack_timer,
        .prev_op = SOFTHCA_OP_SEND_ONLY,
    };
}

SofthcaSendOp *softhca_tp_ops(SofthcaQp *qp)
{
    SofthcaQpTransport *tp = &qp->tp;

    if (!tp->ops && softhca_tp_nops(qp)) {
        /* within what softhca_tp_create() reserved */
        tp->nops = softhca_tp_nops(qp);
        tp->op_size = softhca_tp_op_size(qp);
        tp->ops = g_malloc0((size_t)tp->nops * tp->op_size);
    }
    return tp->ops;
}

void softhca_tp_modified(SofthcaState *s, SofthcaQp *qp, uint8_t old_state,
                         uint32_t attr_mask)
{
    SofthcaQpTransport *tp = &qp->tp;

    if (attr_mask & SHCA_QP_ATTR_RQ_PSN) {
        tp->rq_psn = qp->attr.rq_psn & SOFTHCA_PSN_MASK;
    }
    if (softhca_qp_is_rc(qp) && old_state == SHCA_QPS_INIT &&
        qp->state == SHCA_QPS_RTR) {
        /* within what softhca_tp_create() reserved */
        tp->nrd = MAX(qp->attr.max_dest_rd_atomic, 1);
        tp->rd = g_new0(SofthcaRdAtomic, tp->nrd);
    }
    if (attr_mask & SHCA_QP_ATTR_SQ_PSN) {
        tp->sq_psn = qp->attr.sq_psn & SOFTHCA_PSN_MASK;
        tp->una_psn = tp->sent_psn = tp->sq_psn;
    }
    if (attr_mask & SHCA_QP_ATTR_RETRY_CNT) {
        tp->retry_left = qp->attr.retry_cnt;
    }
    if (attr_mask & SHCA_QP_ATTR_RNR_RETRY) {
        tp->rnr_left = qp->attr.rnr_retry;
    }
}

void softhca_tp_stop(SofthcaState *s, SofthcaQp *qp)
{
    if (softhca_tp_answers(qp)) {
        softhca_resp_ack_flush(s, qp);
    }
}

/* Started WQEs go on; none starts until RTS (spec §13.2). */
void softhca_tp_sqd(SofthcaState *s, SofthcaQp *qp, bool notify)
{
    qp->tp.sqd_notify = notify;
    softhca_comp_sqd_drained(s, qp);
}

bool softhca_tp_flush(SofthcaState *s, SofthcaQp *qp)
{
    softhca_tp_sq_polling(s, qp, false);
    timer_del(qp->tp.retry_timer);
    qp->tp.rnr_wait = false;
    if (softhca_req_flush(s, qp) && softhca_resp_flush(s, qp)) {
        return true;
    }
    softhca_sched_qp(s, qp, SOFTHCA_SCHED_REQ);
    return false;
}

void softhca_tp_destroy(SofthcaState *s, SofthcaQp *qp)
{
    if (qp->tp.retry_timer) {
        timer_free(qp->tp.retry_timer);
    }
    softhca_sched_cancel(s, qp, SOFTHCA_SCHED_REQ | SOFTHCA_SCHED_RESP);
    if (qp->tp.ack_timer) {
        timer_free(qp->tp.ack_timer);
    }
    g_free(qp->tp.ops);
    g_free(qp->tp.rd);
    s->tp_mem -= qp->tp.mem;
    qp->tp = (SofthcaQpTransport) { 0 };
}

void softhca_tp_sq_kick(SofthcaState *s, SofthcaQp *qp)
{
    if (qp->state == SHCA_QPS_ERR) {
        softhca_tp_flush(s, qp);
        return;
    }
    if (softhca_qp_is_ud(qp)) {
        softhca_ud_send_run(s, qp, UINT32_MAX);
    } else {
        bool idle = qp->tp.una_psn == qp->tp.sq_psn;

        softhca_req_run_doorbell(s, qp, idle ? SOFTHCA_DOORBELL_PKTS : 0);
    }
}

void softhca_tp_rq_kick(SofthcaState *s, SofthcaQp *qp)
{
    if (qp->state == SHCA_QPS_ERR) {
        softhca_tp_flush(s, qp);
    }
    /* Otherwise receive WQEs wait for the peer: it retries after RNR. */
}

void softhca_tp_drop(SofthcaState *s, unsigned stat, size_t len,
                     const char *why)
{
    s->rdma_stats[stat]++;
    trace_softhca_tp_rx_drop(len, why);
}

void softhca_tp_deliver(SofthcaState *s, const uint8_t *frame, size_t len,
                        const SofthcaUdpFrame *udp)
{
    SofthcaRocePacket p = { 0 };
    const uint8_t *bth;
    SofthcaQp *qp;
    uint8_t transport;

    if (udp->payload_len < SOFTHCA_BTH_LEN + SOFTHCA_ICRC_LEN) {
        softhca_tp_drop(s, SHCA_STAT_RX_DROPPED, len, "short");
        return;
    }
    bth = frame + udp->payload_off;
    if (!softhca_parse_roce(bth, udp->payload_len, &p)) {
        softhca_tp_drop(s, SHCA_STAT_RX_DROPPED, len, "malformed");
        return;
    }
    if (!softhca_icrc_check(frame, udp)) {
        softhca_tp_drop(s, SHCA_STAT_RX_DROPPED, len, "bad ICRC");
        return;
    }
    trace_softhca_tp_rx(p.bth.dest_qpn, p.bth.opcode, p.bth.psn,
                        p.bth.ack_req, p.payload_len);
    if ((p.bth.opcode & SOFTHCA_TRANSPORT_MASK) == SOFTHCA_TRANSPORT_UD) {
        softhca_ud_receive(s, frame, udp, &p, bth + p.payload_off);
        return;
    }
    if ((p.bth.pkey & 0x7fff) != (SOFTHCA_PKEY_DEFAULT & 0x7fff)) {
        softhca_tp_drop(s, SHCA_STAT_RX_DROPPED, len, "P_Key");
        return;
    }
    qp = softhca_qp_get(s, p.bth.dest_qpn);
    transport = p.bth.opcode & SOFTHCA_TRANSPORT_MASK;
    if (!qp || (!softhca_qp_is_rc(qp) && qp->type != SHCA_QPT_UC) ||
        transport != softhca_tp_transport(qp)) {
        softhca_tp_drop(s, SHCA_STAT_RX_DROPPED, len, "no such QP");
        return;
    }
    if (!softhca_tp_answers(qp)) {
        softhca_tp_drop(s, SHCA_STAT_RX_DROPPED, len, "QP state");
        return;
    }
    /* a connection takes packets from its peer only, as rxe does */
    if (memcmp(udp->src_gid, qp->attr.av.dgid, sizeof(udp->src_gid))) {
        softhca_tp_drop(s, SHCA_STAT_RX_DROPPED, len, "not from the peer");
        return;
    }
    s->rdma_stats[SHCA_STAT_RX_PACKETS]++;
    switch (p.bth.opcode & ~SOFTHCA_TRANSPORT_MASK) {
    case SOFTHCA_OP_READ_RESPONSE_FIRST:
    case SOFTHCA_OP_READ_RESPONSE_MIDDLE:
    case SOFTHCA_OP_READ_RESPONSE_LAST:
    case SOFTHCA_OP_READ_RESPONSE_ONLY:
    case SOFTHCA_OP_ACKNOWLEDGE:
    case SOFTHCA_OP_ATOMIC_ACKNOWLEDGE:
        if (qp->state == SHCA_QPS_RTR || qp->type == SHCA_QPT_XRC_TGT) {
            softhca_tp_drop(s, SHCA_STAT_RX_DROPPED, len, "response in RTR");
            return;
        }
        softhca_comp_receive(s, qp, &p, bth + p.payload_off);
        break;
    default:
        if (qp->type == SHCA_QPT_XRC_INI) {
            softhca_tp_drop(s, SHCA_STAT_RX_DROPPED, len, "request to XRC_INI");
            return;
        }
        softhca_resp_receive(s, qp, &p, bth + p.payload_off);
        break;
    }
}
