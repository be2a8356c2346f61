/*
 * softhca: the admin queue (spec §4, §5)
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/cutils.h"
#include "softhca-rdma.h"
#include "trace.h"

static bool softhca_ring_cfg_ok(SofthcaState *s, uint64_t base, uint32_t log,
                                size_t entry_size)
{
    return log >= SHCA_RING_LOG_MIN && log <= SOFTHCA_MAX_AQ_LOG &&
           QEMU_IS_ALIGNED(base, 4096) &&
           softhca_dma_ok(s, base, (uint64_t)entry_size << log);
}

/*
 * STATUS.FATAL (spec §10): every cause is the admin path's, a bad
 * configuration, a doorbell past the ring, or DMA that failed.
 */
void softhca_fatal(SofthcaState *s, uint32_t code)
{
    qemu_log_mask(LOG_GUEST_ERROR, "softhca: fatal error, code %u\n", code);
    trace_softhca_fatal(code);
    s->status |= SHCA_STATUS_FATAL;
    s->fatal_code = code;
}

/* Called on CTRL.EN 0 -> 1: latch and check the admin configuration. */
bool softhca_admin_start(SofthcaState *s)
{
    s->aq = (SofthcaRing) { .base = s->aq_base_reg, .log_size = s->aq_log_reg };
    s->acq = (SofthcaRing) { .base = s->acq_base_reg,
                             .log_size = s->acq_log_reg };
    s->acq_phase = true;
    return softhca_ring_cfg_ok(s, s->aq.base, s->aq.log_size,
                               SHCA_AQ_ENTRY_SIZE) &&
           softhca_ring_cfg_ok(s, s->acq.base, s->acq.log_size,
                               sizeof(struct shca_acq_entry));
}

static void softhca_admin_bh(void *opaque)
{
    SofthcaState *s = opaque;

    if (softhca_work_begin_bh(s)) {
        softhca_admin_kick(s);
        softhca_work_end(s);
    }
}

void softhca_admin_init(SofthcaState *s)
{
    s->admin_bh = softhca_bh_new(s, softhca_admin_bh);
}

void softhca_admin_exit(SofthcaState *s)
{
    softhca_admin_reset(s);
    qemu_bh_delete(s->admin_bh);
    s->admin_bh = NULL;
}

/*
 * A command that waits for budget ends: each of its steps answers false,
 * and it gives back what it took before the objects it works on go.
 */
void softhca_admin_reset(SofthcaState *s)
{
    if (s->admin_co) {
        s->admin_abort = true;
        qemu_coroutine_enter(s->admin_co);
        assert(!s->admin_co);
        s->admin_abort = false;
    }
    qemu_bh_cancel(s->admin_bh);
    s->aq = (SofthcaRing) { 0 };
    s->acq = (SofthcaRing) { 0 };
    s->acq_phase = true;
}

static bool softhca_gid_is_ipv4(const uint8_t *gid)
{
    static const uint8_t v4_prefix[12] = {
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
    };

    return memcmp(gid, v4_prefix, sizeof(v4_prefix)) == 0;
}

static uint8_t softhca_set_gid(SofthcaState *s,
                               const struct shca_aq_set_gid *c)
{
    uint32_t index = le32_to_cpu(c->index);
    uint32_t flags = le32_to_cpu(c->flags);
    SofthcaGid *gid;

    if (index >= SOFTHCA_MAX_GID || (flags & ~SHCA_GID_VALID)) {
        return SHCA_AQ_BAD_PARAM;
    }
    gid = &s->gids[index];
    if (!(flags & SHCA_GID_VALID)) {
        *gid = (SofthcaGid) { 0 };
        trace_softhca_gid(index, false, softhca_gid_is_ipv4(c->gid));
        return SHCA_AQ_OK;
    }
    gid->valid = true;
    memcpy(gid->raw, c->gid, sizeof(gid->raw));
    trace_softhca_gid(index, true, softhca_gid_is_ipv4(c->gid));
    return SHCA_AQ_OK;
}

/* QUERY_STATS (spec §13.4): the counters, in enum shca_stat order. */
static uint8_t softhca_query_stats(SofthcaState *s,
                                   const struct shca_aq_query_stats *c)
{
    uint64_t stats[SHCA_STAT_COUNT];

    for (int i = 0; i < SHCA_STAT_COUNT; i++) {
        stats[i] = cpu_to_le64(s->rdma_stats[i]);
    }
    if (!softhca_dma_write(s, le64_to_cpu(c->addr), stats, sizeof(stats))) {
        return SHCA_AQ_BAD_ADDR;
    }
    return SHCA_AQ_OK;
}

/* Bytes of the payload of a CAPS.QP command (spec §13). */
static size_t softhca_rdma_payload_len(uint8_t opcode)
{
    switch (opcode) {
    case SHCA_AQ_CREATE_CQ:
        return sizeof(struct shca_aq_create_cq);
    case SHCA_AQ_RESIZE_CQ:
        return sizeof(struct shca_aq_resize_cq);
    case SHCA_AQ_REREG_MR:
        return sizeof(struct shca_aq_rereg_mr);
    case SHCA_AQ_CREATE_QP:
        return sizeof(struct shca_aq_create_qp);
    case SHCA_AQ_MODIFY_QP:
    case SHCA_AQ_QUERY_QP:
        return sizeof(struct shca_aq_qp_attr);
    case SHCA_AQ_REG_MR:
        return sizeof(struct shca_aq_reg_mr);
    case SHCA_AQ_QUERY_STATS:
        return sizeof(struct shca_aq_query_stats);
    case SHCA_AQ_DESTROY_CQ:
    case SHCA_AQ_DESTROY_QP:
    case SHCA_AQ_DEREG_MR:
    case SHCA_AQ_QUERY_SRQ:
    case SHCA_AQ_DESTROY_SRQ:
    case SHCA_AQ_ALLOC_XRCD:
    case SHCA_AQ_DEALLOC_XRCD:
        return sizeof(struct shca_aq_handle);
    case SHCA_AQ_CREATE_SRQ:
        return sizeof(struct shca_aq_create_srq);
    case SHCA_AQ_MODIFY_SRQ:
        return sizeof(struct shca_aq_modify_srq);
    default:
        return SIZE_MAX;
    }
}

/*
 * Bytes of a command's payload that the opcode defines; the rest must be 0.
 * Opcodes the device does not implement (CAPS) are SIZE_MAX.
 */
static size_t softhca_cmd_payload_len(SofthcaState *s, uint8_t opcode)
{
    switch (opcode) {
    case SHCA_AQ_CREATE_EQ:
        return sizeof(struct shca_aq_create_eq);
    case SHCA_AQ_SET_GID:
        return sizeof(struct shca_aq_set_gid);
    case SHCA_AQ_DESTROY_EQ:
    case SHCA_AQ_ALLOC_PD:
    case SHCA_AQ_DEALLOC_PD:
    case SHCA_AQ_DEALLOC_UCTX:
        return sizeof(struct shca_aq_handle);
    case SHCA_AQ_ALLOC_UCTX:
        return 0;
    case SHCA_AQ_ATTACH_MCAST:
    case SHCA_AQ_DETACH_MCAST:
        return softhca_has_dgram(s) ? sizeof(struct shca_aq_mcast)
                                    : SIZE_MAX;
    case SHCA_AQ_ALLOC_MW:
        return softhca_has_dgram(s) ? sizeof(struct shca_aq_alloc_mw)
                                    : SIZE_MAX;
    case SHCA_AQ_DEALLOC_MW:
        return softhca_has_dgram(s) ? sizeof(struct shca_aq_handle)
                                    : SIZE_MAX;
    default:
        return s->caps_qp ? softhca_rdma_payload_len(opcode) : SIZE_MAX;
    }
}

static bool softhca_cmd_well_formed(SofthcaState *s,
                                    const struct shca_aq_entry *cmd)
{
    size_t len = softhca_cmd_payload_len(s, cmd->opcode);

    if (len == SIZE_MAX || cmd->flags || cmd->rsvd) {
        return false;
    }
    return buffer_is_zero(cmd->raw + len, SHCA_AQ_PAYLOAD_SIZE - len);
}

static uint8_t softhca_exec(SofthcaState *s, const struct shca_aq_entry *cmd,
                            uint32_t *result)
{
    uint32_t handle = le32_to_cpu(cmd->handle.handle);

    if (!softhca_cmd_well_formed(s, cmd)) {
        return SHCA_AQ_BAD_OPCODE;
    }

    switch (cmd->opcode) {
    case SHCA_AQ_CREATE_EQ:
        return softhca_eq_create(s, &cmd->create_eq);
    case SHCA_AQ_DESTROY_EQ:
        return softhca_eq_destroy(s, handle);
    case SHCA_AQ_SET_GID:
        return softhca_set_gid(s, &cmd->set_gid);
    case SHCA_AQ_ALLOC_PD:
        return softhca_pd_alloc(s, handle, result);
    case SHCA_AQ_DEALLOC_PD:
        return softhca_pd_dealloc(s, handle);
    case SHCA_AQ_ALLOC_UCTX:
        return softhca_uctx_alloc(s, result);
    case SHCA_AQ_DEALLOC_UCTX:
        return softhca_uctx_dealloc(s, handle);
    case SHCA_AQ_CREATE_CQ:
        return softhca_cq_create(s, &cmd->create_cq, result);
    case SHCA_AQ_DESTROY_CQ:
        return softhca_cq_destroy(s, handle);
    case SHCA_AQ_RESIZE_CQ:
        return softhca_cq_resize(s, &cmd->resize_cq, result);
    case SHCA_AQ_CREATE_QP:
        return softhca_qp_create(s, &cmd->create_qp, result);
    case SHCA_AQ_MODIFY_QP:
        return softhca_qp_modify(s, &cmd->qp_attr);
    case SHCA_AQ_QUERY_QP:
        return softhca_qp_query(s, &cmd->qp_attr);
    case SHCA_AQ_DESTROY_QP:
        return softhca_qp_destroy(s, handle);
    case SHCA_AQ_REG_MR:
        return softhca_mr_reg(s, &cmd->reg_mr, result);
    case SHCA_AQ_DEREG_MR:
        return softhca_mr_dereg(s, handle);
    case SHCA_AQ_REREG_MR:
        return softhca_mr_rereg(s, &cmd->rereg_mr);
    case SHCA_AQ_QUERY_STATS:
        return softhca_query_stats(s, &cmd->query_stats);
    case SHCA_AQ_ATTACH_MCAST:
        return softhca_mcast_attach(s, &cmd->mcast);
    case SHCA_AQ_DETACH_MCAST:
        return softhca_mcast_detach(s, &cmd->mcast);
    case SHCA_AQ_CREATE_SRQ:
        return softhca_srq_create(s, &cmd->create_srq, result);
    case SHCA_AQ_MODIFY_SRQ:
        return softhca_srq_modify(s, &cmd->modify_srq);
    case SHCA_AQ_QUERY_SRQ:
        return softhca_srq_query(s, handle, result);
    case SHCA_AQ_DESTROY_SRQ:
        return softhca_srq_destroy(s, handle);
    case SHCA_AQ_ALLOC_MW:
        return softhca_mw_alloc(s, &cmd->alloc_mw, result);
    case SHCA_AQ_DEALLOC_MW:
        return softhca_mw_dealloc(s, handle);
    case SHCA_AQ_ALLOC_XRCD:
        return softhca_xrcd_alloc(s, handle, result);
    case SHCA_AQ_DEALLOC_XRCD:
        return softhca_xrcd_dealloc(s, handle);
    default:
        g_assert_not_reached();
    }
}

static bool softhca_acq_full(const SofthcaState *s)
{
    return ((s->acq.tail + 1) & softhca_ring_mask(&s->acq)) == s->acq.head;
}

static bool softhca_post_completion(SofthcaState *s, uint16_t cmd_id,
                                    uint8_t status, uint32_t result)
{
    struct shca_acq_entry cqe = {
        .result = cpu_to_le32(result),
        .cmd_id = cpu_to_le16(cmd_id),
        .status = status,
        .phase = s->acq_phase ? SHCA_PHASE_BIT : 0,
    };
    uint64_t addr = s->acq.base + (uint64_t)s->acq.tail * sizeof(cqe);

    if (!softhca_dma_write_owned(s, addr, &cqe, sizeof(cqe))) {
        return false;
    }
    s->acq.tail = (s->acq.tail + 1) & softhca_ring_mask(&s->acq);
    if (s->acq.tail == 0) {
        s->acq_phase = !s->acq_phase;
    }
    return true;
}

/*
 * Run commands from the device's head to the driver's tail while the ACQ
 * has room.  A command's steps spend the work budget; when the budget of
 * a callback is spent, the command waits (softhca_work_step) and the
 * bottom half goes on with it, so that no doorbell holds the main loop
 * for a ring of costly commands, or for one (issue 25, defect 2).  The
 * commands after it wait with it.
 */
static void coroutine_fn softhca_admin_run(void *opaque)
{
    SofthcaState *s = opaque;

    while (softhca_ready(s) && s->aq.head != s->aq.tail &&
           !softhca_acq_full(s) && softhca_work_step(s, SOFTHCA_WORK_CMD)) {
        struct shca_aq_entry cmd;
        uint32_t result = 0;
        uint8_t status;
        uint16_t cmd_id;

        if (!softhca_dma_read(s, s->aq.base +
                              (uint64_t)s->aq.head * SHCA_AQ_ENTRY_SIZE,
                              &cmd, sizeof(cmd))) {
            softhca_fatal(s, SHCA_FATAL_AQ_DMA);
            break;
        }
        cmd_id = le16_to_cpu(cmd.cmd_id);
        trace_softhca_admin_cmd(cmd_id, cmd.opcode);

        status = softhca_exec(s, &cmd, &result);
        if (s->admin_abort) {
            break;      /* a reset: the ring is gone, nothing completes */
        }
        if (status != SHCA_AQ_OK) {
            qemu_log_mask(LOG_GUEST_ERROR,
                          "softhca: admin command 0x%02x (id %u) failed: "
                          "status 0x%02x\n", cmd.opcode, cmd_id, status);
        }
        trace_softhca_admin_cpl(cmd_id, status, result);

        if (!softhca_post_completion(s, cmd_id, status, result)) {
            softhca_fatal(s, SHCA_FATAL_AQ_DMA);
            break;
        }
        s->aq.head = (s->aq.head + 1) & softhca_ring_mask(&s->aq);
        s->admin_posted = true;
    }
    s->admin_co = NULL;
}

void softhca_admin_kick(SofthcaState *s)
{
    /* a command sees every doorbell written before it (spec §14) */
    softhca_db_drain(s);

    if (!s->admin_co) {
        s->admin_co = qemu_coroutine_create(softhca_admin_run, s);
    }
    qemu_coroutine_enter(s->admin_co);
    if (s->admin_co) {
        qemu_bh_schedule(s->admin_bh);      /* it waits for budget */
    }
    if (s->admin_posted) {
        s->admin_posted = false;
        softhca_irq(s, SHCA_VEC_ADMIN);
    }
}
