/*
 * QTest testcase for the softhca RDMA adapter: the register block, reset,
 * the admin queue, event queues and the NIC rings, driven with no guest.
 * The expected behaviour is spec/softhca.md.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "libqos/malloc-pc.h"
#include "qemu/bswap.h"
#include "qobject/qdict.h"
#include "hw/pci/pci_regs.h"
#include "hw/softhca/softhca_hw.h"

#define AQ_LOG      3
#define ACQ_LOG     3
#define RAM_TOP     (128 * 1024 * 1024)     /* -m 128 */

typedef struct Hca {
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    QPCIBar bar;
    QGuestAllocator alloc;
    uint64_t aq, acq;
    uint32_t aq_tail, acq_head;
    bool acq_phase;
    uint16_t next_id;
} Hca;

static uint32_t rd(Hca *h, uint32_t reg)
{
    return qpci_io_readl(h->dev, h->bar, reg);
}

static void wr(Hca *h, uint32_t reg, uint32_t val)
{
    qpci_io_writel(h->dev, h->bar, reg, val);
}

static void save_fn(QPCIDevice *dev, int devfn, void *data)
{
    *(QPCIDevice **)data = dev;
}

static void hca_start(Hca *h, const char *extra)
{
    memset(h, 0, sizeof(*h));
    h->qts = qtest_initf("-machine q35 -m 128 -nodefaults "
                         "-device softhca,id=hca%s",
                         extra ? extra : "");
    pc_alloc_init(&h->alloc, h->qts, 0);
    h->bus = qpci_new_pc(h->qts, &h->alloc);
    qpci_device_foreach(h->bus, SHCA_PCI_VENDOR_ID, SHCA_PCI_DEVICE_ID,
                        save_fn, &h->dev);
    g_assert(h->dev);
    qpci_device_enable(h->dev);
    h->bar = qpci_iomap(h->dev, SHCA_BAR_REGS, NULL);
    qpci_msix_enable(h->dev);   /* vectors start masked: events pend */
}

static void hca_stop(Hca *h)
{
    qpci_msix_disable(h->dev);
    g_free(h->dev);
    qpci_free_pc(h->bus);
    alloc_destroy(&h->alloc);
    qtest_quit(h->qts);
}

/* Clear a pending, masked vector: unmask (it fires), then mask again. */
static bool hca_take_irq(Hca *h, unsigned vector)
{
    uint64_t ctrl = h->dev->msix_table_off + vector * PCI_MSIX_ENTRY_SIZE +
                    PCI_MSIX_ENTRY_VECTOR_CTRL;
    bool pending = qpci_msix_pending(h->dev, vector);

    qpci_io_writel(h->dev, h->dev->msix_table_bar, ctrl, 0);
    qpci_io_writel(h->dev, h->dev->msix_table_bar, ctrl,
                   PCI_MSIX_ENTRY_CTRL_MASKBIT);
    return pending;
}

static void hca_config_admin(Hca *h, uint64_t aq, uint32_t aq_log,
                             uint64_t acq, uint32_t acq_log)
{
    wr(h, SHCA_REG_AQ_BASE_LO, aq);
    wr(h, SHCA_REG_AQ_BASE_HI, aq >> 32);
    wr(h, SHCA_REG_ACQ_BASE_LO, acq);
    wr(h, SHCA_REG_ACQ_BASE_HI, acq >> 32);
    wr(h, SHCA_REG_AQ_LOG_SIZE, aq_log);
    wr(h, SHCA_REG_ACQ_LOG_SIZE, acq_log);
}

static void hca_enable(Hca *h)
{
    h->aq = guest_alloc(&h->alloc, SHCA_AQ_ENTRY_SIZE << AQ_LOG);
    h->acq = guest_alloc(&h->alloc, sizeof(struct shca_acq_entry) << ACQ_LOG);
    qtest_memset(h->qts, h->acq, 0, sizeof(struct shca_acq_entry) << ACQ_LOG);
    h->aq_tail = h->acq_head = 0;
    h->acq_phase = true;
    hca_config_admin(h, h->aq, AQ_LOG, h->acq, ACQ_LOG);
    wr(h, SHCA_REG_CTRL, SHCA_CTRL_EN);
    g_assert_cmphex(rd(h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
}

static void hca_post(Hca *h, struct shca_aq_entry *cmd)
{
    cmd->cmd_id = cpu_to_le16(h->next_id++);
    qtest_memwrite(h->qts, h->aq + h->aq_tail * SHCA_AQ_ENTRY_SIZE, cmd,
                   sizeof(*cmd));
    h->aq_tail = (h->aq_tail + 1) & ((1 << AQ_LOG) - 1);
    wr(h, SHCA_REG_AQ_TAIL, h->aq_tail);
}

/* Take the next completion if the device has written it. */
static bool hca_poll(Hca *h, struct shca_acq_entry *cqe)
{
    qtest_memread(h->qts, h->acq + h->acq_head * sizeof(*cqe), cqe,
                  sizeof(*cqe));
    if ((cqe->phase & SHCA_PHASE_BIT) != h->acq_phase) {
        return false;
    }
    h->acq_head = (h->acq_head + 1) & ((1 << ACQ_LOG) - 1);
    if (h->acq_head == 0) {
        h->acq_phase = !h->acq_phase;
    }
    wr(h, SHCA_REG_ACQ_HEAD, h->acq_head);
    return true;
}

/* Run one command; return its status, and its result through *result. */
static uint8_t hca_cmd(Hca *h, struct shca_aq_entry *cmd, uint32_t *result)
{
    struct shca_acq_entry cqe;
    uint16_t id = h->next_id;

    hca_post(h, cmd);
    g_assert(hca_poll(h, &cqe));
    g_assert_cmpuint(le16_to_cpu(cqe.cmd_id), ==, id);
    if (result) {
        *result = le32_to_cpu(cqe.result);
    }
    return cqe.status;
}

static uint8_t hca_simple(Hca *h, uint8_t opcode, uint32_t handle,
                          uint32_t *result)
{
    struct shca_aq_entry cmd = { .opcode = opcode };

    cmd.handle.handle = cpu_to_le32(handle);
    return hca_cmd(h, &cmd, result);
}

static uint8_t hca_create_eq(Hca *h, uint32_t eqn, uint16_t vector,
                             uint8_t log_size, uint64_t addr, uint32_t npages)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_CREATE_EQ };

    cmd.create_eq.eqn = cpu_to_le32(eqn);
    cmd.create_eq.vector = cpu_to_le16(vector);
    cmd.create_eq.log_size = log_size;
    cmd.create_eq.buf.addr = cpu_to_le64(addr);
    cmd.create_eq.buf.npages = cpu_to_le32(npages);
    cmd.create_eq.buf.page_shift = 12;
    cmd.create_eq.buf.flags = SHCA_BUF_DIRECT;
    return hca_cmd(h, &cmd, NULL);
}

static void test_identity(void)
{
    Hca h;

    hca_start(&h, ",vectors=6,db-pages=64");
    g_assert_cmphex(qpci_config_readw(h.dev, PCI_VENDOR_ID), ==,
                    SHCA_PCI_VENDOR_ID);
    g_assert_cmphex(qpci_config_readw(h.dev, PCI_DEVICE_ID), ==,
                    SHCA_PCI_DEVICE_ID);
    g_assert_cmphex(rd(&h, SHCA_REG_MAGIC), ==, SHCA_MAGIC);
    g_assert_cmphex(rd(&h, SHCA_REG_VERSION), ==, SHCA_VERSION);
    g_assert_cmphex(rd(&h, SHCA_REG_CAPS) & SHCA_CAP_ROCE_V2, ==,
                    SHCA_CAP_ROCE_V2);
    g_assert_cmphex(rd(&h, SHCA_REG_CAPS) & SHCA_CAP_QP, ==, 0);   /* 0.2 */
    g_assert_cmpuint(rd(&h, SHCA_REG_NUM_VECTORS), ==, 6);
    g_assert_cmpuint(qpci_msix_table_size(h.dev), ==, 6);
    g_assert_cmpuint(rd(&h, SHCA_REG_MAX_UCTX), ==, 63);
    g_assert_cmpuint(rd(&h, SHCA_REG_MAX_MSG_SIZE), >=, 1u << 30);
    g_assert_cmpuint(rd(&h, SHCA_REG_MAX_GID), >, 0);
    g_assert_cmphex(rd(&h, SHCA_REG_STATUS), ==, 0);
    g_assert_cmpuint(rd(&h, SHCA_REG_MTU), ==, 1500);
    /* default MAC from -device ...,mac= is 52:54:00:12:34:56 + n */
    g_assert_cmphex(rd(&h, SHCA_REG_MAC_LO) & 0xffffff, ==, 0x005452);
    /* read-only registers ignore writes */
    wr(&h, SHCA_REG_MAGIC, 0);
    g_assert_cmphex(rd(&h, SHCA_REG_MAGIC), ==, SHCA_MAGIC);
    hca_stop(&h);
}

static void test_admin_pd_uctx(void)
{
    uint32_t pd1, pd2, uctx;
    Hca h;

    hca_start(&h, NULL);
    hca_enable(&h);

    g_assert_cmpuint(hca_simple(&h, SHCA_AQ_ALLOC_PD, 0, &pd1), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&h, SHCA_AQ_ALLOC_PD, 0, &pd2), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(pd1, ==, 1);
    g_assert_cmpuint(pd2, ==, 2);
    g_assert(hca_take_irq(&h, SHCA_VEC_ADMIN));
    g_assert_cmpuint(hca_simple(&h, SHCA_AQ_DEALLOC_PD, pd1, NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&h, SHCA_AQ_DEALLOC_PD, pd1, NULL), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(hca_simple(&h, SHCA_AQ_DEALLOC_PD, 0, NULL), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(hca_simple(&h, SHCA_AQ_ALLOC_PD, 0, &pd1), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(pd1, ==, 1);     /* lowest free handle */

    g_assert_cmpuint(hca_simple(&h, SHCA_AQ_ALLOC_UCTX, 0, &uctx), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(uctx, ==, 1);
    g_assert_cmpuint(hca_simple(&h, SHCA_AQ_DEALLOC_UCTX, uctx, NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&h, SHCA_AQ_DEALLOC_UCTX, 300, NULL), ==,
                     SHCA_AQ_BAD_HANDLE);
    hca_stop(&h);
}

static void test_uctx_exhaustion(void)
{
    uint32_t uctx;
    Hca h;

    hca_start(&h, ",db-pages=4");
    hca_enable(&h);
    for (int i = 1; i <= 3; i++) {
        g_assert_cmpuint(hca_simple(&h, SHCA_AQ_ALLOC_UCTX, 0, &uctx), ==,
                         SHCA_AQ_OK);
        g_assert_cmpuint(uctx, ==, i);
    }
    g_assert_cmpuint(hca_simple(&h, SHCA_AQ_ALLOC_UCTX, 0, &uctx), ==,
                     SHCA_AQ_NO_RESOURCES);
    hca_stop(&h);
}

static void test_admin_malformed(void)
{
    struct shca_aq_entry cmd = { .opcode = 0x7f };
    uint32_t pd;
    Hca h;

    hca_start(&h, NULL);
    hca_enable(&h);

    g_assert_cmpuint(hca_cmd(&h, &cmd, NULL), ==, SHCA_AQ_BAD_OPCODE);
    cmd = (struct shca_aq_entry) { .opcode = SHCA_AQ_ALLOC_PD, .flags = 1 };
    g_assert_cmpuint(hca_cmd(&h, &cmd, NULL), ==, SHCA_AQ_BAD_OPCODE);
    cmd = (struct shca_aq_entry) { .opcode = SHCA_AQ_ALLOC_PD };
    cmd.raw[40] = 0xaa;     /* a byte the opcode does not define */
    g_assert_cmpuint(hca_cmd(&h, &cmd, NULL), ==, SHCA_AQ_BAD_OPCODE);

    /* a GID index past the table, unknown GID flags */
    cmd = (struct shca_aq_entry) { .opcode = SHCA_AQ_SET_GID };
    cmd.set_gid.index = cpu_to_le32(100000);
    cmd.set_gid.flags = cpu_to_le32(SHCA_GID_VALID);
    g_assert_cmpuint(hca_cmd(&h, &cmd, NULL), ==, SHCA_AQ_BAD_PARAM);
    cmd.set_gid.index = 0;
    cmd.set_gid.flags = cpu_to_le32(0x80);
    g_assert_cmpuint(hca_cmd(&h, &cmd, NULL), ==, SHCA_AQ_BAD_PARAM);

    /* the device is still fine */
    g_assert_cmpuint(hca_simple(&h, SHCA_AQ_ALLOC_PD, 0, &pd), ==,
                     SHCA_AQ_OK);
    g_assert_cmphex(rd(&h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&h);
}

static void test_eq_create_checks(void)
{
    uint64_t page;
    Hca h;

    hca_start(&h, NULL);
    hca_enable(&h);
    page = guest_alloc(&h.alloc, 4096);

    /* eqn past MAX_EQ, vectors reserved or past NUM_VECTORS, sizes */
    g_assert_cmpuint(hca_create_eq(&h, 1000, 2, 4, page, 1), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(hca_create_eq(&h, 0, 0, 4, page, 1), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(hca_create_eq(&h, 0, 8, 4, page, 1), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(hca_create_eq(&h, 0, 2, 0, page, 1), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(hca_create_eq(&h, 0, 2, 200, page, 1), ==,
                     SHCA_AQ_BAD_PARAM);
    /* 4096 entries do not fit in one page */
    g_assert_cmpuint(hca_create_eq(&h, 0, 2, 12, page, 1), ==,
                     SHCA_AQ_BAD_PARAM);
    /* addresses outside RAM, in MMIO, misaligned, wrapping */
    g_assert_cmpuint(hca_create_eq(&h, 0, 2, 4, RAM_TOP + 4096, 1), ==,
                     SHCA_AQ_BAD_ADDR);
    g_assert_cmpuint(hca_create_eq(&h, 0, 2, 4, 0xfee00000, 1), ==,
                     SHCA_AQ_BAD_ADDR);
    g_assert_cmpuint(hca_create_eq(&h, 0, 2, 4, page + 8, 1), ==,
                     SHCA_AQ_BAD_ADDR);
    g_assert_cmpuint(hca_create_eq(&h, 0, 2, 4, ~0xfffull, 1), ==,
                     SHCA_AQ_BAD_ADDR);

    g_assert_cmpuint(hca_create_eq(&h, 0, 2, 4, page, 1), ==, SHCA_AQ_OK);
    g_assert_cmpuint(hca_create_eq(&h, 0, 2, 4, page, 1), ==, SHCA_AQ_BUSY);
    g_assert_cmpuint(hca_simple(&h, SHCA_AQ_DESTROY_EQ, 0, NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&h, SHCA_AQ_DESTROY_EQ, 0, NULL), ==,
                     SHCA_AQ_BAD_HANDLE);
    hca_stop(&h);
}

/* A link change posts PORT_CHANGE to the EQ and interrupts once armed. */
static void test_eq_port_event(void)
{
    struct shca_eqe eqe;
    uint64_t page;
    Hca h;

    hca_start(&h, ",netdev=n0 -netdev user,id=n0");
    hca_enable(&h);
    page = guest_alloc(&h.alloc, 4096);
    qtest_memset(h.qts, page, 0, 4096);
    g_assert_cmpuint(hca_create_eq(&h, 3, 4, 2, page, 1), ==, SHCA_AQ_OK);
    wr(&h, SHCA_REG_EQ_DB(3), SHCA_EQ_DB_ARM);
    hca_take_irq(&h, 4);

    qtest_qmp_assert_success(h.qts, "{'execute': 'set_link', 'arguments':"
                             " {'name': 'hca', 'up': false}}");
    qtest_memread(h.qts, page, &eqe, sizeof(eqe));
    g_assert_cmpuint(eqe.type, ==, SHCA_EQE_PORT_CHANGE);
    g_assert_cmpuint(eqe.phase, ==, SHCA_PHASE_BIT);
    g_assert_cmpuint(le64_to_cpu(eqe.data) & SHCA_PORT_LINK_UP, ==, 0);
    g_assert_cmpuint(rd(&h, SHCA_REG_PORT_STATUS), ==, 0);
    g_assert(hca_take_irq(&h, 4));

    /* disarmed now: the next event is written but does not interrupt */
    qtest_qmp_assert_success(h.qts, "{'execute': 'set_link', 'arguments':"
                             " {'name': 'hca', 'up': true}}");
    qtest_memread(h.qts, page + sizeof(eqe), &eqe, sizeof(eqe));
    g_assert_cmpuint(le64_to_cpu(eqe.data), ==, SHCA_PORT_LINK_UP);
    g_assert(!hca_take_irq(&h, 4));
    /* consume one, re-arm with one still pending: interrupts at once */
    wr(&h, SHCA_REG_EQ_DB(3), 1 | SHCA_EQ_DB_ARM);
    g_assert(hca_take_irq(&h, 4));

    /*
     * A 4-entry EQ holds 3 unread events: with slot 1 unread, events land
     * in slots 2 and 3 and the next two are dropped, not written over it.
     */
    wr(&h, SHCA_REG_EQ_DB(3), 1);
    for (int i = 0; i < 4; i++) {
        qtest_qmp_assert_success(h.qts, "{'execute': 'set_link', 'arguments':"
                                 " {'name': 'hca', 'up': %i}}", i % 2);
    }
    qtest_memread(h.qts, page + 3 * sizeof(eqe), &eqe, sizeof(eqe));
    g_assert_cmpuint(eqe.phase, ==, SHCA_PHASE_BIT);
    g_assert_cmpuint(le64_to_cpu(eqe.data), ==, SHCA_PORT_LINK_UP);
    qtest_memread(h.qts, page, &eqe, sizeof(eqe));
    g_assert_cmpuint(eqe.phase, ==, SHCA_PHASE_BIT);  /* first pass's */

    /* all consumed: the next event wraps to slot 0 with phase 0 */
    wr(&h, SHCA_REG_EQ_DB(3), 0);
    qtest_qmp_assert_success(h.qts, "{'execute': 'set_link', 'arguments':"
                             " {'name': 'hca', 'up': false}}");
    qtest_memread(h.qts, page, &eqe, sizeof(eqe));
    g_assert_cmpuint(eqe.phase, ==, 0);
    g_assert_cmpuint(eqe.type, ==, SHCA_EQE_PORT_CHANGE);
    g_assert_cmphex(rd(&h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&h);
}

static void test_bad_admin_config(void)
{
    uint64_t page;
    Hca h;

    hca_start(&h, NULL);
    page = guest_alloc(&h.alloc, 4096);

    /* AQ outside guest RAM */
    hca_config_admin(&h, RAM_TOP + 0x100000, 3, page, 3);
    wr(&h, SHCA_REG_CTRL, SHCA_CTRL_EN);
    g_assert_cmphex(rd(&h, SHCA_REG_STATUS), ==, SHCA_STATUS_FATAL);
    g_assert_cmpuint(rd(&h, SHCA_REG_FATAL_CODE), ==, SHCA_FATAL_AQ_CONFIG);

    /* clearing EN leaves the fatal state; then a size too large */
    wr(&h, SHCA_REG_CTRL, 0);
    g_assert_cmphex(rd(&h, SHCA_REG_STATUS), ==, 0);
    hca_config_admin(&h, page, 30, page, 3);
    wr(&h, SHCA_REG_CTRL, SHCA_CTRL_EN);
    g_assert_cmpuint(rd(&h, SHCA_REG_FATAL_CODE), ==, SHCA_FATAL_AQ_CONFIG);

    /* misaligned base, zero size */
    wr(&h, SHCA_REG_RESET, SHCA_RESET_MAGIC);
    hca_config_admin(&h, page + 64, 3, page, 0);
    wr(&h, SHCA_REG_CTRL, SHCA_CTRL_EN);
    g_assert_cmpuint(rd(&h, SHCA_REG_FATAL_CODE), ==, SHCA_FATAL_AQ_CONFIG);

    /* admin registers are locked while enabled */
    wr(&h, SHCA_REG_RESET, SHCA_RESET_MAGIC);
    hca_enable(&h);
    wr(&h, SHCA_REG_AQ_BASE_LO, 0x5000);
    g_assert_cmphex(rd(&h, SHCA_REG_AQ_BASE_LO), ==, (uint32_t)h.aq);
    hca_stop(&h);
}

static void test_ring_overrun(void)
{
    uint32_t pd;
    Hca h;

    hca_start(&h, NULL);
    hca_enable(&h);

    wr(&h, SHCA_REG_AQ_TAIL, 1 << AQ_LOG);
    g_assert_cmphex(rd(&h, SHCA_REG_STATUS), ==,
                    SHCA_STATUS_RDY | SHCA_STATUS_FATAL);
    g_assert_cmpuint(rd(&h, SHCA_REG_FATAL_CODE), ==, SHCA_FATAL_AQ_DOORBELL);

    /* the reset register brings it back */
    wr(&h, SHCA_REG_RESET, SHCA_RESET_MAGIC);
    g_assert_cmphex(rd(&h, SHCA_REG_STATUS), ==, 0);
    g_assert_cmphex(rd(&h, SHCA_REG_CTRL), ==, 0);
    g_assert_cmphex(rd(&h, SHCA_REG_AQ_BASE_LO), ==, 0);
    hca_enable(&h);
    g_assert_cmpuint(hca_simple(&h, SHCA_AQ_ALLOC_PD, 0, &pd), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(pd, ==, 1);      /* the reset forgot the old PDs */

    wr(&h, SHCA_REG_ACQ_HEAD, 0xffffffff);
    g_assert_cmpuint(rd(&h, SHCA_REG_FATAL_CODE), ==, SHCA_FATAL_AQ_DOORBELL);
    hca_stop(&h);
}

/* With the ACQ full the device waits for ACQ_HEAD instead of overwriting. */
static void test_acq_backpressure(void)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_ALLOC_PD };
    struct shca_acq_entry cqe;
    Hca h;

    hca_start(&h, NULL);
    h.aq = guest_alloc(&h.alloc, 4096);
    h.acq = guest_alloc(&h.alloc, 4096);
    qtest_memset(h.qts, h.acq, 0, 4096);
    h.acq_phase = true;
    hca_config_admin(&h, h.aq, AQ_LOG, h.acq, 2);   /* 4 entries: 3 usable */
    wr(&h, SHCA_REG_CTRL, SHCA_CTRL_EN);

    for (int i = 0; i < 5; i++) {
        hca_post(&h, &cmd);
    }
    qtest_memread(h.qts, h.acq + 3 * sizeof(cqe), &cqe, sizeof(cqe));
    g_assert_cmpuint(cqe.phase, ==, 0);     /* slot 3 not written */

    for (uint16_t id = 0; id < 5; id++) {
        qtest_memread(h.qts, h.acq + (h.acq_head % 4) * sizeof(cqe), &cqe,
                      sizeof(cqe));
        g_assert_cmpuint(cqe.phase & 1, ==, h.acq_phase);
        g_assert_cmpuint(le16_to_cpu(cqe.cmd_id), ==, id);
        g_assert_cmpuint(cqe.status, ==, SHCA_AQ_OK);
        h.acq_head = (h.acq_head + 1) % 4;
        if (h.acq_head == 0) {
            h.acq_phase = !h.acq_phase;
        }
        wr(&h, SHCA_REG_ACQ_HEAD, h.acq_head);
    }
    g_assert_cmphex(rd(&h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&h);
}

/* The device never takes MMIO, its own BARs included, for guest memory. */
static void test_mmio_is_not_dma(void)
{
    Hca h;
    uint64_t bar0;

    hca_start(&h, NULL);
    bar0 = qpci_config_readl(h.dev, PCI_BASE_ADDRESS_0) & ~0xfull;
    /* the device's own BAR is not guest RAM: refused at enable */
    hca_config_admin(&h, bar0, 1, bar0 + 0x1000, 1);
    wr(&h, SHCA_REG_CTRL, SHCA_CTRL_EN);
    g_assert_cmpuint(rd(&h, SHCA_REG_FATAL_CODE), ==, SHCA_FATAL_AQ_CONFIG);
    hca_stop(&h);
}

/* NIC rings over a -netdev dgram socket that sends to itself. */
typedef struct Nic {
    uint64_t txr, rxr, txbuf, rxbuf;
    uint32_t tx_tail, rx_tail;
} Nic;

#define NIC_LOG     2
#define NIC_BUF     2048
#define NIC_TX_BUF  4096

static void nic_start(Hca *h, Nic *n)
{
    n->txr = guest_alloc(&h->alloc, 4096);
    n->rxr = guest_alloc(&h->alloc, 4096);
    n->txbuf = guest_alloc(&h->alloc, NIC_TX_BUF);
    n->rxbuf = guest_alloc(&h->alloc, NIC_BUF << NIC_LOG);
    qtest_memset(h->qts, n->txr, 0, 4096);
    qtest_memset(h->qts, n->rxr, 0, 4096);
    n->tx_tail = n->rx_tail = 0;
    wr(h, SHCA_REG_NIC_TX_BASE_LO, n->txr);
    wr(h, SHCA_REG_NIC_TX_BASE_HI, n->txr >> 32);
    wr(h, SHCA_REG_NIC_TX_LOG_SIZE, NIC_LOG);
    wr(h, SHCA_REG_NIC_RX_BASE_LO, n->rxr);
    wr(h, SHCA_REG_NIC_RX_BASE_HI, n->rxr >> 32);
    wr(h, SHCA_REG_NIC_RX_LOG_SIZE, NIC_LOG);
    wr(h, SHCA_REG_NIC_CTRL, SHCA_NIC_TX_EN | SHCA_NIC_RX_EN);
    wr(h, SHCA_REG_NIC_IRQ, SHCA_NIC_IRQ_EN);
}

static void nic_post_rx(Hca *h, Nic *n)
{
    struct shca_nic_rxd rxd = {
        .addr = cpu_to_le64(n->rxbuf + n->rx_tail * NIC_BUF),
        .buf_len = cpu_to_le16(NIC_BUF),
    };

    qtest_memwrite(h->qts, n->rxr + n->rx_tail * sizeof(rxd), &rxd,
                   sizeof(rxd));
    n->rx_tail = (n->rx_tail + 1) & ((1 << NIC_LOG) - 1);
    wr(h, SHCA_REG_NIC_RX_TAIL, n->rx_tail);
}

/* Send a frame; return the descriptor's flags as written back. */
static uint8_t nic_send(Hca *h, Nic *n, const void *frame, uint16_t len)
{
    struct shca_nic_txd txd = {
        .addr = cpu_to_le64(n->txbuf),
        .len = cpu_to_le16(len),
    };
    uint64_t slot = n->txr + n->tx_tail * sizeof(txd);

    qtest_memwrite(h->qts, n->txbuf, frame, MIN(len, NIC_TX_BUF));
    qtest_memwrite(h->qts, slot, &txd, sizeof(txd));
    n->tx_tail = (n->tx_tail + 1) & ((1 << NIC_LOG) - 1);
    wr(h, SHCA_REG_NIC_TX_TAIL, n->tx_tail);
    qtest_memread(h->qts, slot, &txd, sizeof(txd));
    return txd.flags;
}

/* Wait (bounded) for RX descriptor i to be done; return its length. */
static uint16_t nic_wait_rx(Hca *h, Nic *n, uint32_t i)
{
    struct shca_nic_rxd rxd;

    for (int tries = 0; tries < 500; tries++) {
        qtest_memread(h->qts, n->rxr + i * sizeof(rxd), &rxd, sizeof(rxd));
        if (rxd.flags & SHCA_NIC_DESC_DONE) {
            g_assert_cmpuint(rxd.flags, ==, SHCA_NIC_DESC_DONE);
            return le16_to_cpu(rxd.len);
        }
        g_usleep(10 * 1000);
        qtest_clock_step(h->qts, 1000);
    }
    g_assert_not_reached();
}

/* Ethernet + IPv4 + UDP to dst_ip:dst_port, padded to 64 bytes. */
static size_t make_udp_frame(uint8_t *f, const uint8_t *mac, uint32_t dst_ip,
                             uint16_t dst_port)
{
    memset(f, 0, 64);
    memcpy(f, mac, 6);
    stw_be_p(f + 12, 0x0800);
    f[14] = 0x45;                       /* IPv4, 20-byte header */
    stw_be_p(f + 16, 64 - 14);
    f[22] = 64;                         /* TTL */
    f[23] = 17;                         /* UDP */
    stl_be_p(f + 26, 0x0a000063);       /* 10.0.0.99 */
    stl_be_p(f + 30, dst_ip);
    stw_be_p(f + 34, 4791);
    stw_be_p(f + 36, dst_port);
    stw_be_p(f + 38, 64 - 34);
    return 64;
}

static char *dgram_loop_netdev(void)
{
    int port = 20000 + g_random_int_range(0, 40000);

    return g_strdup_printf(",netdev=n0 -netdev dgram,id=n0,"
                           "local.type=inet,local.host=127.0.0.1,"
                           "local.port=%d,remote.type=inet,"
                           "remote.host=127.0.0.1,remote.port=%d",
                           port, port);
}

static void test_nic_loopback(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_SET_GID };
    uint8_t mac[6], frame[64], got[64];
    uint8_t big[3000] = { 0 };
    Hca h;
    Nic n;

    hca_start(&h, netdev);
    hca_enable(&h);
    nic_start(&h, &n);
    stl_le_p(mac, rd(&h, SHCA_REG_MAC_LO));
    stw_le_p(mac + 4, rd(&h, SHCA_REG_MAC_HI));

    /* GID 0 = 10.0.0.1: RoCEv2 frames to it are not the NIC's */
    cmd.set_gid.flags = cpu_to_le32(SHCA_GID_VALID);
    cmd.set_gid.gid[10] = cmd.set_gid.gid[11] = 0xff;
    stl_be_p(cmd.set_gid.gid + 12, 0x0a000001);
    g_assert_cmpuint(hca_cmd(&h, &cmd, NULL), ==, SHCA_AQ_OK);

    nic_post_rx(&h, &n);
    nic_post_rx(&h, &n);

    /* an ordinary frame comes back whole, with an interrupt */
    make_udp_frame(frame, mac, 0x0a000001, 5000);
    g_assert_cmpuint(nic_send(&h, &n, frame, sizeof(frame)), ==,
                     SHCA_NIC_DESC_DONE);
    g_assert(hca_take_irq(&h, SHCA_VEC_NIC));
    g_assert_cmpuint(nic_wait_rx(&h, &n, 0), ==, sizeof(frame));
    qtest_memread(h.qts, n.rxbuf, got, sizeof(got));
    g_assert(memcmp(got, frame, sizeof(frame)) == 0);
    g_assert_cmphex(rd(&h, SHCA_REG_NIC_RX_HEAD), ==, 1);

    /*
     * RoCEv2 to our GID goes to the transport (dropped in 0.1); a too-short
     * TX frame and a frame longer than the RX buffer do not reach buffer 1
     * either, while RoCEv2 to another address does: the first frame to
     * arrive there is the last one sent.
     */
    wr(&h, SHCA_REG_NIC_IRQ, SHCA_NIC_IRQ_PENDING | SHCA_NIC_IRQ_EN);
    make_udp_frame(frame, mac, 0x0a000001, 4791);
    g_assert_cmpuint(nic_send(&h, &n, frame, sizeof(frame)), ==,
                     SHCA_NIC_DESC_DONE);
    g_assert_cmpuint(nic_send(&h, &n, frame, 5), ==,
                     SHCA_NIC_DESC_DONE | SHCA_NIC_DESC_ERR);
    memcpy(big, frame, sizeof(frame));      /* too long for the RX buffer */
    g_assert_cmpuint(nic_send(&h, &n, big, sizeof(big)), ==,
                     SHCA_NIC_DESC_DONE);
    make_udp_frame(frame, mac, 0x0a000002, 4791);
    g_assert_cmpuint(nic_send(&h, &n, frame, sizeof(frame)), ==,
                     SHCA_NIC_DESC_DONE);
    g_assert_cmpuint(nic_wait_rx(&h, &n, 1), ==, sizeof(frame));
    qtest_memread(h.qts, n.rxbuf + NIC_BUF, got, sizeof(got));
    g_assert(memcmp(got, frame, sizeof(frame)) == 0);
    hca_stop(&h);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/softhca/identity", test_identity);
    qtest_add_func("/softhca/admin/pd-uctx", test_admin_pd_uctx);
    qtest_add_func("/softhca/admin/uctx-exhaustion", test_uctx_exhaustion);
    qtest_add_func("/softhca/admin/malformed", test_admin_malformed);
    qtest_add_func("/softhca/admin/bad-config", test_bad_admin_config);
    qtest_add_func("/softhca/admin/ring-overrun", test_ring_overrun);
    qtest_add_func("/softhca/admin/acq-backpressure", test_acq_backpressure);
    qtest_add_func("/softhca/admin/mmio-is-not-dma", test_mmio_is_not_dma);
    qtest_add_func("/softhca/eq/create-checks", test_eq_create_checks);
    qtest_add_func("/softhca/eq/port-event", test_eq_port_event);
    qtest_add_func("/softhca/nic/loopback", test_nic_loopback);

    return g_test_run();
}
