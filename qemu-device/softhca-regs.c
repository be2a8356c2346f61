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

void softhca_fatal(SofthcaState *s, uint32_t code)
{
    qemu_log_mask(LOG_GUEST_ERROR, "softhca: fatal error, code %u\n", code);
    trace_softhca_fatal(code);
    s->status |= SHCA_STATUS_FATAL;
    s->fatal_code = code;
}

static void softhca_disable(SofthcaState *s)
{
    softhca_admin_reset(s);
    softhca_eq_reset(s);
    softhca_nic_reset(s);
    bitmap_zero(s->pd_map, SOFTHCA_MAX_PD + 1);
    bitmap_zero(s->uctx_map, s->db_pages);
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

static bool softhca_read_reg(SofthcaState *s, hwaddr addr, uint32_t *val)
{
    switch (addr) {
    case SHCA_REG_MAGIC:            *val = SHCA_MAGIC; break;
    case SHCA_REG_VERSION:          *val = SHCA_VERSION; break;
    case SHCA_REG_CAPS:             *val = SOFTHCA_CAPS; break;
    case SHCA_REG_NUM_VECTORS:      *val = s->vectors; break;
    case SHCA_REG_MAX_QP:           *val = SOFTHCA_MAX_QP; break;
    case SHCA_REG_MAX_QP_WR:        *val = SOFTHCA_MAX_QP_WR; break;
    case SHCA_REG_MAX_SGE:          *val = SOFTHCA_MAX_SGE; break;
    case SHCA_REG_MAX_CQ:           *val = SOFTHCA_MAX_CQ; break;
    case SHCA_REG_MAX_CQE:          *val = SOFTHCA_MAX_CQE; break;
    case SHCA_REG_MAX_MR:           *val = SOFTHCA_MAX_MR; break;
    case SHCA_REG_MAX_PD:           *val = SOFTHCA_MAX_PD; break;
    case SHCA_REG_MAX_EQ:           *val = SOFTHCA_MAX_EQ; break;
    case SHCA_REG_MAX_EQE:          *val = SOFTHCA_MAX_EQE; break;
    case SHCA_REG_MAX_UCTX:         *val = s->db_pages - 1; break;
    case SHCA_REG_MAX_GID:          *val = SOFTHCA_MAX_GID; break;
    case SHCA_REG_MAX_INLINE:       *val = SOFTHCA_MAX_INLINE; break;
    case SHCA_REG_MAX_MSG_SIZE:     *val = SOFTHCA_MAX_MSG_SIZE; break;
    case SHCA_REG_MAX_QP_RD_ATOM:   *val = SOFTHCA_MAX_QP_RD_ATOM; break;
    case SHCA_REG_MAX_MR_SIZE_LO:   *val = (uint32_t)SOFTHCA_MAX_MR_SIZE; break;
    case SHCA_REG_MAX_MR_SIZE_HI:   *val = SOFTHCA_MAX_MR_SIZE >> 32; break;
    case SHCA_REG_PAGE_SIZE_CAP:    *val = SOFTHCA_PAGE_SIZE_CAP; break;
    case SHCA_REG_MAX_MTU:          *val = SOFTHCA_MAX_MTU; break;
    case SHCA_REG_MAX_AQ_LOG:       *val = SOFTHCA_MAX_AQ_LOG; break;
    case SHCA_REG_CTRL:             *val = s->ctrl; break;
    case SHCA_REG_STATUS:           *val = s->status; break;
    case SHCA_REG_FATAL_CODE:       *val = s->fatal_code; break;
    case SHCA_REG_AQ_BASE_LO:       *val = s->aq_base_reg; break;
    case SHCA_REG_AQ_BASE_HI:       *val = s->aq_base_reg >> 32; break;
    case SHCA_REG_ACQ_BASE_LO:      *val = s->acq_base_reg; break;
    case SHCA_REG_ACQ_BASE_HI:      *val = s->acq_base_reg >> 32; break;
    case SHCA_REG_AQ_LOG_SIZE:      *val = s->aq_log_reg; break;
    case SHCA_REG_ACQ_LOG_SIZE:     *val = s->acq_log_reg; break;
    case SHCA_REG_MAC_LO:           *val = ldl_le_p(s->mac); break;
    case SHCA_REG_MAC_HI:           *val = lduw_le_p(s->mac + 4); break;
    case SHCA_REG_PORT_STATUS:      *val = softhca_port_status(s); break;
    case SHCA_REG_MTU:              *val = s->mtu; break;
    case SHCA_REG_NIC_CTRL:         *val = s->nic_ctrl; break;
    case SHCA_REG_NIC_IRQ:          *val = s->nic_irq; break;
    case SHCA_REG_NIC_TX_BASE_LO:   *val = s->nic_tx.base; break;
    case SHCA_REG_NIC_TX_BASE_HI:   *val = s->nic_tx.base >> 32; break;
    case SHCA_REG_NIC_TX_LOG_SIZE:  *val = s->nic_tx.log_size; break;
    case SHCA_REG_NIC_TX_HEAD:      *val = s->nic_tx.head; break;
    case SHCA_REG_NIC_RX_BASE_LO:   *val = s->nic_rx.base; break;
    case SHCA_REG_NIC_RX_BASE_HI:   *val = s->nic_rx.base >> 32; break;
    case SHCA_REG_NIC_RX_LOG_SIZE:  *val = s->nic_rx.log_size; break;
    case SHCA_REG_NIC_RX_HEAD:      *val = s->nic_rx.head; break;
    default:
        return false;
    }
    return true;
}

static uint64_t softhca_regs_read(void *opaque, hwaddr addr, unsigned size)
{
    SofthcaState *s = opaque;
    uint32_t val = 0;

    if (!softhca_read_reg(s, addr, &val)) {
        softhca_guest_error(addr, "read of a write-only or unknown register");
    }
    trace_softhca_mmio_read(addr, val);
    return val;
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
    case SHCA_REG_AQ_BASE_LO:   softhca_set_lo(&s->aq_base_reg, val); break;
    case SHCA_REG_AQ_BASE_HI:   softhca_set_hi(&s->aq_base_reg, val); break;
    case SHCA_REG_ACQ_BASE_LO:  softhca_set_lo(&s->acq_base_reg, val); break;
    case SHCA_REG_ACQ_BASE_HI:  softhca_set_hi(&s->acq_base_reg, val); break;
    case SHCA_REG_AQ_LOG_SIZE:  s->aq_log_reg = val; break;
    case SHCA_REG_ACQ_LOG_SIZE: s->acq_log_reg = val; break;
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

static void softhca_regs_write(void *opaque, hwaddr addr, uint64_t data,
                               unsigned size)
{
    SofthcaState *s = opaque;
    uint32_t val = data;

    trace_softhca_mmio_write(addr, val);

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

/* Version 0.1 defines no doorbell in the pages of BAR2 (spec §8). */
static uint64_t softhca_db_read(void *opaque, hwaddr addr, unsigned size)
{
    return 0;
}

static void softhca_db_write(void *opaque, hwaddr addr, uint64_t data,
                             unsigned size)
{
    SofthcaState *s = opaque;
    uint32_t page = addr >> SHCA_DB_PAGE_SHIFT;

    trace_softhca_db_write(page, addr & (SHCA_DB_PAGE_SIZE - 1), data);
    if (page && !test_bit(page, s->uctx_map)) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "softhca: doorbell write to unallocated page %u\n",
                      page);
    }
}

const MemoryRegionOps softhca_db_ops = {
    .read = softhca_db_read,
    .write = softhca_db_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};
