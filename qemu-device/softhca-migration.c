/*
 * softhca: the device's section of QEMU's migration stream (spec §20).
 *
 * Saving: the VM has stopped, so the engine has finished its callback and
 * its bottom halves and timers wait (spec §19).  The admin command in
 * progress is finished first, because a coroutine cannot move; everything
 * else is saved where it stands, the doorbell writes still queued and the
 * frames the device holds included.
 *
 * Loading: into a device just reset.  The stream is checked as a guest's
 * input is: each object's own fields where softhca-vmstate-*.c describe
 * them, and here what objects say of each other.  The counts derived from
 * the objects - what uses each PD, CQ, SRQ and MR, the page addresses and
 * transport memory held - are computed again, not read.  A stream that
 * fails a check is refused and leaves the device reset.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bitmap.h"
#include "qemu/coroutine.h"
#include "qemu/error-report.h"
#include "migration/qemu-file-types.h"
#include "hw/pci/msix.h"
#include "softhca-rdma.h"
#include "softhca-wire.h"
#include "softhca-migration.h"
#include "trace.h"

/* --- saving -------------------------------------------------------------- */

static void softhca_quiesce_engine(void *opaque)
{
    SofthcaState *s = opaque;

    /*
     * The command in progress, and those queued after it, run to their
     * end; their completions are signalled when the VM runs again.
     */
    while (s->admin_co) {
        softhca_work_begin(s);
        qemu_coroutine_enter(s->admin_co);
        softhca_work_end(s);
    }
    for (uint32_t i = 0; i < SOFTHCA_QP_TABLE; i++) {
        if (s->qps[i].valid) {
            softhca_tp_save_timers(&s->qps[i]);
        }
    }
}

static int softhca_pre_save(void *opaque)
{
    SofthcaState *s = opaque;

    softhca_engine_call(s, softhca_quiesce_engine, s);
    return 0;
}

/* --- loading: checks across objects -------------------------------------- */

static int softhca_refuse(SofthcaState *s, const char *what, uint32_t n)
{
    error_report("softhca: incoming state refused: %s %u", what, n);
    trace_softhca_migration_refused(what, n);
    return -EINVAL;
}

static int softhca_check_registers(SofthcaState *s)
{
    bool enabled = s->status & SHCA_STATUS_RDY;

    if (s->mtu < SOFTHCA_MIN_MTU || s->mtu > SOFTHCA_MAX_MTU) {
        return softhca_refuse(s, "MTU", s->mtu);
    }
    if (enabled && (s->aq.log_size < SHCA_RING_LOG_MIN ||
                    s->aq.log_size > SOFTHCA_MAX_AQ_LOG ||
                    s->acq.log_size < SHCA_RING_LOG_MIN ||
                    s->acq.log_size > SOFTHCA_MAX_AQ_LOG ||
                    s->aq.head > softhca_ring_mask(&s->aq) ||
                    s->aq.tail > softhca_ring_mask(&s->aq) ||
                    s->acq.head > softhca_ring_mask(&s->acq) ||
                    s->acq.tail > softhca_ring_mask(&s->acq))) {
        return softhca_refuse(s, "admin queue of log size", s->aq.log_size);
    }
    if (s->nic_ctrl & ~(SHCA_NIC_TX_EN | SHCA_NIC_RX_EN)) {
        return softhca_refuse(s, "NIC control", s->nic_ctrl);
    }
    for (int i = 0; i < 2; i++) {
        const SofthcaRing *r = i ? &s->nic_rx : &s->nic_tx;

        /* what a disabled ring holds is only registers, unchecked */
        if ((s->nic_ctrl & (i ? SHCA_NIC_RX_EN : SHCA_NIC_TX_EN)) &&
            (r->log_size < SHCA_RING_LOG_MIN ||
             r->log_size > SHCA_NIC_RING_LOG_MAX ||
             r->head > softhca_ring_mask(r) ||
             r->tail > softhca_ring_mask(r))) {
            return softhca_refuse(s, "NIC ring of log size", r->log_size);
        }
    }
    for (uint32_t i = 0; i < SOFTHCA_MAX_EQ; i++) {
        if (s->eqs[i].valid && (s->eqs[i].vector < SHCA_VEC_FIRST_EQ ||
                                s->eqs[i].vector >= s->vectors)) {
            return softhca_refuse(s, "EQ", i);
        }
    }
    for (uint32_t pdn = 0; pdn <= SOFTHCA_MAX_PD; pdn++) {
        if (!test_bit(pdn, s->pd_map)) {
            s->pd_uctx[pdn] = 0;    /* a free PD's keeps its last owner */
        } else if (pdn == 0 || !softhca_uctx_ok(s, s->pd_uctx[pdn])) {
            return softhca_refuse(s, "PD", pdn);
        }
    }
    if (test_bit(0, s->xrcd_map)) {
        return softhca_refuse(s, "XRC domain", 0);
    }
    return 0;
}

static int softhca_check_cqs(SofthcaState *s)
{
    for (uint32_t i = 0; i < SOFTHCA_MAX_CQ; i++) {
        SofthcaCq *cq = &s->cqs[i];

        if (cq->valid && (!softhca_uctx_ok(s, cq->uctx) ||
                          cq->eqn >= SOFTHCA_MAX_EQ ||
                          !s->eqs[cq->eqn].valid)) {
            return softhca_refuse(s, "CQ", i);
        }
    }
    return 0;
}

/* Windows after MRs: a window's MR is an MR, which counts it. */
static int softhca_check_mrs(SofthcaState *s)
{
    for (uint32_t i = 0; i < SOFTHCA_MR_TABLE; i++) {
        SofthcaMr *mr = &s->mrs[i];

        if (!mr->valid) {
            continue;
        }
        if (i == 0 || !softhca_pd_ok(s, mr->pdn)) {
            return softhca_refuse(s, "MR", i);
        }
        s->mr_pages += mr->fast_reg ? mr->max_pages : mr->pages.npages;
        if (s->mr_pages > SOFTHCA_MAX_MR_PAGES) {
            return softhca_refuse(s, "MR pages at MR", i);
        }
        softhca_pd_hold(s, mr->pdn);
    }
    for (uint32_t i = 1; i < SOFTHCA_MR_TABLE; i++) {
        SofthcaMr *mw = &s->mrs[i];

        if (!mw->valid || !mw->mw_type || !mw->mw_bound) {
            continue;
        }
        if (mw->mw_mr == 0 || mw->mw_mr >= SOFTHCA_MR_TABLE ||
            !s->mrs[mw->mw_mr].valid || s->mrs[mw->mw_mr].mw_type ||
            (mw->mw_type == 2 && !softhca_qp_get(s, mw->mw_qpn))) {
            return softhca_refuse(s, "memory window", i);
        }
        s->mrs[mw->mw_mr].mws_bound++;
    }
    return 0;
}

static int softhca_check_srqs(SofthcaState *s)
{
    for (uint32_t i = 1; i <= SOFTHCA_MAX_SRQ; i++) {
        SofthcaSrq *srq = &s->srqs[i];

        if (!srq->valid) {
            continue;
        }
        if (srq->srqn != i || !softhca_uctx_ok(s, srq->uctx) ||
            !softhca_pd_ok(s, srq->pdn) ||
            (srq->xrc && (!softhca_xrcd_ok(s, srq->xrcdn) ||
                          !softhca_cq_get(s, srq->cqn)))) {
            return softhca_refuse(s, "SRQ", i);
        }
        softhca_pd_hold(s, srq->pdn);
        if (srq->xrc) {
            s->cqs[srq->cqn].users++;
        }
    }
    return s->srqs[0].valid ? softhca_refuse(s, "SRQ", 0) : 0;
}

static bool softhca_loaded_qp_refs_ok(SofthcaState *s, SofthcaQp *qp)
{
    if (!softhca_uctx_ok(s, qp->uctx)) {
        return false;
    }
    if (qp->type == SHCA_QPT_XRC_TGT) {
        return softhca_xrcd_ok(s, qp->xrcdn);
    }
    return softhca_pd_ok(s, qp->pdn) &&
           softhca_cq_get(s, qp->send_cqn) &&
           softhca_cq_get(s, qp->recv_cqn) &&
           (!qp->srqn || softhca_srq_get(s, qp->srqn)) &&
           qp->attr.av.sgid_index < SOFTHCA_MAX_GID;
}

static int softhca_check_qps(SofthcaState *s)
{
    for (uint32_t i = 0; i < SOFTHCA_QP_TABLE; i++) {
        SofthcaQp *qp = &s->qps[i];

        if (!qp->valid) {
            continue;
        }
        if (qp->qpn != i || (i == SOFTHCA_QPN_GSI) !=
                            (qp->type == SHCA_QPT_GSI) || i == 0 ||
            !softhca_loaded_qp_refs_ok(s, qp)) {
            return softhca_refuse(s, "QP", i);
        }
        if (!softhca_tp_loaded(s, qp)) {
            return softhca_refuse(s, "transport-mem too small for QP", i);
        }
        if (qp->type == SHCA_QPT_XRC_TGT) {
            continue;       /* it holds no PD, CQ or SRQ (softhca-qp.c) */
        }
        softhca_pd_hold(s, qp->pdn);
        s->cqs[qp->send_cqn].users++;
        s->cqs[qp->recv_cqn].users++;
        if (qp->srqn) {
            s->srqs[qp->srqn].users++;
        }
    }
    return 0;
}

static int softhca_check_mcast(SofthcaState *s)
{
    for (uint32_t g = 0; g < SOFTHCA_MAX_MCAST_GRP; g++) {
        for (uint32_t i = 0; i < s->mcast[g].nqps; i++) {
            SofthcaQp *qp = softhca_qp_get(s, s->mcast[g].qpns[i]);

            if (!qp || qp->type != SHCA_QPT_UD) {
                return softhca_refuse(s, "multicast group", g);
            }
        }
    }
    return 0;
}

static int softhca_check_loaded(SofthcaState *s)
{
    return softhca_check_registers(s) ?: softhca_check_cqs(s) ?:
           softhca_check_mrs(s) ?: softhca_check_srqs(s) ?:
           softhca_check_qps(s) ?: softhca_check_mcast(s);
}

/* --- loading ------------------------------------------------------------- */

static void softhca_reset_engine(void *opaque)
{
    softhca_regs_reset(opaque);
}

static int softhca_pre_load(void *opaque)
{
    SofthcaState *s = opaque;

    softhca_engine_call(s, softhca_reset_engine, s);
    return 0;
}

static int softhca_body_post_load(void *opaque, int version_id)
{
    return softhca_check_loaded(opaque);
}

/*
 * A load that failed: what it allocated goes without the bookkeeping of a
 * reset, whose counts the half-loaded objects do not satisfy; then the
 * reset.  A QP the checks took in (softhca_tp_loaded) has its timers and
 * its turn, and goes as DESTROY_QP's would.
 */
static void softhca_discard_engine(void *opaque)
{
    SofthcaState *s = opaque;

    for (uint32_t i = 0; i < SOFTHCA_QP_TABLE; i++) {
        SofthcaQp *qp = &s->qps[i];

        if (qp->tp.s) {
            softhca_tp_destroy(s, qp);
        }
        g_free(qp->tp.ops);
        g_free(qp->tp.rd);
        softhca_buf_free(&qp->sq.buf);
        softhca_buf_free(&qp->rq.buf);
        *qp = (SofthcaQp) { 0 };
    }
    for (uint32_t i = 0; i <= SOFTHCA_MAX_SRQ; i++) {
        softhca_buf_free(&s->srqs[i].wq.buf);
        s->srqs[i] = (SofthcaSrq) { 0 };
    }
    for (uint32_t i = 0; i < SOFTHCA_MAX_CQ; i++) {
        softhca_buf_free(&s->cqs[i].buf);
        s->cqs[i] = (SofthcaCq) { 0 };
    }
    for (uint32_t i = 0; i < SOFTHCA_MR_TABLE; i++) {
        /* only what the load reached: the table's pages stay untouched */
        if (s->mrs[i].valid || s->mrs[i].tag || s->mrs[i].pages.pages) {
            softhca_buf_free(&s->mrs[i].pages);
            s->mrs[i] = (SofthcaMr) { 0 };
        }
    }
    memset(s->pd_users, 0, sizeof(s->pd_users));
    s->mr_pages = 0;
    softhca_regs_reset(s);
}

/* --- the section --------------------------------------------------------- */

static const VMStateDescription vmstate_softhca_body;

/*
 * Everything but the PCI function's state goes through here, so that a
 * load that fails anywhere in it is undone.
 */
static int softhca_body_get(QEMUFile *f, void *pv, size_t size,
                            const VMStateField *field)
{
    SofthcaState *s = pv;
    int ret = vmstate_load_state(f, &vmstate_softhca_body, s,
                                 vmstate_softhca_body.version_id, NULL);

    if (ret) {
        softhca_engine_call(s, softhca_discard_engine, s);
    }
    return ret;
}

static int softhca_body_put(QEMUFile *f, void *pv, size_t size,
                            const VMStateField *field, JSONWriter *vmdesc)
{
    return vmstate_save_state(f, &vmstate_softhca_body, pv, vmdesc, NULL);
}

static const VMStateInfo softhca_vmstate_info_body = {
    .name = "softhca-state",
    .get = softhca_body_get,
    .put = softhca_body_put,
};

/* --- optional state ------------------------------------------------------ */

static bool softhca_xrc_needed(void *opaque)
{
    SofthcaState *s = opaque;

    return !bitmap_empty(s->xrcd_map, SOFTHCA_MAX_XRCD + 1);
}

static const VMStateDescription vmstate_softhca_xrc = {
    .name = "softhca/state/xrc",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = softhca_xrc_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_BITMAP(xrcd_map, SofthcaState, 0, xrcd_bits),
        VMSTATE_END_OF_LIST()
    },
};

static bool softhca_mcast_needed(void *opaque)
{
    SofthcaState *s = opaque;

    for (uint32_t g = 0; g < SOFTHCA_MAX_MCAST_GRP; g++) {
        if (s->mcast[g].nqps) {
            return true;
        }
    }
    return false;
}

static const VMStateDescription vmstate_softhca_mcast = {
    .name = "softhca/state/mcast",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = softhca_mcast_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT_ARRAY(mcast, SofthcaState, SOFTHCA_MAX_MCAST_GRP, 0,
                             vmstate_softhca_mcast_group, SofthcaMcastGroup),
        VMSTATE_END_OF_LIST()
    },
};

/*
 * The doorbell writes queued on their pages (spec §14): each page that
 * holds some, its number, how many, and the writes in order.
 */
#define SOFTHCA_DB_PAGES_END    UINT32_MAX

static bool softhca_dbq_holds(const SofthcaDbq *q)
{
    return q->head != q->tail;
}

static int softhca_dbqs_put(QEMUFile *f, void *pv, size_t size,
                            const VMStateField *field, JSONWriter *vmdesc)
{
    SofthcaState *s = container_of(pv, SofthcaState, dbq);

    for (uint32_t page = 0; page < s->db_pages; page++) {
        SofthcaDbq *q = &s->dbq[page];

        if (!softhca_dbq_holds(q)) {
            continue;
        }
        qemu_put_be32(f, page);
        qemu_put_be32(f, q->tail - q->head);
        for (uint32_t pos = q->head; pos != q->tail; pos++) {
            qemu_put_be64(f, q->cells[pos & (SOFTHCA_DBQ_SIZE - 1)].write);
        }
    }
    qemu_put_be32(f, SOFTHCA_DB_PAGES_END);
    return 0;
}

static int softhca_dbqs_get(QEMUFile *f, void *pv, size_t size,
                            const VMStateField *field)
{
    SofthcaState *s = container_of(pv, SofthcaState, dbq);

    for (;;) {
        uint32_t page = qemu_get_be32(f), n;

        if (page == SOFTHCA_DB_PAGES_END) {
            return qemu_file_get_error(f);
        }
        n = qemu_get_be32(f);
        if (page >= s->db_pages || softhca_dbq_holds(&s->dbq[page]) ||
            n == 0 || n > SOFTHCA_DBQ_SIZE) {
            return -EINVAL;
        }
        while (n--) {
            softhca_dbq_push(&s->dbq[page], qemu_get_be64(f));
        }
        set_bit(page, s->db_pending);
    }
}

static const VMStateInfo softhca_vmstate_info_dbqs = {
    .name = "softhca-doorbell-queues",
    .get = softhca_dbqs_get,
    .put = softhca_dbqs_put,
};

static bool softhca_doorbells_needed(void *opaque)
{
    SofthcaState *s = opaque;

    for (uint32_t page = 0; page < s->db_pages; page++) {
        if (softhca_dbq_holds(&s->dbq[page])) {
            return true;
        }
    }
    return false;
}

static const VMStateDescription vmstate_softhca_doorbells = {
    .name = "softhca/state/doorbells",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = softhca_doorbells_needed,
    .fields = (const VMStateField[]) {
        {
            .name = "dbq",
            .info = &softhca_vmstate_info_dbqs,
            .offset = offsetof(SofthcaState, dbq),
        },
        VMSTATE_END_OF_LIST()
    },
};

static bool softhca_loopback_needed(void *opaque)
{
    SofthcaState *s = opaque;

    return s->loopback.count;
}

static const VMStateDescription vmstate_softhca_loopback = {
    .name = "softhca/state/loopback",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = softhca_loopback_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_SOFTHCA_FRAMES(loopback.frames, SofthcaState, loopback.count),
        VMSTATE_END_OF_LIST()
    },
};

/* With an iothread: what waits to cross to and from the main loop. */
static bool softhca_crossing_needed(void *opaque)
{
    SofthcaState *s = opaque;

    return s->x.inbox_count || s->x.outbox_count || s->x.irqs;
}

static int softhca_crossing_post_load(void *opaque, int version_id)
{
    SofthcaState *s = opaque;

    /* the boxes' capacities are the iothread's (softhca-iothread.c) */
    return s->iothread && s->x.irqs < (1ull << s->vectors) ? 0 : -EINVAL;
}

static const VMStateDescription vmstate_softhca_crossing = {
    .name = "softhca/state/crossing",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = softhca_crossing_needed,
    .post_load = softhca_crossing_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_SOFTHCA_FRAMES(x.inbox, SofthcaState, x.inbox_count),
        VMSTATE_SOFTHCA_FRAMES(x.outbox, SofthcaState, x.outbox_count),
        VMSTATE_UINT64(x.irqs, SofthcaState),
        VMSTATE_END_OF_LIST()
    },
};

/* Fault injection (spec §12): the generators and the frames held back. */
static bool softhca_fault_held_ok(void *opaque, int version_id)
{
    SofthcaFaultPath *p = opaque;

    return p->held_len <= SHCA_NIC_FRAME_MAX;
}

static int softhca_fault_path_post_load(void *opaque, int version_id)
{
    SofthcaFaultPath *p = opaque;
    SofthcaUdpFrame udp;

    if (!p->held) {
        return p->held_copies ? -EINVAL : 0;
    }
    if (p->held_copies < 1 || p->held_copies > 2) {
        return -EINVAL;
    }
    /* a frame received was held with the envelope the port parsed */
    if (p->dir == SOFTHCA_FAULT_RX) {
        if (!softhca_parse_udp(p->held, p->held_len, &udp)) {
            return -EINVAL;
        }
        p->held_udp = g_memdup2(&udp, sizeof(udp));
    }
    return 0;
}

static const VMStateDescription vmstate_softhca_fault_path = {
    .name = "softhca/fault-path",
    .version_id = 1,
    .minimum_version_id = 1,
    .post_load = softhca_fault_path_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64(rng, SofthcaFaultPath),
        VMSTATE_UINT32(held_len, SofthcaFaultPath),
        VMSTATE_VALIDATE("held frame size", softhca_fault_held_ok),
        VMSTATE_VBUFFER_ALLOC_UINT32(held, SofthcaFaultPath, 0, NULL,
                                     held_len),
        VMSTATE_UINT32(held_copies, SofthcaFaultPath),
        VMSTATE_TIMER_PTR(timer, SofthcaFaultPath),
        VMSTATE_END_OF_LIST()
    },
};

static bool softhca_fault_needed(void *opaque)
{
    SofthcaState *s = opaque;

    return !softhca_fault_idle(s, SOFTHCA_FAULT_TX) ||
           !softhca_fault_idle(s, SOFTHCA_FAULT_RX);
}

static const VMStateDescription vmstate_softhca_fault = {
    .name = "softhca/state/fault",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = softhca_fault_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT_ARRAY(fault.path, SofthcaState, SOFTHCA_FAULT_DIRS, 0,
                             vmstate_softhca_fault_path, SofthcaFaultPath),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_softhca_body = {
    .name = "softhca/state",
    .version_id = 1,
    .minimum_version_id = 1,
    .post_load = softhca_body_post_load,
    .fields = (const VMStateField[]) {
        /* what must match: the properties that size the state below */
        VMSTATE_UINT32_EQUAL(vectors, SofthcaState, "the vectors property"),
        VMSTATE_UINT32_EQUAL(db_pages, SofthcaState,
                             "the db-pages property"),
        /* registers and the admin queue (spec §3) */
        VMSTATE_UINT32(ctrl, SofthcaState),
        VMSTATE_UINT32(status, SofthcaState),
        VMSTATE_UINT32(fatal_code, SofthcaState),
        VMSTATE_UINT64(aq_base_reg, SofthcaState),
        VMSTATE_UINT64(acq_base_reg, SofthcaState),
        VMSTATE_UINT32(aq_log_reg, SofthcaState),
        VMSTATE_UINT32(acq_log_reg, SofthcaState),
        VMSTATE_STRUCT(aq, SofthcaState, 1, vmstate_softhca_ring, SofthcaRing),
        VMSTATE_STRUCT(acq, SofthcaState, 1, vmstate_softhca_ring,
                       SofthcaRing),
        VMSTATE_BOOL(acq_phase, SofthcaState),
        VMSTATE_BOOL(admin_posted, SofthcaState),
        /* the port and the NIC function (spec §3.4, §6) */
        VMSTATE_BUFFER(mac, SofthcaState),
        VMSTATE_UINT32(mtu, SofthcaState),
        VMSTATE_STRUCT_ARRAY(gids, SofthcaState, SOFTHCA_MAX_GID, 0,
                             vmstate_softhca_gid, SofthcaGid),
        VMSTATE_UINT32(nic_ctrl, SofthcaState),
        VMSTATE_UINT32(nic_irq, SofthcaState),
        VMSTATE_STRUCT(nic_tx, SofthcaState, 1, vmstate_softhca_ring,
                       SofthcaRing),
        VMSTATE_STRUCT(nic_rx, SofthcaState, 1, vmstate_softhca_ring,
                       SofthcaRing),
        /* objects (spec §13): tables before what refers to their entries */
        VMSTATE_STRUCT_ARRAY(eqs, SofthcaState, SOFTHCA_MAX_EQ, 0,
                             vmstate_softhca_eq, SofthcaEq),
        VMSTATE_BITMAP(uctx_map, SofthcaState, 0, uctx_bits),
        VMSTATE_BITMAP(pd_map, SofthcaState, 0, pd_bits),
        VMSTATE_UINT32_ARRAY(pd_uctx, SofthcaState, SOFTHCA_MAX_PD + 1),
        VMSTATE_SOFTHCA_TABLE(cqs, SofthcaState, SOFTHCA_MAX_CQ,
                              vmstate_softhca_cq, SofthcaCq),
        VMSTATE_SOFTHCA_TABLE(mrs, SofthcaState, SOFTHCA_MR_TABLE,
                              vmstate_softhca_mr, SofthcaMr),
        VMSTATE_SOFTHCA_TABLE(srqs, SofthcaState, SOFTHCA_MAX_SRQ + 1,
                              vmstate_softhca_srq, SofthcaSrq),
        VMSTATE_SOFTHCA_TABLE(qps, SofthcaState, SOFTHCA_QP_TABLE,
                              vmstate_softhca_qp, SofthcaQp),
        /* counters (spec §13.4) */
        VMSTATE_UINT64_ARRAY(rdma_stats, SofthcaState, SHCA_STAT_COUNT),
        VMSTATE_UINT64(stats.nic_tx_frames, SofthcaState),
        VMSTATE_UINT64(stats.nic_tx_errors, SofthcaState),
        VMSTATE_UINT64(stats.nic_rx_frames, SofthcaState),
        VMSTATE_UINT64(stats.nic_rx_too_long, SofthcaState),
        VMSTATE_UINT64(stats.nic_rx_no_buffer, SofthcaState),
        VMSTATE_UINT64(stats.nic_rx_errors, SofthcaState),
        VMSTATE_UINT64(stats.eq_overflows, SofthcaState),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * const []) {
        &vmstate_softhca_xrc,
        &vmstate_softhca_mcast,
        &vmstate_softhca_doorbells,
        &vmstate_softhca_loopback,
        &vmstate_softhca_crossing,
        &vmstate_softhca_fault,
        NULL
    },
};

const VMStateDescription vmstate_softhca = {
    .name = "softhca",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = softhca_pre_save,
    .pre_load = softhca_pre_load,
    .fields = (const VMStateField[]) {
        VMSTATE_PCI_DEVICE(parent_obj, SofthcaState),
        VMSTATE_MSIX(parent_obj, SofthcaState),
        {
            .name = "state",
            .info = &softhca_vmstate_info_body,
        },
        VMSTATE_END_OF_LIST()
    },
};
