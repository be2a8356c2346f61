/*
 * softhca: an RDMA host channel adapter with one RoCEv2 port.
 * Private header shared by the device's files; the hardware interface
 * itself is spec/softhca.md and softhca_hw.h.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_SOFTHCA_H
#define HW_SOFTHCA_H

#include "hw/pci/pci_device.h"
#include "net/net.h"
#include "qom/object.h"
#include "softhca_hw.h"

#define TYPE_SOFTHCA "softhca"
OBJECT_DECLARE_SIMPLE_TYPE(SofthcaState, SOFTHCA)

/* Resource limits this model implements (spec §3.1). */
#define SOFTHCA_MAX_QP          4096
#define SOFTHCA_MAX_QP_WR       16384
#define SOFTHCA_MAX_SGE         16
#define SOFTHCA_MAX_CQ          4096
#define SOFTHCA_MAX_CQE         65536
#define SOFTHCA_MAX_MR          65536
#define SOFTHCA_MAX_PD          4096
#define SOFTHCA_MAX_EQ          32
#define SOFTHCA_MAX_EQE         4096
#define SOFTHCA_MAX_GID         128
#define SOFTHCA_MAX_INLINE      256
#define SOFTHCA_MAX_MSG_SIZE    (1u << 30)
#define SOFTHCA_MAX_QP_RD_ATOM  16
#define SOFTHCA_MAX_MR_SIZE     (1ull << 40)
#define SOFTHCA_PAGE_SIZE_CAP   ((1u << 12) | (1u << 21) | (1u << 30))
#define SOFTHCA_MAX_MTU         9000
#define SOFTHCA_MIN_MTU         68
#define SOFTHCA_DEFAULT_MTU     1500
#define SOFTHCA_MAX_AQ_LOG      12

/* A guest buffer made of equal pages, checked once when it is described. */
typedef struct SofthcaBuf {
    uint64_t *pages;
    uint32_t npages;
    uint8_t page_shift;
} SofthcaBuf;

/* A ring the driver produces into and the device consumes (AQ, NIC). */
typedef struct SofthcaRing {
    uint64_t base;
    uint32_t log_size;
    uint32_t head;              /* device's next entry */
    uint32_t tail;              /* driver's last doorbell */
} SofthcaRing;

typedef struct SofthcaEq {
    bool valid;
    bool armed;
    bool phase;
    uint16_t vector;
    uint32_t log_size;
    uint32_t pi;                /* device's producer index */
    uint32_t ci;                /* driver's last doorbell */
    SofthcaBuf buf;
} SofthcaEq;

typedef struct SofthcaGid {
    bool valid;
    uint8_t raw[16];
} SofthcaGid;

/* Device counters; exposed to the driver by a later spec version. */
typedef struct SofthcaStats {
    uint64_t nic_tx_frames;
    uint64_t nic_tx_errors;
    uint64_t nic_rx_frames;
    uint64_t nic_rx_too_long;
    uint64_t nic_rx_errors;
    uint64_t roce_rx_dropped;
    uint64_t eq_overflows;
} SofthcaStats;

struct SofthcaState {
    PCIDevice parent_obj;

    MemoryRegion regs;
    MemoryRegion db;
    NICState *nic;
    NICConf conf;

    /* properties */
    uint32_t vectors;
    uint32_t db_pages;

    /* control and admin (spec §3.2, §3.3) */
    uint32_t ctrl;
    uint32_t status;
    uint32_t fatal_code;
    uint64_t aq_base_reg;
    uint64_t acq_base_reg;
    uint32_t aq_log_reg;
    uint32_t acq_log_reg;
    SofthcaRing aq;
    SofthcaRing acq;            /* head: driver's ACQ_HEAD; tail: device pi */
    bool acq_phase;

    /* port (spec §3.4) */
    uint8_t mac[6];
    uint32_t mtu;
    SofthcaGid gids[SOFTHCA_MAX_GID];

    /* NIC function (spec §3.5, §6) */
    uint32_t nic_ctrl;
    uint32_t nic_irq;
    SofthcaRing nic_tx;
    SofthcaRing nic_rx;
    uint8_t frame[SHCA_NIC_FRAME_MAX];

    /* objects */
    SofthcaEq eqs[SOFTHCA_MAX_EQ];
    unsigned long *pd_map;
    unsigned long *uctx_map;

    SofthcaStats stats;
};

static inline uint32_t softhca_ring_mask(const SofthcaRing *r)
{
    return (1u << r->log_size) - 1;
}

static inline bool softhca_ready(const SofthcaState *s)
{
    return (s->status & (SHCA_STATUS_RDY | SHCA_STATUS_FATAL)) ==
           SHCA_STATUS_RDY;
}

/* softhca.c */
void softhca_irq(SofthcaState *s, unsigned vector);
void softhca_link_update(SofthcaState *s);

/* softhca-regs.c */
extern const MemoryRegionOps softhca_regs_ops;
extern const MemoryRegionOps softhca_db_ops;
void softhca_regs_reset(SofthcaState *s);
void softhca_fatal(SofthcaState *s, uint32_t code);

/* softhca-dma.c */
bool softhca_dma_ok(SofthcaState *s, uint64_t addr, uint64_t len);
bool softhca_dma_read(SofthcaState *s, uint64_t addr, void *buf, size_t len);
bool softhca_dma_write(SofthcaState *s, uint64_t addr, const void *buf,
                       size_t len);
bool softhca_dma_write_owned(SofthcaState *s, uint64_t addr, const void *entry,
                             size_t len);
uint8_t softhca_buf_init(SofthcaState *s, SofthcaBuf *buf,
                         const struct shca_buf_desc *desc, uint64_t min_len);
void softhca_buf_free(SofthcaBuf *buf);
uint64_t softhca_buf_addr(const SofthcaBuf *buf, uint64_t offset);

/* softhca-admin.c */
void softhca_admin_kick(SofthcaState *s);
void softhca_admin_reset(SofthcaState *s);
bool softhca_admin_start(SofthcaState *s);

/* softhca-eq.c */
uint8_t softhca_eq_create(SofthcaState *s, const struct shca_aq_create_eq *c);
uint8_t softhca_eq_destroy(SofthcaState *s, uint32_t eqn);
void softhca_eq_doorbell(SofthcaState *s, uint32_t eqn, uint32_t val);
void softhca_eq_post_all(SofthcaState *s, uint8_t type, uint32_t obj,
                         uint64_t data);
void softhca_eq_reset(SofthcaState *s);

/* softhca-nic.c */
extern NetClientInfo softhca_net_info;
void softhca_nic_write_ctrl(SofthcaState *s, uint32_t val);
void softhca_nic_write_irq(SofthcaState *s, uint32_t val);
void softhca_nic_tx_doorbell(SofthcaState *s, uint32_t tail);
void softhca_nic_rx_doorbell(SofthcaState *s, uint32_t tail);
void softhca_nic_reset(SofthcaState *s);

#endif /* HW_SOFTHCA_H */
