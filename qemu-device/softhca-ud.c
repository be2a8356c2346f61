/*
 * softhca: the datagram service (spec §17) -- UD and GSI QPs send each
 * send WQE as one packet to the address vector in the WQE, and deliver
 * each datagram received into one receive WQE, behind a GRH.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "softhca-tp.h"
#include "trace.h"

#define SOFTHCA_UD_WQE_MAX      (1u << 9)       /* largest SQ stride */
#define SOFTHCA_UD_OWN_QKEY     (1u << 31)      /* controlled Q_Key rule */
#define SOFTHCA_GRH_LEN         40
#define SOFTHCA_IPV4_HDR_LEN    20
#define SOFTHCA_ETH_HDR_LEN     14
#define SOFTHCA_MAD_LEN         256
#define SOFTHCA_MAD_BASE_VERSION 1
#define SOFTHCA_PKEY_FULL       0xffff
#define SOFTHCA_PKEY_LIMITED    0x7fff

/*
 * Check a UD send WQE (spec §15, §17.1) and send its packet;
 * SHCA_CQE_SUCCESS or the status to complete it with.  *w is the WQE's
 * header as read (little-endian), *len the message length.
 */
static uint8_t softhca_ud_send_one(SofthcaState *s, SofthcaQp *qp,
                                   struct shca_send_wqe *w, uint64_t *len)
{
    uint32_t stride = 1u << qp->sq.wqe_shift;
    size_t tail = sizeof(*w) + sizeof(struct shca_av);
    uint8_t raw[SOFTHCA_UD_WQE_MAX];
    struct shca_sge sge[SOFTHCA_MAX_SGE];
    struct shca_av av;
    SofthcaRocePacket p = { 0 };
    SofthcaTxFrame f;
    uint32_t dqpn, qkey;

    *len = 0;
    if (stride > sizeof(raw) ||
        !softhca_wq_read(s, &qp->sq, qp->sq.ci, raw, stride)) {
        return SHCA_CQE_LOC_QP_OP_ERR;
    }
    memcpy(w, raw, sizeof(*w));
    if ((w->opcode != SHCA_WR_SEND && w->opcode != SHCA_WR_SEND_IMM) ||
        stride < tail) {
        return SHCA_CQE_LOC_QP_OP_ERR;
    }
    memcpy(&av, raw + sizeof(*w), sizeof(av));
    softhca_av_from_le(&av, &av);
    dqpn = le32_to_cpu(w->remote_qpn);
    if (!softhca_av_ok(s, &av) || dqpn > SHCA_MCAST_QPN ||
        (softhca_gid_is_mcast(av.dgid) && dqpn != SHCA_MCAST_QPN)) {
        return SHCA_CQE_LOC_QP_OP_ERR;
    }
    if (w->flags & SHCA_WQE_INLINE) {
        *len = le32_to_cpu(w->inline_len);
        if (*len > SOFTHCA_MAX_INLINE || tail + *len > stride) {
            return SHCA_CQE_LOC_QP_OP_ERR;
        }
    } else {
        if (w->num_sge > SOFTHCA_MAX_SGE ||
            tail + w->num_sge * sizeof(sge[0]) > stride) {
            return SHCA_CQE_LOC_QP_OP_ERR;
        }
        memcpy(sge, raw + tail, w->num_sge * sizeof(sge[0]));
        for (unsigned i = 0; i < w->num_sge; i++) {
            sge[i].addr = le64_to_cpu(sge[i].addr);
            sge[i].length = le32_to_cpu(sge[i].length);
            sge[i].lkey = le32_to_cpu(sge[i].lkey);
            *len += sge[i].length;
        }
    }
    if (*len > softhca_port_mtu(s)) {
        return SHCA_CQE_LOC_LEN_ERR;
    }

    qkey = le32_to_cpu(w->remote_qkey);
    p.bth.opcode = SOFTHCA_TRANSPORT_UD |
                   (w->opcode == SHCA_WR_SEND_IMM ? SOFTHCA_OP_SEND_ONLY_IMM
                                                  : SOFTHCA_OP_SEND_ONLY);
    p.bth.solicited = !!(w->flags & SHCA_WQE_SOLICITED);
    p.bth.psn = qp->tp.sq_psn;
    p.deth.qkey = qkey & SOFTHCA_UD_OWN_QKEY ? qp->attr.qkey : qkey;
    p.deth.src_qpn = qp->qpn;           /* 1 for the GSI QP */
    p.imm = be32_to_cpu(w->imm);
    p.payload_len = *len;
    if (!softhca_tp_frame(s, qp, &av, dqpn, &p, &f)) {
        return SHCA_CQE_LOC_QP_OP_ERR;
    }
    /* the payload goes from guest memory into the frame straight */
    if (w->flags & SHCA_WQE_INLINE) {
        memcpy(f.payload, raw + tail, *len);
    } else if (softhca_sge_copy(s, qp, sge, w->num_sge, 0, f.payload, *len,
                                false) != SOFTHCA_MEM_OK) {
        return SHCA_CQE_LOC_PROT_ERR;
    }
    if (!softhca_tp_frame_send(s, qp, &p, &f)) {
        return SHCA_CQE_LOC_QP_OP_ERR;
    }
    qp->tp.sq_psn = softhca_psn_add(qp->tp.sq_psn, 1);
    return SHCA_CQE_SUCCESS;
}

/*
 * Send the WQEs posted to the SQ of a UD or GSI QP in RTS while the
 * callback's work budget has room for a datagram of the port's MTU, and
 * at most pkts; the scheduler sends the rest.  Each completes once its
 * packet has left (no ACKs); a bad one moves the QP to ERR, which flushes
 * those behind it.
 */
void softhca_ud_send_run(SofthcaState *s, SofthcaQp *qp, uint32_t pkts)
{
    uint32_t mtu = softhca_port_mtu(s);

    while (qp->state == SHCA_QPS_RTS && qp->sq.ci != qp->sq.pi) {
        struct shca_send_wqe w = { 0 };
        uint16_t index = qp->sq.ci;
        uint64_t len;
        uint8_t status;

        if (!pkts-- || !softhca_work_fits(s, SOFTHCA_WORK_FRAME(mtu))) {
            softhca_sched_qp(s, qp, SOFTHCA_SCHED_REQ);
            return;
        }
        status = softhca_ud_send_one(s, qp, &w, &len);
        softhca_work_spend(s, SOFTHCA_WORK_FRAME(MIN(len, mtu)));

        trace_softhca_tp_wqe(qp->qpn, index, w.opcode, len,
                             qp->tp.sq_psn, 1, status);
        qp->sq.ci++;
        qp->tp.sq_comp = qp->tp.sq_send = qp->sq.ci;
        if (status != SHCA_CQE_SUCCESS || (w.flags & SHCA_WQE_SIGNALED)) {
            struct shca_cqe cqe = {
                .wr_id = w.wr_id,
                .byte_len = cpu_to_le32(len),
                .wqe_index = cpu_to_le16(index &
                                         ((1u << qp->sq.log_size) - 1)),
                .status = status,
                .opcode = SHCA_CQE_OP_SEND,
            };

            softhca_tp_cqe(s, qp, qp->send_cqn, &cqe, false);
        }
        if (status != SHCA_CQE_SUCCESS) {
            qemu_log_mask(LOG_GUEST_ERROR, "softhca: QP %u: bad UD send WQE "
                          "%u: status %u\n", qp->qpn, index, status);
            softhca_tp_error(s, qp, 0);
        }
    }
}

/* The GRH of a received datagram: its IPv6 header, or IPv4 behind zeros. */
static void softhca_ud_grh(const uint8_t *frame, const SofthcaUdpFrame *u,
                           uint8_t *grh)
{
    const uint8_t *ip = frame + SOFTHCA_ETH_HDR_LEN;

    if (u->ipv6) {
        memcpy(grh, ip, SOFTHCA_GRH_LEN);
    } else {
        memset(grh, 0, SOFTHCA_GRH_LEN - SOFTHCA_IPV4_HDR_LEN);
        memcpy(grh + SOFTHCA_GRH_LEN - SOFTHCA_IPV4_HDR_LEN, ip,
               SOFTHCA_IPV4_HDR_LEN);
    }
}

/* Deliver a datagram to one QP (spec §17.2), or drop and count it. */
static void softhca_ud_deliver(SofthcaState *s, SofthcaQp *qp,
                               const uint8_t *frame, const SofthcaUdpFrame *u,
                               const SofthcaRocePacket *p,
                               const uint8_t *payload, size_t len)
{
    uint8_t grh[SOFTHCA_GRH_LEN];
    uint64_t need = SOFTHCA_GRH_LEN + p->payload_len;
    struct shca_cqe cqe = { .opcode = SHCA_CQE_OP_RECV };
    SofthcaRespResult r;

    if (!qp || !softhca_qp_is_ud(qp)) {
        softhca_tp_drop(s, SHCA_STAT_RX_DROPPED, len, "no such UD QP");
        return;
    }
    if (qp->state != SHCA_QPS_RTR && qp->state != SHCA_QPS_RTS) {
        softhca_tp_drop(s, SHCA_STAT_RX_DROPPED, len, "UD QP state");
        return;
    }
    if ((p->bth.pkey != SOFTHCA_PKEY_FULL &&
         p->bth.pkey != SOFTHCA_PKEY_LIMITED) ||
        p->deth.qkey != qp->attr.qkey) {
        softhca_tp_drop(s, SHCA_STAT_RX_BAD_QKEY, len, "P_Key or Q_Key");
        return;
    }
    if (qp->type == SHCA_QPT_GSI &&
        (p->payload_len != SOFTHCA_MAD_LEN ||
         payload[0] != SOFTHCA_MAD_BASE_VERSION)) {
        softhca_tp_drop(s, SHCA_STAT_RX_BAD_MAD, len, "not a MAD");
        return;
    }
    r = softhca_resp_take_recv(s, qp);
    if (r == SOFTHCA_RESP_RNR) {
        softhca_tp_drop(s, SHCA_STAT_RX_NO_RECV_WQE, len, "no receive WQE");
        return;
    }
    if (r == SOFTHCA_RESP_DONE && qp->tp.recv_len < need) {
        /*
         * Longer than the WQE's buffers: dropped as mlx5 drops it (issue
         * 25); the WQE, taken, waits for the next datagram.
         */
        softhca_tp_drop(s, SHCA_STAT_RX_DROPPED, len, "longer than the "
                        "receive WQE");
        return;
    }
    s->rdma_stats[SHCA_STAT_RX_PACKETS]++;
    if (r != SOFTHCA_RESP_DONE) {
        softhca_tp_error(s, qp, 0);     /* a bad receive WQE */
        return;
    }
    softhca_ud_grh(frame, u, grh);
    if (softhca_resp_recv_copy(s, qp, 0, grh, sizeof(grh)) !=
        SOFTHCA_MEM_OK ||
        softhca_resp_recv_copy(s, qp, sizeof(grh), payload,
                               p->payload_len) != SOFTHCA_MEM_OK) {
        cqe.status = SHCA_CQE_LOC_PROT_ERR;
        softhca_resp_recv_done(s, qp, &cqe, false);
        softhca_tp_error(s, qp, 0);     /* its own bad lkey */
        return;
    }
    cqe.byte_len = cpu_to_le32(need);
    cqe.src_qp = cpu_to_le32(p->deth.src_qpn);
    cqe.flags = SHCA_CQE_GRH | (u->ipv6 ? 0 : SHCA_CQE_IPV4);
    if (p->xh & SOFTHCA_XH_IMMDT) {
        cqe.flags |= SHCA_CQE_WITH_IMM;
        cqe.imm = cpu_to_be32(p->imm);
    }
    softhca_resp_recv_done(s, qp, &cqe, p->bth.solicited);
}

void softhca_ud_receive(SofthcaState *s, const uint8_t *frame,
                        const SofthcaUdpFrame *u, const SofthcaRocePacket *p,
                        const uint8_t *payload)
{
    size_t len = u->payload_off + u->payload_len;
    uint32_t qpns[SOFTHCA_MAX_MCAST_QP_ATTACH];
    uint32_t n;

    if (p->bth.dest_qpn != SHCA_MCAST_QPN) {
        softhca_ud_deliver(s, softhca_qp_get(s, p->bth.dest_qpn), frame, u,
                           p, payload, len);
        return;
    }
    /* multicast: to every QP of the destination address's group */
    n = softhca_gid_is_mcast(u->dst_gid) ?
        softhca_mcast_qps(s, u->dst_gid, qpns) : 0;
    if (!n) {
        softhca_tp_drop(s, SHCA_STAT_RX_DROPPED, len, "no multicast group");
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        softhca_ud_deliver(s, softhca_qp_get(s, qpns[i]), frame, u, p,
                           payload, len);
    }
}
