/*
 * softhca: a QP in the migration stream (spec §20): its queues and
 * attributes, and the transport state of §16 - PSNs, the send WQEs the
 * requester has taken and not completed, the responder's READ and atomic
 * slots, the receive WQE being filled and the WRITE being placed, and
 * when its timers expire.
 *
 * The requester's copies of its WQEs travel as the guest wrote them and
 * are checked again as the requester checked them when it took them;
 * every count and position that indexes host memory is checked against
 * what it indexes before the QP runs.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "migration/qemu-file-types.h"
#include "softhca-tp.h"
#include "softhca-migration.h"

static const VMStateDescription vmstate_softhca_sge = {
    .name = "softhca/sge",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64(addr, struct shca_sge),
        VMSTATE_UINT32(length, struct shca_sge),
        VMSTATE_UINT32(lkey, struct shca_sge),
        VMSTATE_END_OF_LIST()
    },
};

/* sent counts packets: the QP checks it against len at its path MTU. */
static int softhca_rd_post_load(void *opaque, int version_id)
{
    SofthcaRdAtomic *rd = opaque;

    return rd->len <= SOFTHCA_MAX_MSG_SIZE &&
           rd->req_len <= SOFTHCA_MAX_MSG_SIZE ? 0 : -EINVAL;
}

static const VMStateDescription vmstate_softhca_rd = {
    .name = "softhca/rd-atomic",
    .version_id = 1,
    .minimum_version_id = 1,
    .post_load = softhca_rd_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(valid, SofthcaRdAtomic),
        VMSTATE_BOOL(atomic, SofthcaRdAtomic),
        VMSTATE_BOOL(empty, SofthcaRdAtomic),
        VMSTATE_UINT32(first_psn, SofthcaRdAtomic),
        VMSTATE_UINT32(npkts, SofthcaRdAtomic),
        VMSTATE_UINT64(orig, SofthcaRdAtomic),
        VMSTATE_UINT32(req_rkey, SofthcaRdAtomic),
        VMSTATE_UINT64(req_va, SofthcaRdAtomic),
        VMSTATE_UINT64(req_len, SofthcaRdAtomic),
        VMSTATE_BOOL(pending, SofthcaRdAtomic),
        VMSTATE_UINT32(rkey, SofthcaRdAtomic),
        VMSTATE_UINT32(resume_psn, SofthcaRdAtomic),
        VMSTATE_UINT32(sent, SofthcaRdAtomic),
        VMSTATE_UINT64(va, SofthcaRdAtomic),
        VMSTATE_UINT64(len, SofthcaRdAtomic),
        VMSTATE_END_OF_LIST()
    },
};

/* --- the requester's WQEs ------------------------------------------------ */

/* The WQEs taken and not completed: sq_comp up to sq.ci. */
static uint16_t softhca_qp_ops_live(const SofthcaQp *qp)
{
    return qp->sq.ci - qp->tp.sq_comp;
}

static int softhca_ops_put(QEMUFile *f, void *pv, size_t size,
                           const VMStateField *field, JSONWriter *vmdesc)
{
    SofthcaQp *qp = container_of(pv, SofthcaQp, tp.ops);
    uint32_t stride = 1u << qp->sq.wqe_shift;
    uint16_t n = qp->tp.ops ? softhca_qp_ops_live(qp) : 0;
    uint8_t raw[1u << SOFTHCA_WQE_SHIFT_MAX];

    qemu_put_be16(f, n);
    for (uint16_t i = 0; i < n; i++) {
        const SofthcaSendOp *op = softhca_req_op(qp, qp->tp.sq_comp + i);

        qemu_put_be32(f, op->first_psn);
        qemu_put_be32(f, op->npkts);
        qemu_put_be32(f, op->resp_pkts);
        qemu_put_byte(f, op->status);
        qemu_put_byte(f, op->done);
        softhca_req_op_to_le(qp, op, raw, stride);
        qemu_put_buffer(f, raw, stride);
    }
    return 0;
}

/*
 * The SQ's geometry and the requester's counts came before, unchecked:
 * the ring of ops is sized from the former, and must hold what the latter
 * say it holds.
 */
static int softhca_ops_get(QEMUFile *f, void *pv, size_t size,
                           const VMStateField *field)
{
    SofthcaQp *qp = container_of(pv, SofthcaQp, tp.ops);
    uint32_t stride = 1u << MIN(qp->sq.wqe_shift, SOFTHCA_WQE_SHIFT_MAX);
    uint16_t n = qemu_get_be16(f);
    uint8_t raw[1u << SOFTHCA_WQE_SHIFT_MAX];

    if (!n) {
        return qemu_file_get_error(f);
    }
    if (qp->tp.ops || softhca_qp_is_ud(qp) ||
        !softhca_vmstate_wq_ok(&qp->sq, SOFTHCA_SQ_SHIFT_MIN, 0) ||
        n != softhca_qp_ops_live(qp) || !softhca_tp_ops(qp) ||
        n > qp->tp.nops) {
        error_report("softhca: QP %u: %u send WQEs taken", qp->qpn, n);
        return -EINVAL;
    }
    for (uint16_t i = 0; i < n; i++) {
        SofthcaSendOp *op = softhca_req_op(qp, qp->tp.sq_comp + i);

        op->first_psn = qemu_get_be32(f);
        op->npkts = qemu_get_be32(f);
        op->resp_pkts = qemu_get_be32(f);
        op->status = qemu_get_byte(f);
        op->done = qemu_get_byte(f);
        if (qemu_get_buffer(f, raw, stride) != stride ||
            !softhca_req_op_from_le(qp, op, raw, stride)) {
            error_report("softhca: QP %u: send WQE %u of %u taken",
                         qp->qpn, i, n);
            return -EINVAL;
        }
    }
    return qemu_file_get_error(f);
}

static const VMStateInfo softhca_vmstate_info_ops = {
    .name = "softhca-send-ops",
    .get = softhca_ops_get,
    .put = softhca_ops_put,
};

/* --- the QP -------------------------------------------------------------- */

/* Checked before the responder's slots are allocated. */
static bool softhca_qp_nrd_ok(void *opaque, int version_id)
{
    SofthcaQp *qp = opaque;

    return qp->tp.nrd <= SOFTHCA_MAX_QP_RD_ATOM;
}

static bool softhca_qp_queue_ok(const SofthcaWq *wq, uint8_t shift_min,
                                size_t record)
{
    static const SofthcaWq none;

    return wq->buf.npages ? softhca_vmstate_wq_ok(wq, shift_min, record)
                          : !memcmp(wq, &none, sizeof(none));
}

/*
 * What indexes host memory: the queues' geometry, the requester's place
 * among its WQEs and packets, the responder's receive WQE and slots.
 * What of it is out of bounds, or NULL.
 */
static const char *softhca_qp_transport_bad(SofthcaQp *qp)
{
    SofthcaQpTransport *tp = &qp->tp;
    uint16_t live = softhca_qp_ops_live(qp);
    uint16_t sending = tp->sq_send - tp->sq_comp;

    if (tp->sched & ~(SOFTHCA_SCHED_REQ | SOFTHCA_SCHED_RESP)) {
        return "scheduled work";
    }
    if (tp->recv_nsge > SOFTHCA_MAX_SGE || tp->recv_off > tp->recv_len) {
        return "receive WQE being filled";
    }
    if (tp->write_left > tp->write_len) {
        return "WRITE being placed";
    }
    if (tp->rd_atomic > SOFTHCA_MAX_QP_RD_ATOM ||
        (tp->nrd ? tp->rd_next >= tp->nrd : tp->rd_next != 0)) {
        return "READ and atomic slots";
    }
    /* a READ of 0 bytes has one response */
    for (uint32_t i = 0; i < tp->nrd; i++) {
        if (tp->rd[i].sent > softhca_msg_pkts(tp->rd[i].len,
                                              softhca_tp_mtu(qp))) {
            return "READ responses sent";
        }
    }
    if (sending > live) {
        return "send WQE being sent";
    }
    if (!tp->ops) {
        return live || tp->send_pkt ? "send WQEs without a ring" : NULL;
    }
    if (sending == live ? tp->send_pkt != 0 :
        tp->send_pkt > softhca_req_op(qp, tp->sq_send)->npkts) {
        return "packet of the send WQE being sent";
    }
    return NULL;
}

static int softhca_qp_post_load(void *opaque, int version_id)
{
    SofthcaQp *qp = opaque;
    const char *bad = NULL;

    if (!qp->valid || qp->type < SHCA_QPT_RC ||
        qp->type > SHCA_QPT_XRC_TGT || qp->state > SHCA_QPS_ERR ||
        qp->attr.state > SHCA_QPS_ERR) {
        bad = "type or state";
    } else if (!softhca_qp_queue_ok(&qp->sq, SOFTHCA_SQ_SHIFT_MIN,
                                    qp->sq_record ?
                                    sizeof(struct shca_sq_record) : 0)) {
        bad = "SQ";
    } else if (!softhca_qp_queue_ok(&qp->rq, SOFTHCA_RQ_SHIFT_MIN, 0)) {
        bad = "RQ";
    } else {
        bad = softhca_qp_transport_bad(qp);
    }
    if (bad) {
        error_report("softhca: QP %u: %s", qp->qpn, bad);
        return -EINVAL;
    }
    return 0;
}

const VMStateDescription vmstate_softhca_qp = {
    .name = "softhca/qp",
    .version_id = 1,
    .minimum_version_id = 1,
    .post_load = softhca_qp_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(valid, SofthcaQp),
        VMSTATE_UINT8(type, SofthcaQp),
        VMSTATE_UINT8(state, SofthcaQp),
        VMSTATE_UINT32(qpn, SofthcaQp),
        VMSTATE_UINT32(uctx, SofthcaQp),
        VMSTATE_UINT32(pdn, SofthcaQp),
        VMSTATE_UINT32(send_cqn, SofthcaQp),
        VMSTATE_UINT32(recv_cqn, SofthcaQp),
        VMSTATE_UINT32(srqn, SofthcaQp),
        VMSTATE_UINT32(xrcdn, SofthcaQp),
        VMSTATE_STRUCT(sq, SofthcaQp, 1, vmstate_softhca_wq, SofthcaWq),
        VMSTATE_STRUCT(rq, SofthcaQp, 1, vmstate_softhca_wq, SofthcaWq),
        VMSTATE_BOOL(sq_record, SofthcaQp),
        VMSTATE_BOOL(sq_polling, SofthcaQp),
        /* the attributes, in host byte order */
        VMSTATE_UINT8(attr.state, SofthcaQp),
        VMSTATE_UINT8(attr.path_mtu, SofthcaQp),
        VMSTATE_UINT8(attr.timeout, SofthcaQp),
        VMSTATE_UINT8(attr.retry_cnt, SofthcaQp),
        VMSTATE_UINT8(attr.rnr_retry, SofthcaQp),
        VMSTATE_UINT8(attr.min_rnr_timer, SofthcaQp),
        VMSTATE_UINT8(attr.max_rd_atomic, SofthcaQp),
        VMSTATE_UINT8(attr.max_dest_rd_atomic, SofthcaQp),
        VMSTATE_UINT32(attr.dest_qpn, SofthcaQp),
        VMSTATE_UINT32(attr.rq_psn, SofthcaQp),
        VMSTATE_UINT32(attr.sq_psn, SofthcaQp),
        VMSTATE_UINT32(attr.qkey, SofthcaQp),
        VMSTATE_UINT32(attr.access, SofthcaQp),
        VMSTATE_BUFFER(attr.av.dgid, SofthcaQp),
        VMSTATE_BUFFER(attr.av.dmac, SofthcaQp),
        VMSTATE_UINT8(attr.av.hop_limit, SofthcaQp),
        VMSTATE_UINT8(attr.av.traffic_class, SofthcaQp),
        VMSTATE_UINT32(attr.av.flow_label, SofthcaQp),
        VMSTATE_UINT16(attr.av.sgid_index, SofthcaQp),
        VMSTATE_UINT16(attr.av.udp_sport, SofthcaQp),
        /* the requester and completer */
        VMSTATE_UINT16(tp.ip_id, SofthcaQp),
        VMSTATE_UINT16(tp.sq_comp, SofthcaQp),
        VMSTATE_UINT16(tp.sq_send, SofthcaQp),
        VMSTATE_UINT32(tp.send_pkt, SofthcaQp),
        VMSTATE_UINT32(tp.sq_psn, SofthcaQp),
        VMSTATE_UINT32(tp.una_psn, SofthcaQp),
        VMSTATE_UINT32(tp.sent_psn, SofthcaQp),
        VMSTATE_UINT32(tp.since_ack_req, SofthcaQp),
        VMSTATE_UINT32(tp.rd_atomic, SofthcaQp),
        VMSTATE_BOOL(tp.sqd_notify, SofthcaQp),
        VMSTATE_UINT8(tp.retry_left, SofthcaQp),
        VMSTATE_UINT8(tp.rnr_left, SofthcaQp),
        VMSTATE_BOOL(tp.rnr_wait, SofthcaQp),
        VMSTATE_BOOL(tp.read_nak, SofthcaQp),
        VMSTATE_INT64(tp.retry_expiry, SofthcaQp),
        {
            .name = "tp.ops",
            .info = &softhca_vmstate_info_ops,
            .offset = offsetof(SofthcaQp, tp.ops),
        },
        /* the responder */
        VMSTATE_UINT32(tp.rq_psn, SofthcaQp),
        VMSTATE_UINT32(tp.msn, SofthcaQp),
        VMSTATE_UINT8(tp.prev_op, SofthcaQp),
        VMSTATE_BOOL(tp.nak_sent, SofthcaQp),
        VMSTATE_BOOL(tp.uc_drop, SofthcaQp),
        VMSTATE_BOOL(tp.have_recv, SofthcaQp),
        VMSTATE_UINT16(tp.recv_index, SofthcaQp),
        VMSTATE_UINT8(tp.recv_nsge, SofthcaQp),
        VMSTATE_UINT64(tp.recv_wr_id, SofthcaQp),
        VMSTATE_UINT64(tp.recv_off, SofthcaQp),
        VMSTATE_UINT64(tp.recv_len, SofthcaQp),
        VMSTATE_STRUCT_ARRAY(tp.recv_sge, SofthcaQp, SOFTHCA_MAX_SGE, 0,
                             vmstate_softhca_sge, struct shca_sge),
        VMSTATE_UINT64(tp.write_va, SofthcaQp),
        VMSTATE_UINT32(tp.write_rkey, SofthcaQp),
        VMSTATE_UINT64(tp.write_left, SofthcaQp),
        VMSTATE_UINT64(tp.write_len, SofthcaQp),
        VMSTATE_UINT32(tp.nrd, SofthcaQp),
        VMSTATE_VALIDATE("responder slots", softhca_qp_nrd_ok),
        {
            .name = "tp.rd",
            .vmsd = &vmstate_softhca_rd,
            .num_offset = offsetof(SofthcaQp, tp.nrd),
            .size = sizeof(SofthcaRdAtomic),
            .flags = VMS_STRUCT | VMS_VARRAY_UINT32 | VMS_POINTER | VMS_ALLOC,
            .offset = offsetof(SofthcaQp, tp.rd),
        },
        VMSTATE_UINT32(tp.rd_next, SofthcaQp),
        VMSTATE_BOOL(tp.ack_defer, SofthcaQp),
        VMSTATE_BOOL(tp.ack_delayed, SofthcaQp),
        VMSTATE_BOOL(tp.ack_ride, SofthcaQp),
        VMSTATE_INT64(tp.ack_expiry, SofthcaQp),
        VMSTATE_UINT32(tp.sched, SofthcaQp),
        VMSTATE_END_OF_LIST()
    },
};
