/*
 * softhca: BAR0 registers and the doorbell BAR (spec §3, §4, §8)
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/bitops.h"
#include "hw/pci/msix.h"
#include "softhca.h"
#include "trace.h"

#define SOFTHCA_CAPS (SHCA_CAP_ROCE_V2 | SHCA_CAP_NIC | SHCA_CAP_IPV6)

static void softhca_guest_error(hwaddr addr, const char *what)
{
    qemu_log_mask(LOG_GUEST_ERROR, "softhca: %s at BAR0+0x%" HWADDR_PRIx "\n",
                  what, addr);
    trace_softhca_err_mmio(addr, what);
}

static void softhca_disable(SofthcaState *s)
{
    softhca_admin_reset(s);
    softhca_mcast_reset(s);
    softhca_qp_reset(s);        /* QPs first: they hold CQs and SRQs */
    softhca_srq_reset(s);
    softhca_cq_reset(s);
    softhca_mr_reset(s);
    softhca_eq_reset(s);
    softhca_nic_reset(s);
    softhca_fault_reset(s);
    softhca_loopback_reset(s);
    softhca_pd_reset(s);
    softhca_db_reset(s);
    memset(s->gids, 0, sizeof(s->gids));
    s->status = 0;
    s->fatal_code = 0;
}

/* Everything a reset returns to its reset value (spec §10). */
void softhca_regs_reset(SofthcaState *s)
{
    softhca_disable(s);
    s->ctrl = 0;
    s->aq_base_reg = 0;
    s->acq_base_reg = 0;
    s->aq_log_reg = 0;
    s->acq_log_reg = 0;
    memcpy(s->mac, s->conf.macaddr.a, sizeof(s->mac));
    s->mtu = SOFTHCA_DEFAULT_MTU;
    memset(s->rdma_stats, 0, sizeof(s->rdma_stats));
}

static void softhca_write_ctrl(SofthcaState *s, uint32_t val)
{
    bool was_enabled = s->ctrl & SHCA_CTRL_EN;

    s->ctrl = val & SHCA_CTRL_EN;
    if (was_enabled && !(val & SHCA_CTRL_EN)) {
        trace_softhca_disable();
        softhca_disable(s);
    } else if (!was_enabled && (val & SHCA_CTRL_EN)) {
        if (!softhca_admin_start(s)) {
            softhca_fatal(s, SHCA_FATAL_AQ_CONFIG);
            return;
        }
        trace_softhca_enable(s->aq.base, s->aq.log_size, s->acq.base,
                             s->acq.log_size);
        s->status = SHCA_STATUS_RDY;
    }
}

static uint32_t softhca_port_status(SofthcaState *s)
{
    return qemu_get_queue(s->nic)->link_down ? 0 : SHCA_PORT_LINK_UP;
}

static uint32_t softhca_reg_value(SofthcaState *s, hwaddr addr, bool *known)
{
    switch (addr) {
    case SHCA_REG_MAGIC:
        return SHCA_MAGIC;
    case SHCA_REG_VERSION:
        return s->caps_qp ? SHCA_VERSION : SHCA_VERSION_MAJOR << 16 | 1;
    case SHCA_REG_CAPS:
        return SOFTHCA_CAPS |
               (s->caps_qp ? SHCA_CAP_QP | SHCA_CAP_SQ_RECORD |
                             SHCA_CAP_LOOPBACK | SHCA_CAP_SRQ |
                             SHCA_CAP_XRC | SHCA_CAP_RESIZE_CQ |
                             SHCA_CAP_REREG_MR | SHCA_CAP_ATOMIC_WRITE |
                             SHCA_CAP_FLUSH | SHCA_CAP_ZERO_LENGTH_MR : 0) |
               (softhca_has_dgram(s) ? SHCA_CAP_DGRAM | SHCA_CAP_MW : 0);
    case SHCA_REG_NUM_VECTORS:
        return s->vectors;
    case SHCA_REG_MAX_QP:
        return SOFTHCA_MAX_QP;
    case SHCA_REG_MAX_QP_WR:
        return SOFTHCA_MAX_QP_WR;
    case SHCA_REG_MAX_SGE:
        return SOFTHCA_MAX_SGE;
    case SHCA_REG_MAX_CQ:
        return SOFTHCA_MAX_CQ;
    case SHCA_REG_MAX_CQE:
        return SOFTHCA_MAX_CQE;
    case SHCA_REG_MAX_MR:
        return SOFTHCA_MAX_MR;
    case SHCA_REG_MAX_PD:
        return SOFTHCA_MAX_PD;
    case SHCA_REG_MAX_EQ:
        return SOFTHCA_MAX_EQ;
    case SHCA_REG_MAX_EQE:
        return SOFTHCA_MAX_EQE;
    case SHCA_REG_MAX_UCTX:
        return s->db_pages - 1;
    case SHCA_REG_MAX_GID:
        return SOFTHCA_MAX_GID;
    case SHCA_REG_MAX_INLINE:
        return SOFTHCA_MAX_INLINE;
    case SHCA_REG_MAX_MSG_SIZE:
        return SOFTHCA_MAX_MSG_SIZE;
    case SHCA_REG_MAX_QP_RD_ATOM:
        return SOFTHCA_MAX_QP_RD_ATOM;
    case SHCA_REG_MAX_MR_SIZE_LO:
        return (uint32_t)SOFTHCA_MAX_MR_SIZE;
    case SHCA_REG_MAX_MR_SIZE_HI:
        return SOFTHCA_MAX_MR_SIZE >> 32;
    case SHCA_REG_PAGE_SIZE_CAP:
        return SOFTHCA_PAGE_SIZE_CAP;
    case SHCA_REG_MAX_MTU:
        return SOFTHCA_MAX_MTU;
    case SHCA_REG_MAX_AQ_LOG:
        return SOFTHCA_MAX_AQ_LOG;
    /* Registers of version 0.3: 0 on an older device (x-caps-qp=off) */
    case SHCA_REG_MAX_MCAST_GRP:
        return softhca_has_dgram(s) ? SOFTHCA_MAX_MCAST_GRP : 0;
    case SHCA_REG_MAX_MCAST_QP_ATTACH:
        return softhca_has_dgram(s) ? SOFTHCA_MAX_MCAST_QP_ATTACH : 0;
    case SHCA_REG_MAX_FAST_REG_PAGES:
        return softhca_has_dgram(s) ? SOFTHCA_MAX_FAST_REG_PAGES : 0;
    case SHCA_REG_MAX_SRQ:
        return s->caps_qp ? SOFTHCA_MAX_SRQ : 0;
    case SHCA_REG_MAX_SRQ_WR:
        return s->caps_qp ? SOFTHCA_MAX_SRQ_WR : 0;
    case SHCA_REG_MAX_XRCD:
        return s->caps_qp ? SOFTHCA_MAX_XRCD : 0;
    case SHCA_REG_CTRL:
        return s->ctrl;
    case SHCA_REG_STATUS:
        return s->status;
    case SHCA_REG_FATAL_CODE:
        return s->fatal_code;
    case SHCA_REG_AQ_BASE_LO:
        return s->aq_base_reg;
    case SHCA_REG_AQ_BASE_HI:
        return s->aq_base_reg >> 32;
    case SHCA_REG_ACQ_BASE_LO:
        return s->acq_base_reg;
    case SHCA_REG_ACQ_BASE_HI:
        return s->acq_base_reg >> 32;
    case SHCA_REG_AQ_LOG_SIZE:
        return s->aq_log_reg;
    case SHCA_REG_ACQ_LOG_SIZE:
        return s->acq_log_reg;
    case SHCA_REG_MAC_LO:
        return ldl_le_p(s->mac);
    case SHCA_REG_MAC_HI:
        return lduw_le_p(s->mac + 4);
    case SHCA_REG_PORT_STATUS:
        return softhca_port_status(s);
    case SHCA_REG_MTU:
        return s->mtu;
    case SHCA_REG_NIC_CTRL:
        return s->nic_ctrl;
    case SHCA_REG_NIC_IRQ:
        return s->nic_irq;
    case SHCA_REG_NIC_TX_BASE_LO:
        return s->nic_tx.base;
    case SHCA_REG_NIC_TX_BASE_HI:
        return s->nic_tx.base >> 32;
    case SHCA_REG_NIC_TX_LOG_SIZE:
        return s->nic_tx.log_size;
    case SHCA_REG_NIC_TX_HEAD:
        return s->nic_tx.head;
    case SHCA_REG_NIC_RX_BASE_LO:
        return s->nic_rx.base;
    case SHCA_REG_NIC_RX_BASE_HI:
        return s->nic_rx.base >> 32;
    case SHCA_REG_NIC_RX_LOG_SIZE:
        return s->nic_rx.log_size;
    case SHCA_REG_NIC_RX_HEAD:
        return s->nic_rx.head;
    default:
        *known = false;
        return 0;
    }
}

/* A register access, as the engine's thread runs it (softhca_engine_call). */
typedef struct SofthcaRegAccess {
    SofthcaState *s;
    hwaddr addr;
    uint32_t val;
} SofthcaRegAccess;

static void softhca_regs_read_engine(void *opaque)
{
    SofthcaRegAccess *a = opaque;
    bool known = true;

    a->val = softhca_reg_value(a->s, a->addr, &known);
    if (!known) {
        softhca_guest_error(a->addr,
                            "read of a write-only or unknown register");
    }
}

static uint64_t softhca_regs_read(void *opaque, hwaddr addr, unsigned size)
{
    SofthcaRegAccess a = { .s = opaque, .addr = addr };

    softhca_engine_call(a.s, softhca_regs_read_engine, &a);
    trace_softhca_mmio_read(addr, a.val);
    return a.val;
}

static void softhca_set_lo(uint64_t *reg, uint32_t val)
{
    *reg = deposit64(*reg, 0, 32, val);
}

static void softhca_set_hi(uint64_t *reg, uint32_t val)
{
    *reg = deposit64(*reg, 32, 32, val);
}

/* Admin configuration registers: writable only while disabled. */
static void softhca_write_admin_cfg(SofthcaState *s, hwaddr addr, uint32_t val)
{
    switch (addr) {
    case SHCA_REG_AQ_BASE_LO:
        softhca_set_lo(&s->aq_base_reg, val);
        break;
    case SHCA_REG_AQ_BASE_HI:
        softhca_set_hi(&s->aq_base_reg, val);
        break;
    case SHCA_REG_ACQ_BASE_LO:
        softhca_set_lo(&s->acq_base_reg, val);
        break;
    case SHCA_REG_ACQ_BASE_HI:
        softhca_set_hi(&s->acq_base_reg, val);
        break;
    case SHCA_REG_AQ_LOG_SIZE:
        s->aq_log_reg = val;
        break;
    case SHCA_REG_ACQ_LOG_SIZE:
        s->acq_log_reg = val;
        break;
    default:
        g_assert_not_reached();
    }
}

/* NIC ring registers: writable only while that direction is disabled. */
static void softhca_write_nic_ring(SofthcaState *s, hwaddr addr, uint32_t val)
{
    SofthcaRing *r = addr < SHCA_REG_NIC_RX_BASE_LO ? &s->nic_tx : &s->nic_rx;
    uint32_t en = r == &s->nic_tx ? SHCA_NIC_TX_EN : SHCA_NIC_RX_EN;

    if (s->nic_ctrl & en) {
        softhca_guest_error(addr, "NIC ring register written while enabled");
        return;
    }
    switch (addr) {
    case SHCA_REG_NIC_TX_BASE_LO:
    case SHCA_REG_NIC_RX_BASE_LO:
        softhca_set_lo(&r->base, val);
        break;
    case SHCA_REG_NIC_TX_BASE_HI:
    case SHCA_REG_NIC_RX_BASE_HI:
        softhca_set_hi(&r->base, val);
        break;
    case SHCA_REG_NIC_TX_LOG_SIZE:
    case SHCA_REG_NIC_RX_LOG_SIZE:
        r->log_size = val;
        break;
    default:
        g_assert_not_reached();
    }
}

static void softhca_write_mac(SofthcaState *s, hwaddr addr, uint32_t val)
{
    if (addr == SHCA_REG_MAC_LO) {
        stl_le_p(s->mac, val);
    } else {
        stw_le_p(s->mac + 4, val);
    }
    trace_softhca_mac(s->mac[0], s->mac[1], s->mac[2], s->mac[3], s->mac[4],
                      s->mac[5]);
}

static void softhca_write_doorbell(SofthcaState *s, SofthcaRing *r,
                                   uint32_t val, bool is_tail)
{
    if (!softhca_ready(s)) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "softhca: admin doorbell while not ready\n");
        return;
    }
    if (val > softhca_ring_mask(r)) {
        softhca_fatal(s, SHCA_FATAL_AQ_DOORBELL);
        return;
    }
    if (is_tail) {
        r->tail = val;
    } else {
        r->head = val;
    }
    softhca_admin_kick(s);
}

static void softhca_regs_write_reg(SofthcaState *s, hwaddr addr, uint32_t val)
{

    if (addr >= SHCA_REG_EQ_DB_BASE &&
        addr < SHCA_REG_EQ_DB(SOFTHCA_MAX_EQ)) {
        softhca_eq_doorbell(s, (addr - SHCA_REG_EQ_DB_BASE) / 4, val);
        return;
    }

    switch (addr) {
    case SHCA_REG_CTRL:
        softhca_write_ctrl(s, val);
        return;
    case SHCA_REG_RESET:
        if (val == SHCA_RESET_MAGIC) {
            trace_softhca_reset("register");
            softhca_regs_reset(s);
        }
        return;
    case SHCA_REG_AQ_BASE_LO ... SHCA_REG_ACQ_LOG_SIZE:
        if (s->ctrl & SHCA_CTRL_EN) {
            softhca_guest_error(addr, "admin register written while enabled");
        } else {
            softhca_write_admin_cfg(s, addr, val);
        }
        return;
    case SHCA_REG_AQ_TAIL:
        softhca_write_doorbell(s, &s->aq, val, true);
        return;
    case SHCA_REG_ACQ_HEAD:
        softhca_write_doorbell(s, &s->acq, val, false);
        return;
    case SHCA_REG_MAC_LO:
    case SHCA_REG_MAC_HI:
        softhca_write_mac(s, addr, val);
        return;
    case SHCA_REG_MTU:
        if (val >= SOFTHCA_MIN_MTU && val <= SOFTHCA_MAX_MTU) {
            s->mtu = val;
        } else {
            softhca_guest_error(addr, "MTU out of range");
        }
        return;
    case SHCA_REG_NIC_CTRL:
        softhca_nic_write_ctrl(s, val);
        return;
    case SHCA_REG_NIC_IRQ:
        softhca_nic_write_irq(s, val);
        return;
    case SHCA_REG_NIC_TX_BASE_LO ... SHCA_REG_NIC_TX_LOG_SIZE:
    case SHCA_REG_NIC_RX_BASE_LO ... SHCA_REG_NIC_RX_LOG_SIZE:
        softhca_write_nic_ring(s, addr, val);
        return;
    case SHCA_REG_NIC_TX_TAIL:
        softhca_nic_tx_doorbell(s, val);
        return;
    case SHCA_REG_NIC_RX_TAIL:
        softhca_nic_rx_doorbell(s, val);
        return;
    default:
        break;
    }
    softhca_guest_error(addr, "write to a read-only or unknown register");
}

static void softhca_regs_write_engine(void *opaque)
{
    SofthcaRegAccess *a = opaque;

    softhca_work_begin(a->s);
    softhca_regs_write_reg(a->s, a->addr, a->val);
    softhca_work_end(a->s);
}

static void softhca_regs_write(void *opaque, hwaddr addr, uint64_t data,
                               unsigned size)
{
    SofthcaRegAccess a = { .s = opaque, .addr = addr, .val = data };

    trace_softhca_mmio_write(addr, data);
    softhca_engine_call(a.s, softhca_regs_write_engine, &a);
}

const MemoryRegionOps softhca_regs_ops = {
    .read = softhca_regs_read,
    .write = softhca_regs_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 4,
        .unaligned = false,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};
