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
#include <poll.h>
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "libqos/malloc-pc.h"
#include "qemu/bswap.h"
#include "qobject/qdict.h"
#include "hw/pci/pci_regs.h"
#include "hw/softhca/softhca_hw.h"
#include "softhca-qtest.h"

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
    g_assert_cmphex(rd(&h, SHCA_REG_CAPS) & SHCA_CAP_QP, ==, SHCA_CAP_QP);
    g_assert_cmphex(rd(&h, SHCA_REG_CAPS) & SHCA_CAP_DGRAM, ==,
                    SHCA_CAP_DGRAM);
    g_assert_cmpuint(rd(&h, SHCA_REG_MAX_MCAST_GRP), ==, 64);
    g_assert_cmpuint(rd(&h, SHCA_REG_MAX_MCAST_QP_ATTACH), ==, 8);
    g_assert_cmpuint(rd(&h, SHCA_REG_MAX_FAST_REG_PAGES), ==, 512);
    /* as many outstanding READs as rxe: perftest asks for the peer's */
    g_assert_cmpuint(rd(&h, SHCA_REG_MAX_QP_RD_ATOM), ==, 128);
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
    /* a PD belongs to a context that exists, which it keeps busy */
    g_assert_cmpuint(hca_simple(&h, SHCA_AQ_ALLOC_PD, 2, &pd2), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(hca_simple(&h, SHCA_AQ_ALLOC_PD, uctx, &pd2), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&h, SHCA_AQ_DEALLOC_UCTX, uctx, NULL), ==,
                     SHCA_AQ_BUSY);
    g_assert_cmpuint(hca_simple(&h, SHCA_AQ_DEALLOC_PD, pd2, NULL), ==,
                     SHCA_AQ_OK);
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

/*
 * Issue 11, defect 4: one AQ_TAIL write ran every command posted, up to a
 * whole ring, in the MMIO write (4095 costly REG_MRs held QEMU 12 s).  A
 * doorbell now runs SOFTHCA_AQ_BURST of them and a bottom half the rest:
 * 63 commands behind one doorbell all complete, in order.
 */
static void test_admin_burst_continues(void)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_ALLOC_PD };
    struct shca_acq_entry cqe;
    const unsigned n = 63;
    Hca h;

    hca_start(&h, NULL);
    h.aq = guest_alloc(&h.alloc, 4096);
    h.acq = guest_alloc(&h.alloc, 4096);
    qtest_memset(h.qts, h.acq, 0, 4096);
    hca_config_admin(&h, h.aq, 6, h.acq, 6);
    wr(&h, SHCA_REG_CTRL, SHCA_CTRL_EN);
    for (uint16_t id = 0; id < n; id++) {
        cmd.cmd_id = cpu_to_le16(id);
        qtest_memwrite(h.qts, h.aq + id * SHCA_AQ_ENTRY_SIZE, &cmd,
                       sizeof(cmd));
    }
    wr(&h, SHCA_REG_AQ_TAIL, n);
    for (uint16_t id = 0; id < n; id++) {
        for (int t = 0; t < 100; t++) {
            qtest_memread(h.qts, h.acq + id * sizeof(cqe), &cqe, sizeof(cqe));
            if (cqe.phase & SHCA_PHASE_BIT) {
                break;
            }
            qtest_clock_step(h.qts, 1000);
        }
        g_assert_cmpuint(cqe.phase & SHCA_PHASE_BIT, ==, SHCA_PHASE_BIT);
        g_assert_cmpuint(le16_to_cpu(cqe.cmd_id), ==, id);
        g_assert_cmpuint(cqe.status, ==, SHCA_AQ_OK);
        g_assert_cmpuint(le32_to_cpu(cqe.result), ==, id + 1u);
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

/*
 * The far end of the port's link: a UDP socket of the test's own, so that
 * a test sees what leaves the port and can put frames on the wire.
 */
typedef struct Wire {
    int fd;
    int dev_port;               /* where the device's netdev listens */
    char *netdev;               /* the device's -netdev options */
} Wire;

static void wire_open(Wire *w)
{
    struct sockaddr_in a = {
        .sin_family = AF_INET,
        .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
    };
    socklen_t len = sizeof(a);
    int rcvbuf = 4 << 20;

    w->fd = socket(AF_INET, SOCK_DGRAM, 0);
    g_assert_cmpint(w->fd, >=, 0);
    /*
     * A requester sends up to 128 frames in one go: with the host's default
     * buffer (208 KiB) a test that reads them a little late, on a busy
     * host, lost a third of them.  (The kernel caps this at rmem_max.)
     */
    setsockopt(w->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
    g_assert_cmpint(bind(w->fd, (struct sockaddr *)&a, sizeof(a)), ==, 0);
    g_assert_cmpint(getsockname(w->fd, (struct sockaddr *)&a, &len), ==, 0);
    w->dev_port = 20000 + g_random_int_range(0, 40000);
    w->netdev = g_strdup_printf(",netdev=n0 -netdev dgram,id=n0,"
                                "local.type=inet,local.host=127.0.0.1,"
                                "local.port=%d,remote.type=inet,"
                                "remote.host=127.0.0.1,remote.port=%d",
                                w->dev_port, ntohs(a.sin_port));
}

/* The next frame off the wire within wait_ms: its length, or 0 for none. */
static size_t wire_recv(Wire *w, uint8_t *buf, size_t size, int wait_ms)
{
    struct pollfd pfd = { .fd = w->fd, .events = POLLIN };
    ssize_t n;

    if (poll(&pfd, 1, wait_ms) != 1) {
        return 0;
    }
    n = recv(w->fd, buf, size, 0);
    g_assert_cmpint(n, >, 0);
    return n;
}

static void wire_send(Wire *w, const void *frame, size_t len)
{
    struct sockaddr_in a = {
        .sin_family = AF_INET,
        .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
        .sin_port = htons(w->dev_port),
    };

    g_assert_cmpint(sendto(w->fd, frame, len, 0, (struct sockaddr *)&a,
                           sizeof(a)), ==, len);
}

static void wire_close(Wire *w)
{
    close(w->fd);
    g_free(w->netdev);
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

static void test_rdma_caps_gate(void)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_CREATE_CQ };
    Rdma r;

    /* x-caps-qp=off: a version 0.1 device, for drivers to test against */
    hca_start(&r.h, ",x-caps-qp=off");
    hca_enable(&r.h);
    g_assert_cmphex(rd(&r.h, SHCA_REG_CAPS) & SHCA_CAP_QP, ==, 0);
    g_assert_cmphex(rd(&r.h, SHCA_REG_CAPS) & SHCA_CAP_DGRAM, ==, 0);
    g_assert_cmphex(rd(&r.h, SHCA_REG_VERSION), ==, 1);
    g_assert_cmpuint(rd(&r.h, SHCA_REG_MAX_MCAST_GRP), ==, 0);
    g_assert_cmpuint(rd(&r.h, SHCA_REG_MAX_FAST_REG_PAGES), ==, 0);
    for (uint8_t op = SHCA_AQ_CREATE_CQ; op <= SHCA_AQ_DETACH_MCAST; op++) {
        cmd.opcode = op;
        g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_OPCODE);
    }
    hca_stop(&r.h);

    rdma_start(&r);
    g_assert_cmphex(rd(&r.h, SHCA_REG_CAPS) & SHCA_CAP_QP, ==, SHCA_CAP_QP);
    hca_stop(&r.h);
}

static void test_cq_create_checks(void)
{
    struct shca_aq_entry cmd;
    uint64_t page, qbuf;
    uint32_t cqn, cqn2, qpn, uctx;
    Rdma r;

    rdma_start(&r);
    page = guest_alloc(&r.h.alloc, 4096);
    qbuf = guest_alloc(&r.h.alloc, 8192);

    /* EQs and contexts that do not exist */
    g_assert_cmpuint(rdma_create_cq(&r, 0, 5, 4, page, 1, &cqn), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(rdma_create_cq(&r, 0, 1000, 4, page, 1, &cqn), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(rdma_create_cq(&r, 7, 1, 4, page, 1, &cqn), ==,
                     SHCA_AQ_BAD_HANDLE);
    /* sizes: past MAX_CQE, absurd, ring + record not fitting the buffer */
    g_assert_cmpuint(rdma_create_cq(&r, 0, 1, 17, page, 1, &cqn), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_create_cq(&r, 0, 1, 200, page, 1, &cqn), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_create_cq(&r, 0, 1, 7, page, 1, &cqn), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_create_cq(&r, 0, 1, 4, RAM_TOP, 1, &cqn), ==,
                     SHCA_AQ_BAD_ADDR);
    cmd = (struct shca_aq_entry) { .opcode = SHCA_AQ_CREATE_CQ };
    cmd.create_cq.eqn = cpu_to_le32(1);
    cmd.create_cq.log_size = 4;
    cmd.create_cq.rsvd[3] = 1;
    buf_direct(&cmd.create_cq.buf, page, 1);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_PARAM);

    /* CQNs from 0, lowest free first */
    g_assert_cmpuint(rdma_create_cq(&r, 0, 1, 6, page, 1, &cqn), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(cqn, ==, 0);
    g_assert_cmpuint(rdma_create_cq(&r, 0, 1, 6, page, 1, &cqn2), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(cqn2, ==, 1);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DESTROY_CQ, 0, NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DESTROY_CQ, 0, NULL), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DESTROY_CQ, 100000, NULL), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(rdma_create_cq(&r, 0, 1, 6, page, 1, &cqn), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(cqn, ==, 0);

    /* BUSY while a QP completes to it; the PD is busy as well */
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_RC, 0, 1, qbuf, qbuf + 4096);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, &qpn), ==, SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DESTROY_CQ, 0, NULL), ==,
                     SHCA_AQ_BUSY);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DESTROY_CQ, 1, NULL), ==,
                     SHCA_AQ_BUSY);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEALLOC_PD, r.pd, NULL), ==,
                     SHCA_AQ_BUSY);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DESTROY_QP, qpn, NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DESTROY_CQ, 0, NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DESTROY_CQ, 1, NULL), ==,
                     SHCA_AQ_OK);

    /* a context with a CQ cannot go */
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_ALLOC_UCTX, 0, &uctx), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(rdma_create_cq(&r, uctx, 1, 6, page, 1, &cqn), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEALLOC_UCTX, uctx, NULL), ==,
                     SHCA_AQ_BUSY);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DESTROY_CQ, cqn, NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEALLOC_UCTX, uctx, NULL), ==,
                     SHCA_AQ_OK);
    hca_stop(&r.h);
}

static void test_qp_create_checks(void)
{
    struct shca_aq_entry cmd;
    uint32_t cq, ucq, uctx, qpn;
    uint64_t cqbuf, sq, rq;
    Rdma r;

    rdma_start(&r);
    cq = rdma_cq(&r, 0, 4, &cqbuf);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_ALLOC_UCTX, 0, &uctx), ==,
                     SHCA_AQ_OK);
    ucq = rdma_cq(&r, uctx, 4, &cqbuf);
    sq = guest_alloc(&r.h.alloc, 4096);
    rq = guest_alloc(&r.h.alloc, 4096);

    /* handles: PD, CQs, context */
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_RC, cq, cq, sq, rq);
    cmd.create_qp.pdn = cpu_to_le32(0);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_HANDLE);
    cmd.create_qp.pdn = cpu_to_le32(99);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_HANDLE);
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_RC, cq, 77, sq, rq);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_HANDLE);
    rdma_qp_cmd(&r, &cmd, 9, SHCA_QPT_RC, cq, cq, sq, rq);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_HANDLE);
    /* a CQ of another context */
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_RC, cq, ucq, sq, rq);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_PARAM);
    rdma_qp_cmd(&r, &cmd, uctx, SHCA_QPT_RC, cq, ucq, sq, rq);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_PARAM);
    /* a PD of another context, either way */
    rdma_qp_cmd(&r, &cmd, uctx, SHCA_QPT_RC, ucq, ucq, sq, rq);
    cmd.create_qp.pdn = cpu_to_le32(r.pd);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_PARAM);
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_RC, cq, cq, sq, rq);
    cmd.create_qp.pdn = cpu_to_le32(rdma_user_pd(&r, uctx));
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_PARAM);
    /* types: unknown, GSI for a user context */
    rdma_qp_cmd(&r, &cmd, 0, 0x08, cq, cq, sq, rq);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_PARAM);
    rdma_qp_cmd(&r, &cmd, uctx, SHCA_QPT_GSI, ucq, ucq, sq, rq);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_PARAM);
    /* geometry: strides, sizes, buffers */
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_RC, cq, cq, sq, rq);
    cmd.create_qp.sq_wqe_shift = 5;
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_PARAM);
    cmd.create_qp.sq_wqe_shift = 12;
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_PARAM);
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_RC, cq, cq, sq, rq);
    cmd.create_qp.rq_wqe_shift = 3;
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_PARAM);
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_RC, cq, cq, sq, rq);
    cmd.create_qp.sq_log_size = 15;     /* 32768 > MAX_QP_WR */
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_PARAM);
    cmd.create_qp.sq_log_size = 7;      /* 128 x 64 bytes > one page */
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_PARAM);
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_RC, cq, cq, sq, RAM_TOP);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_ADDR);
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_RC, cq, cq, sq, 0);
    cmd.create_qp.rq_log_size = 2;      /* no RQ buffer, but a size */
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_PARAM);
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_RC, cq, cq, sq, rq);
    cmd.create_qp.srqn = cpu_to_le16(1);  /* an srqn without flag SRQ */
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_PARAM);

    /* QPNs from 2; GSI is QP 1, once; a QP may have no RQ */
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_RC, cq, cq, sq, rq);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, &qpn), ==, SHCA_AQ_OK);
    g_assert_cmpuint(qpn, ==, 2);
    g_assert_cmpuint(rdma_state(&r, qpn), ==, SHCA_QPS_RESET);
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_UC, cq, cq, sq, 0);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, &qpn), ==, SHCA_AQ_OK);
    g_assert_cmpuint(qpn, ==, 3);
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_GSI, cq, cq, sq, rq);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, &qpn), ==, SHCA_AQ_OK);
    g_assert_cmpuint(qpn, ==, 1);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, &qpn), ==, SHCA_AQ_BUSY);
    rdma_qp_cmd(&r, &cmd, uctx, SHCA_QPT_UD, ucq, ucq, sq, rq);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, &qpn), ==, SHCA_AQ_OK);
    g_assert_cmpuint(qpn, ==, 4);

    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DESTROY_QP, 2, NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DESTROY_QP, 2, NULL), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DESTROY_QP, 0, NULL), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DESTROY_QP, 0xffffffff, NULL),
                     ==, SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(rdma_state(&r, 3), ==, SHCA_QPS_RESET);

    /* a reset forgets every object */
    wr(&r.h, SHCA_REG_RESET, SHCA_RESET_MAGIC);
    hca_enable(&r.h);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DESTROY_QP, 3, NULL), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DESTROY_CQ, cq, NULL), ==,
                     SHCA_AQ_BAD_HANDLE);
    hca_stop(&r.h);
}

static void test_qp_modify_path(void)
{
    struct shca_aq_entry cmd;
    struct shca_qp_attr a, q;
    uint32_t cq, qpn;
    uint64_t cqbuf, bufs;
    Rdma r;

    rdma_start(&r);
    cq = rdma_cq(&r, 0, 4, &cqbuf);
    bufs = guest_alloc(&r.h.alloc, 8192);
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_RC, cq, cq, bufs, bufs + 4096);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, &qpn), ==, SHCA_AQ_OK);

    a = rc_attr(SHCA_QPS_INIT);
    g_assert_cmpuint(rdma_modify(&r, qpn, RC_INIT_MASK, &a), ==, SHCA_AQ_OK);
    g_assert_cmpuint(rdma_query(&r, qpn, &q), ==, SHCA_AQ_OK);
    g_assert_cmpuint(q.state, ==, SHCA_QPS_INIT);
    g_assert_cmphex(le32_to_cpu(q.access), ==,
                    SHCA_ACCESS_REMOTE_WRITE | SHCA_ACCESS_REMOTE_READ);
    /* INIT -> INIT changes the access rights only */
    a.access = cpu_to_le32(SHCA_ACCESS_REMOTE_READ);
    g_assert_cmpuint(rdma_modify(&r, qpn, SHCA_QP_ATTR_ACCESS, &a), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(rdma_query(&r, qpn, &q), ==, SHCA_AQ_OK);
    g_assert_cmpuint(q.state, ==, SHCA_QPS_INIT);
    g_assert_cmphex(le32_to_cpu(q.access), ==, SHCA_ACCESS_REMOTE_READ);

    a.state = SHCA_QPS_RTR;
    g_assert_cmpuint(rdma_modify(&r, qpn, RC_RTR_MASK, &a), ==, SHCA_AQ_OK);
    g_assert_cmpuint(rdma_query(&r, qpn, &q), ==, SHCA_AQ_OK);
    g_assert_cmpuint(q.state, ==, SHCA_QPS_RTR);
    g_assert_cmpuint(q.path_mtu, ==, 3);
    g_assert_cmphex(le32_to_cpu(q.dest_qpn), ==, 0x123456);
    g_assert_cmphex(le32_to_cpu(q.rq_psn), ==, 0xabcdef);
    g_assert_cmpuint(q.max_dest_rd_atomic, ==, 8);
    g_assert_cmpuint(q.min_rnr_timer, ==, 12);
    g_assert(memcmp(q.av.dgid, a.av.dgid, 16) == 0);
    g_assert(memcmp(q.av.dmac, a.av.dmac, 6) == 0);
    g_assert_cmpuint(q.av.hop_limit, ==, 64);
    g_assert_cmphex(le32_to_cpu(q.av.flow_label), ==, 0x12345);
    g_assert_cmpuint(le16_to_cpu(q.av.sgid_index), ==, 0);
    g_assert_cmphex(le16_to_cpu(q.av.udp_sport), ==, 0xc000);

    a.state = SHCA_QPS_RTS;
    g_assert_cmpuint(rdma_modify(&r, qpn, RC_RTS_MASK, &a), ==, SHCA_AQ_OK);
    g_assert_cmpuint(rdma_query(&r, qpn, &q), ==, SHCA_AQ_OK);
    g_assert_cmpuint(q.state, ==, SHCA_QPS_RTS);
    g_assert_cmphex(le32_to_cpu(q.sq_psn), ==, 0x100);
    g_assert_cmphex(le32_to_cpu(q.rq_psn), ==, 0xabcdef);
    g_assert_cmpuint(q.timeout, ==, 14);
    g_assert_cmpuint(q.retry_cnt, ==, 7);
    g_assert_cmpuint(q.rnr_retry, ==, 6);
    g_assert_cmpuint(q.max_rd_atomic, ==, 4);

    /* RTS -> RTS: MIN_RNR_TIMER */
    a.min_rnr_timer = 3;
    g_assert_cmpuint(rdma_modify(&r, qpn, SHCA_QP_ATTR_MIN_RNR_TIMER, &a),
                     ==, SHCA_AQ_OK);
    g_assert_cmpuint(rdma_query(&r, qpn, &q), ==, SHCA_AQ_OK);
    g_assert_cmpuint(q.min_rnr_timer, ==, 3);
    g_assert_cmpuint(q.state, ==, SHCA_QPS_RTS);

    /* QUERY_QP: bad QP, misaligned or unwritable buffer */
    cmd = (struct shca_aq_entry) { .opcode = SHCA_AQ_QUERY_QP };
    cmd.qp_attr.qpn = cpu_to_le32(77);
    cmd.qp_attr.attr_addr = cpu_to_le64(r.attr);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_HANDLE);
    cmd.qp_attr.qpn = cpu_to_le32(qpn);
    cmd.qp_attr.attr_addr = cpu_to_le64(r.attr + 8);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_ADDR);
    cmd.qp_attr.attr_addr = cpu_to_le64(RAM_TOP);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_ADDR);

    /* to RESET: attributes and PSNs start over */
    a.state = SHCA_QPS_RESET;
    g_assert_cmpuint(rdma_modify(&r, qpn, SHCA_QP_ATTR_STATE, &a), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(rdma_query(&r, qpn, &q), ==, SHCA_AQ_OK);
    g_assert_cmpuint(q.state, ==, SHCA_QPS_RESET);
    g_assert_cmpuint(le32_to_cpu(q.sq_psn), ==, 0);
    g_assert_cmpuint(q.path_mtu, ==, 0);
    hca_stop(&r.h);
}

static void test_qp_modify_illegal(void)
{
    struct shca_aq_entry cmd;
    struct shca_qp_attr a = rc_attr(SHCA_QPS_INIT);
    uint32_t cq, qpn, ud;
    uint64_t cqbuf, bufs;
    Rdma r;

    rdma_start(&r);
    cq = rdma_cq(&r, 0, 4, &cqbuf);
    bufs = guest_alloc(&r.h.alloc, 4 * 4096);
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_RC, cq, cq, bufs, bufs + 4096);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, &qpn), ==, SHCA_AQ_OK);

    g_assert_cmpuint(rdma_modify(&r, 99, RC_INIT_MASK, &a), ==,
                     SHCA_AQ_BAD_HANDLE);
    /* RESET -> INIT: missing ACCESS, an attribute not allowed, unknown bit */
    g_assert_cmpuint(rdma_modify(&r, qpn, SHCA_QP_ATTR_STATE, &a), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_modify(&r, qpn, RC_INIT_MASK | SHCA_QP_ATTR_PATH_MTU,
                                 &a), ==, SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_modify(&r, qpn, RC_INIT_MASK | (1u << 20), &a), ==,
                     SHCA_AQ_BAD_PARAM);
    a.access = cpu_to_le32(SHCA_ACCESS_PHYS);
    g_assert_cmpuint(rdma_modify(&r, qpn, RC_INIT_MASK, &a), ==,
                     SHCA_AQ_BAD_PARAM);
    /* RESET -> RTR, -> RTS, -> SQD, -> a state that does not exist */
    a = rc_attr(SHCA_QPS_RTR);
    g_assert_cmpuint(rdma_modify(&r, qpn, RC_RTR_MASK | SHCA_QP_ATTR_ACCESS,
                                 &a), ==, SHCA_AQ_BAD_PARAM);
    a.state = SHCA_QPS_RTS;
    g_assert_cmpuint(rdma_modify(&r, qpn, RC_RTS_MASK, &a), ==,
                     SHCA_AQ_BAD_PARAM);
    a.state = SHCA_QPS_SQD;
    g_assert_cmpuint(rdma_modify(&r, qpn, SHCA_QP_ATTR_STATE, &a), ==,
                     SHCA_AQ_BAD_PARAM);
    a.state = 42;
    g_assert_cmpuint(rdma_modify(&r, qpn, SHCA_QP_ATTR_STATE, &a), ==,
                     SHCA_AQ_BAD_PARAM);
    /* no STATE in RESET: RESET -> RESET needs it */
    g_assert_cmpuint(rdma_modify(&r, qpn, 0, &a), ==, SHCA_AQ_BAD_PARAM);
    /* the attributes cannot be read */
    cmd = (struct shca_aq_entry) { .opcode = SHCA_AQ_MODIFY_QP };
    cmd.qp_attr.qpn = cpu_to_le32(qpn);
    cmd.qp_attr.attr_mask = cpu_to_le32(RC_INIT_MASK);
    cmd.qp_attr.attr_addr = cpu_to_le64(RAM_TOP - 32);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_ADDR);
    cmd.qp_attr.attr_addr = cpu_to_le64(r.attr + 4);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_ADDR);
    g_assert_cmpuint(rdma_state(&r, qpn), ==, SHCA_QPS_RESET);

    a = rc_attr(SHCA_QPS_INIT);
    g_assert_cmpuint(rdma_modify(&r, qpn, RC_INIT_MASK, &a), ==, SHCA_AQ_OK);
    /* INIT -> RTR: each required attribute missing, bad values */
    a.state = SHCA_QPS_RTR;
    for (int bit = 0; bit < 14; bit++) {
        uint32_t m = 1u << bit;

        if (RC_RTR_MASK & m) {
            g_assert_cmpuint(rdma_modify(&r, qpn, RC_RTR_MASK & ~m, &a), ==,
                             SHCA_AQ_BAD_PARAM);
        }
    }
    g_assert_cmpuint(rdma_modify(&r, qpn, RC_RTR_MASK | SHCA_QP_ATTR_SQ_PSN,
                                 &a), ==, SHCA_AQ_BAD_PARAM);
    a.path_mtu = 6;
    g_assert_cmpuint(rdma_modify(&r, qpn, RC_RTR_MASK, &a), ==,
                     SHCA_AQ_BAD_PARAM);
    a.path_mtu = 0;
    g_assert_cmpuint(rdma_modify(&r, qpn, RC_RTR_MASK, &a), ==,
                     SHCA_AQ_BAD_PARAM);
    a = rc_attr(SHCA_QPS_RTR);
    a.av.sgid_index = cpu_to_le16(1);      /* not a valid GID */
    g_assert_cmpuint(rdma_modify(&r, qpn, RC_RTR_MASK, &a), ==,
                     SHCA_AQ_BAD_PARAM);
    a.av.sgid_index = cpu_to_le16(5000);
    g_assert_cmpuint(rdma_modify(&r, qpn, RC_RTR_MASK, &a), ==,
                     SHCA_AQ_BAD_PARAM);
    a = rc_attr(SHCA_QPS_RTR);
    a.rq_psn = cpu_to_le32(0x1000000);
    g_assert_cmpuint(rdma_modify(&r, qpn, RC_RTR_MASK, &a), ==,
                     SHCA_AQ_BAD_PARAM);
    a = rc_attr(SHCA_QPS_RTR);
    a.max_dest_rd_atomic = 129;
    g_assert_cmpuint(rdma_modify(&r, qpn, RC_RTR_MASK, &a), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_state(&r, qpn), ==, SHCA_QPS_INIT);
    /* INIT -> RTS skips RTR */
    a = rc_attr(SHCA_QPS_RTS);
    g_assert_cmpuint(rdma_modify(&r, qpn, RC_RTS_MASK, &a), ==,
                     SHCA_AQ_BAD_PARAM);

    a = rc_attr(SHCA_QPS_RTR);
    g_assert_cmpuint(rdma_modify(&r, qpn, RC_RTR_MASK, &a), ==, SHCA_AQ_OK);
    /* RTR -> RTS: RC needs RETRY_CNT; retry_cnt 8 is out of range */
    a.state = SHCA_QPS_RTS;
    g_assert_cmpuint(rdma_modify(&r, qpn, RC_RTS_MASK &
                                 ~SHCA_QP_ATTR_RETRY_CNT, &a), ==,
                     SHCA_AQ_BAD_PARAM);
    a.retry_cnt = 8;
    g_assert_cmpuint(rdma_modify(&r, qpn, RC_RTS_MASK, &a), ==,
                     SHCA_AQ_BAD_PARAM);
    /* RTR -> RTR and RTR -> INIT are not transitions */
    a = rc_attr(SHCA_QPS_RTR);
    g_assert_cmpuint(rdma_modify(&r, qpn, SHCA_QP_ATTR_STATE, &a), ==,
                     SHCA_AQ_BAD_PARAM);
    a.state = SHCA_QPS_INIT;
    g_assert_cmpuint(rdma_modify(&r, qpn, SHCA_QP_ATTR_STATE, &a), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_state(&r, qpn), ==, SHCA_QPS_RTR);
    /* any state -> ERR, with no other attribute; ERR -> RESET */
    a.state = SHCA_QPS_ERR;
    g_assert_cmpuint(rdma_modify(&r, qpn, SHCA_QP_ATTR_STATE |
                                 SHCA_QP_ATTR_ACCESS, &a), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_modify(&r, qpn, SHCA_QP_ATTR_STATE, &a), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(rdma_state(&r, qpn), ==, SHCA_QPS_ERR);
    a.state = SHCA_QPS_RTS;
    g_assert_cmpuint(rdma_modify(&r, qpn, RC_RTS_MASK, &a), ==,
                     SHCA_AQ_BAD_PARAM);
    a.state = SHCA_QPS_RESET;
    g_assert_cmpuint(rdma_modify(&r, qpn, SHCA_QP_ATTR_STATE, &a), ==,
                     SHCA_AQ_OK);

    /* UD: QKEY instead of ACCESS, no path at INIT -> RTR */
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_UD, cq, cq, bufs + 8192,
                bufs + 12288);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, &ud), ==, SHCA_AQ_OK);
    a = rc_attr(SHCA_QPS_INIT);
    g_assert_cmpuint(rdma_modify(&r, ud, RC_INIT_MASK, &a), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_modify(&r, ud, SHCA_QP_ATTR_STATE |
                                 SHCA_QP_ATTR_QKEY, &a), ==, SHCA_AQ_OK);
    a.state = SHCA_QPS_RTR;
    g_assert_cmpuint(rdma_modify(&r, ud, RC_RTR_MASK, &a), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_modify(&r, ud, SHCA_QP_ATTR_STATE, &a), ==,
                     SHCA_AQ_OK);
    a.state = SHCA_QPS_RTS;
    g_assert_cmpuint(rdma_modify(&r, ud, SHCA_QP_ATTR_STATE |
                                 SHCA_QP_ATTR_SQ_PSN, &a), ==, SHCA_AQ_OK);
    g_assert_cmpuint(rdma_state(&r, ud), ==, SHCA_QPS_RTS);
    hca_stop(&r.h);
}

/*
 * Moving to ERR completes every posted WQE with WR_FLUSH_ERR, in order.
 * The flush is done by the transport's softhca_tp_flush.
 */
static void test_qp_flush(void)
{
    struct shca_aq_entry cmd;
    struct shca_qp_attr a = rc_attr(SHCA_QPS_INIT);
    uint32_t scq, rcq, qpn;
    uint64_t scqbuf, rcqbuf, sq, rq;
    struct shca_cqe cqe;
    Rdma r;

    rdma_start(&r);
    scq = rdma_cq(&r, 0, 4, &scqbuf);
    rcq = rdma_cq(&r, 0, 4, &rcqbuf);
    sq = guest_alloc(&r.h.alloc, 4096);
    rq = guest_alloc(&r.h.alloc, 4096);
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_RC, scq, rcq, sq, rq);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, &qpn), ==, SHCA_AQ_OK);
    g_assert_cmpuint(rdma_modify(&r, qpn, RC_INIT_MASK, &a), ==, SHCA_AQ_OK);

    /* three sends (held: the QP is not in RTS), two receives */
    for (uint16_t i = 0; i < 3; i++) {
        rdma_post_send(&r, sq, i, 0x5000 + i);
    }
    rdma_db(&r, 0, SHCA_DB_SQ, 3 << 16 | qpn);
    for (uint16_t i = 0; i < 2; i++) {
        rdma_post_recv(&r, rq, i, 0x7000 + i);
    }
    rdma_db(&r, 0, SHCA_DB_RQ, 2 << 16 | qpn);
    g_assert_cmpuint(rdma_cqe(&r, scqbuf, 0).phase, ==, 0);

    a.state = SHCA_QPS_ERR;
    g_assert_cmpuint(rdma_modify(&r, qpn, SHCA_QP_ATTR_STATE, &a), ==,
                     SHCA_AQ_OK);
    for (unsigned i = 0; i < 3; i++) {
        cqe = rdma_cqe(&r, scqbuf, i);
        g_assert_cmpuint(cqe.phase, ==, SHCA_PHASE_BIT);
        g_assert_cmpuint(cqe.status, ==, SHCA_CQE_WR_FLUSH_ERR);
        g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x5000 + i);
        g_assert_cmpuint(le16_to_cpu(cqe.wqe_index), ==, i);
        g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, qpn);
    }
    g_assert_cmpuint(rdma_cqe(&r, scqbuf, 3).phase, ==, 0);
    for (unsigned i = 0; i < 2; i++) {
        cqe = rdma_cqe(&r, rcqbuf, i);
        g_assert_cmpuint(cqe.phase, ==, SHCA_PHASE_BIT);
        g_assert_cmpuint(cqe.status, ==, SHCA_CQE_WR_FLUSH_ERR);
        g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x7000 + i);
        g_assert_cmpuint(le16_to_cpu(cqe.wqe_index), ==, i);
    }

    /* a receive posted in ERR is flushed at once */
    rdma_post_recv(&r, rq, 2, 0x7002);
    rdma_db(&r, 0, SHCA_DB_RQ, 3 << 16 | qpn);
    cqe = rdma_cqe(&r, rcqbuf, 2);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_WR_FLUSH_ERR);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x7002);
    g_assert_cmpuint(le16_to_cpu(cqe.wqe_index), ==, 2);

    /* RESET drops the rest silently and starts the rings at 0 */
    a.state = SHCA_QPS_RESET;
    g_assert_cmpuint(rdma_modify(&r, qpn, SHCA_QP_ATTR_STATE, &a), ==,
                     SHCA_AQ_OK);
    a = rc_attr(SHCA_QPS_INIT);
    g_assert_cmpuint(rdma_modify(&r, qpn, RC_INIT_MASK, &a), ==, SHCA_AQ_OK);
    rdma_post_recv(&r, rq, 0, 0x7100);
    rdma_db(&r, 0, SHCA_DB_RQ, 1 << 16 | qpn);
    a.state = SHCA_QPS_ERR;
    g_assert_cmpuint(rdma_modify(&r, qpn, SHCA_QP_ATTR_STATE, &a), ==,
                     SHCA_AQ_OK);
    cqe = rdma_cqe(&r, rcqbuf, 3);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x7100);
    g_assert_cmpuint(le16_to_cpu(cqe.wqe_index), ==, 0);
    g_assert_cmpuint(rdma_cqe(&r, scqbuf, 3).phase, ==, 0);
    hca_stop(&r.h);
}

/*
 * Doorbells of a queue rung from another context's page are ignored; a
 * count running ahead of the ring is fatal to the QP.
 */
static void test_doorbell_wrong_page(void)
{
    struct shca_aq_entry cmd;
    struct shca_qp_attr a = rc_attr(SHCA_QPS_INIT);
    uint32_t uctx, cq, qpn;
    uint64_t cqbuf, sq, rq;
    struct shca_eqe eqe;
    Rdma r;

    rdma_start(&r);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_ALLOC_UCTX, 0, &uctx), ==,
                     SHCA_AQ_OK);
    cq = rdma_cq(&r, uctx, 4, &cqbuf);
    sq = guest_alloc(&r.h.alloc, 4096);
    rq = guest_alloc(&r.h.alloc, 4096);
    rdma_qp_cmd(&r, &cmd, uctx, SHCA_QPT_RC, cq, cq, sq, rq);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, &qpn), ==, SHCA_AQ_OK);
    g_assert_cmpuint(rdma_modify(&r, qpn, RC_INIT_MASK, &a), ==, SHCA_AQ_OK);

    /* 100 WQEs on a 16-entry ring, from the kernel's page and page 2 */
    rdma_db(&r, 0, SHCA_DB_RQ, 100 << 16 | qpn);
    rdma_db(&r, 2, SHCA_DB_RQ, 100 << 16 | qpn);
    rdma_db(&r, 0, SHCA_DB_SQ, 100 << 16 | qpn);
    g_assert_cmpuint(rdma_state(&r, qpn), ==, SHCA_QPS_INIT);
    /* a CQ armed from the wrong page stays disarmed */
    rdma_db(&r, 0, SHCA_DB_CQ, cq | SHCA_DB_CQ_ARM);
    /* an unknown doorbell offset */
    rdma_db(&r, uctx, 0x10, 100 << 16 | qpn);
    g_assert_cmpuint(rdma_state(&r, qpn), ==, SHCA_QPS_INIT);

    /* the same from the context's page: QP_FATAL on EQ 0, flushed to ERR */
    rdma_post_recv(&r, rq, 0, 0x9000);
    rdma_db(&r, uctx, SHCA_DB_RQ, 1 << 16 | qpn);
    rdma_db(&r, uctx, SHCA_DB_RQ, 100 << 16 | qpn);
    g_assert_cmpuint(rdma_state(&r, qpn), ==, SHCA_QPS_ERR);
    eqe = rdma_eqe(&r, r.eq0, 0);
    g_assert_cmpuint(eqe.type, ==, SHCA_EQE_QP_FATAL);
    g_assert_cmpuint(le32_to_cpu(eqe.obj), ==, qpn);
    g_assert_cmpuint(rdma_eqe(&r, r.eq1, 0).type, ==, 0);   /* not armed */
    g_assert_cmpuint(rdma_cqe(&r, cqbuf, 0).status, ==,
                     SHCA_CQE_WR_FLUSH_ERR);

    /* armed from the right page: the next completion posts COMPLETION */
    rdma_db(&r, uctx, SHCA_DB_CQ, cq | SHCA_DB_CQ_ARM | SHCA_DB_CQ_SOLICITED);
    rdma_post_recv(&r, rq, 1, 0x9001);
    rdma_db(&r, uctx, SHCA_DB_RQ, 2 << 16 | qpn);
    g_assert_cmpuint(rdma_cqe(&r, cqbuf, 1).status, ==,
                     SHCA_CQE_WR_FLUSH_ERR);
    eqe = rdma_eqe(&r, r.eq1, 0);
    g_assert_cmpuint(eqe.type, ==, SHCA_EQE_COMPLETION);
    g_assert_cmpuint(le32_to_cpu(eqe.obj), ==, cq);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&r.h);
}

/* A CQ whose consumer falls behind overruns: CQ_ERROR on EQ 0. */
static void test_cq_overrun(void)
{
    struct shca_aq_entry cmd;
    struct shca_qp_attr a = rc_attr(SHCA_QPS_INIT);
    struct shca_cq_record rec = { .ci = cpu_to_le32(2) };
    uint32_t cq, qp1, qp2, qp3;
    uint64_t cqbuf, bufs;
    struct shca_eqe eqe;
    Rdma r;

    rdma_start(&r);
    cq = rdma_cq(&r, 0, 1, &cqbuf);             /* 2 CQEs */
    bufs = guest_alloc(&r.h.alloc, 6 * 4096);
    /* a QP that only completes to the CQ, without WQEs */
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_RC, cq, cq, bufs + 16384,
                bufs + 20480);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, &qp3), ==, SHCA_AQ_OK);
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_RC, cq, cq, bufs, bufs + 4096);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, &qp1), ==, SHCA_AQ_OK);
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_RC, cq, cq, bufs + 8192,
                bufs + 12288);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, &qp2), ==, SHCA_AQ_OK);
    g_assert_cmpuint(rdma_modify(&r, qp1, RC_INIT_MASK, &a), ==, SHCA_AQ_OK);
    g_assert_cmpuint(rdma_modify(&r, qp2, RC_INIT_MASK, &a), ==, SHCA_AQ_OK);
    g_assert_cmpuint(rdma_modify(&r, qp3, RC_INIT_MASK, &a), ==, SHCA_AQ_OK);
    rdma_db(&r, 0, SHCA_DB_CQ, cq | SHCA_DB_CQ_ARM);

    /* two flushed receives fill the ring: one COMPLETION event */
    rdma_post_recv(&r, bufs + 4096, 0, 1);
    rdma_post_recv(&r, bufs + 4096, 1, 2);
    rdma_db(&r, 0, SHCA_DB_RQ, 2 << 16 | qp1);
    a.state = SHCA_QPS_ERR;
    g_assert_cmpuint(rdma_modify(&r, qp1, SHCA_QP_ATTR_STATE, &a), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(rdma_cqe(&r, cqbuf, 1).phase, ==, SHCA_PHASE_BIT);
    eqe = rdma_eqe(&r, r.eq1, 0);
    g_assert_cmpuint(eqe.type, ==, SHCA_EQE_COMPLETION);
    g_assert_cmpuint(le32_to_cpu(eqe.obj), ==, cq);
    g_assert_cmpuint(rdma_eqe(&r, r.eq1, 1).type, ==, 0);   /* disarmed */

    /* consumed: the next two wrap with phase 0 */
    qtest_memwrite(r.h.qts, cqbuf + 2 * SHCA_CQE_SIZE, &rec, sizeof(rec));
    rdma_post_recv(&r, bufs + 12288, 0, 3);
    rdma_post_recv(&r, bufs + 12288, 1, 4);
    rdma_db(&r, 0, SHCA_DB_RQ, 2 << 16 | qp2);
    g_assert_cmpuint(rdma_modify(&r, qp2, SHCA_QP_ATTR_STATE, &a), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(rdma_cqe(&r, cqbuf, 0).phase, ==, 0);
    g_assert_cmphex(le64_to_cpu(rdma_cqe(&r, cqbuf, 0).wr_id), ==, 3);
    g_assert_cmpuint(rdma_cqe(&r, cqbuf, 1).phase, ==, 0);
    g_assert_cmpuint(rdma_eqe(&r, r.eq0, 0).type, ==, 0);

    /* not consumed: a fifth completion overruns */
    rdma_post_recv(&r, bufs + 12288, 2, 5);
    rdma_db(&r, 0, SHCA_DB_RQ, 3 << 16 | qp2);
    eqe = rdma_eqe(&r, r.eq0, 0);
    g_assert_cmpuint(eqe.type, ==, SHCA_EQE_CQ_ERROR);
    g_assert_cmpuint(le32_to_cpu(eqe.obj), ==, cq);
    g_assert_cmphex(le64_to_cpu(rdma_cqe(&r, cqbuf, 0).wr_id), ==, 3);
    /* every QP completing to it is moved to ERR */
    g_assert_cmpuint(rdma_state(&r, qp3), ==, SHCA_QPS_ERR);
    eqe = rdma_eqe(&r, r.eq0, 1);
    g_assert_cmpuint(eqe.type, ==, SHCA_EQE_QP_FATAL);
    g_assert_cmpuint(le32_to_cpu(eqe.obj), ==, qp3);
    /* the CQ takes nothing more, even once consumed */
    rec.ci = cpu_to_le32(4);
    qtest_memwrite(r.h.qts, cqbuf + 2 * SHCA_CQE_SIZE, &rec, sizeof(rec));
    rdma_post_recv(&r, bufs + 12288, 3, 6);
    rdma_db(&r, 0, SHCA_DB_RQ, 4 << 16 | qp2);
    g_assert_cmphex(le64_to_cpu(rdma_cqe(&r, cqbuf, 0).wr_id), ==, 3);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&r.h);
}

static uint8_t rdma_resize_cq(Rdma *r, uint32_t cqn, uint8_t log_size,
                              uint64_t addr, uint32_t npages,
                              uint32_t *copied)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_RESIZE_CQ };

    cmd.resize_cq.cqn = cpu_to_le32(cqn);
    cmd.resize_cq.log_size = log_size;
    buf_direct(&cmd.resize_cq.buf, addr, npages);
    return hca_cmd(&r->h, &cmd, copied);
}

/* Flush n receives of a QP in ERR, wr_ids first.. */
static void resize_flush(Rdma *r, uint32_t qpn, uint64_t rq, uint16_t *pi,
                         unsigned n, uint64_t first)
{
    for (unsigned k = 0; k < n; k++, (*pi)++) {
        rdma_post_recv(r, rq, *pi, first + k);
    }
    rdma_db(r, 0, SHCA_DB_RQ, (uint32_t)*pi << 16 | qpn);
}

/*
 * RESIZE_CQ (spec §13.1): the unconsumed CQEs move to slot 0.. of the new
 * ring, the producer goes on there, and a refused resize changes nothing.
 */
static void test_cq_resize(void)
{
    struct shca_qp_attr a = rc_attr(SHCA_QPS_INIT);
    struct shca_cq_record rec = { .ci = cpu_to_le32(1) };
    struct shca_aq_entry cmd;
    uint64_t cqbuf, small, big, bufs;
    uint32_t cq, qpn, copied = 0;
    uint16_t pi = 0;
    Rdma r;

    rdma_start(&r);
    g_assert_cmphex(rd(&r.h, SHCA_REG_CAPS) & SHCA_CAP_RESIZE_CQ, ==,
                    SHCA_CAP_RESIZE_CQ);
    cq = rdma_cq(&r, 0, 2, &cqbuf);             /* 4 CQEs */
    small = guest_alloc(&r.h.alloc, 4096);
    big = guest_alloc(&r.h.alloc, 4096);
    qtest_memset(r.h.qts, small, 0, 4096);
    qtest_memset(r.h.qts, big, 0, 4096);
    bufs = guest_alloc(&r.h.alloc, 2 * 4096);
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_RC, cq, cq, bufs, bufs + 4096);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, &qpn), ==, SHCA_AQ_OK);
    g_assert_cmpuint(rdma_modify(&r, qpn, RC_INIT_MASK, &a), ==, SHCA_AQ_OK);
    a.state = SHCA_QPS_ERR;
    g_assert_cmpuint(rdma_modify(&r, qpn, SHCA_QP_ATTR_STATE, &a), ==,
                     SHCA_AQ_OK);
    /* three flushed receives, the first consumed */
    resize_flush(&r, qpn, bufs + 4096, &pi, 3, 1);
    g_assert_cmphex(le64_to_cpu(rdma_cqe(&r, cqbuf, 2).wr_id), ==, 3);
    qtest_memwrite(r.h.qts, cqbuf + 4 * SHCA_CQE_SIZE, &rec, sizeof(rec));

    g_assert_cmpuint(rdma_resize_cq(&r, cq + 1, 1, small, 1, NULL), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(rdma_resize_cq(&r, cq, 0, small, 1, NULL), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_resize_cq(&r, cq, 16, small, 1, NULL), ==,
                     SHCA_AQ_BAD_PARAM);
    /* a ring of 2^8 CQEs does not fit in one page */
    g_assert_cmpuint(rdma_resize_cq(&r, cq, 8, small, 1, NULL), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_resize_cq(&r, cq, 1, RAM_TOP, 1, NULL), ==,
                     SHCA_AQ_BAD_ADDR);
    /* a consumer ahead of the producer */
    rec.ci = cpu_to_le32(4);
    qtest_memwrite(r.h.qts, cqbuf + 4 * SHCA_CQE_SIZE, &rec, sizeof(rec));
    g_assert_cmpuint(rdma_resize_cq(&r, cq, 1, small, 1, NULL), ==,
                     SHCA_AQ_BAD_PARAM);
    /* three unconsumed do not fit in two */
    rec.ci = 0;
    qtest_memwrite(r.h.qts, cqbuf + 4 * SHCA_CQE_SIZE, &rec, sizeof(rec));
    g_assert_cmpuint(rdma_resize_cq(&r, cq, 1, small, 1, NULL), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_cqe(&r, small, 0).phase, ==, 0);
    /* ... and the old ring is still the CQ's: its fourth slot fills */
    resize_flush(&r, qpn, bufs + 4096, &pi, 1, 4);
    g_assert_cmphex(le64_to_cpu(rdma_cqe(&r, cqbuf, 3).wr_id), ==, 4);

    /* two consumed: the other two move to a ring of two */
    rec.ci = cpu_to_le32(2);
    qtest_memwrite(r.h.qts, cqbuf + 4 * SHCA_CQE_SIZE, &rec, sizeof(rec));
    rdma_db(&r, 0, SHCA_DB_CQ, cq | SHCA_DB_CQ_ARM);
    g_assert_cmpuint(rdma_resize_cq(&r, cq, 1, small, 1, &copied), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(copied, ==, 2);
    for (unsigned i = 0; i < 2; i++) {
        g_assert_cmphex(le64_to_cpu(rdma_cqe(&r, small, i).wr_id), ==, 3 + i);
        g_assert_cmpuint(rdma_cqe(&r, small, i).phase, ==, SHCA_PHASE_BIT);
        g_assert_cmpuint(rdma_cqe(&r, small, i).status, ==,
                         SHCA_CQE_WR_FLUSH_ERR);
    }
    g_assert_cmpuint(rdma_eqe(&r, r.eq1, 0).type, ==, 0);

    /* full until its own record says otherwise; then the second pass */
    rec.ci = cpu_to_le32(1);
    qtest_memwrite(r.h.qts, small + 2 * SHCA_CQE_SIZE, &rec, sizeof(rec));
    resize_flush(&r, qpn, bufs + 4096, &pi, 1, 5);
    g_assert_cmphex(le64_to_cpu(rdma_cqe(&r, small, 0).wr_id), ==, 5);
    g_assert_cmpuint(rdma_cqe(&r, small, 0).phase, ==, 0);
    g_assert_cmphex(le64_to_cpu(rdma_cqe(&r, cqbuf, 0).wr_id), ==, 1);
    /* the ARM from before the resize still holds */
    g_assert_cmpuint(rdma_eqe(&r, r.eq1, 0).type, ==, SHCA_EQE_COMPLETION);

    /* growing: one unconsumed (ci 2 of pi 3) to a ring of 16 */
    rec.ci = cpu_to_le32(2);
    qtest_memwrite(r.h.qts, small + 2 * SHCA_CQE_SIZE, &rec, sizeof(rec));
    g_assert_cmpuint(rdma_resize_cq(&r, cq, 4, big, 1, &copied), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(copied, ==, 1);
    g_assert_cmphex(le64_to_cpu(rdma_cqe(&r, big, 0).wr_id), ==, 5);
    resize_flush(&r, qpn, bufs + 4096, &pi, 3, 6);
    g_assert_cmphex(le64_to_cpu(rdma_cqe(&r, big, 3).wr_id), ==, 8);
    g_assert_cmpuint(rdma_cqe(&r, big, 3).phase, ==, SHCA_PHASE_BIT);
    g_assert_cmphex(le64_to_cpu(rdma_cqe(&r, small, 1).wr_id), ==, 4);
    g_assert_cmpuint(rdma_eqe(&r, r.eq0, 0).type, ==, 0);
    hca_stop(&r.h);
}

static void test_mr_reg(void)
{
    const uint32_t rw = SHCA_ACCESS_LOCAL_WRITE | SHCA_ACCESS_REMOTE_WRITE;
    struct shca_buf_desc d = { 0 };
    uint64_t data, list, l2, big, p;
    uint32_t key, key2, key3, key4;
    Rdma r;

    rdma_start(&r);
    data = guest_alloc(&r.h.alloc, 4 * 4096);
    list = guest_alloc(&r.h.alloc, 4096);

    /* DIRECT: 2 pages, 100 bytes in */
    buf_direct(&d, data, 2);
    g_assert_cmpuint(rdma_reg_mr(&r, rw, 0x10000, 8000, 100, &d, &key), ==,
                     SHCA_AQ_OK);
    g_assert_cmphex(key >> 8, ==, 1);
    /* the pages must cover first_offset + length */
    g_assert_cmpuint(rdma_reg_mr(&r, rw, 0x10000, 8100, 100, &d, &key2), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_reg_mr(&r, rw, 0x10000, 100, 4096, &d, &key2), ==,
                     SHCA_AQ_BAD_PARAM);
    /* access: remote write or atomic need local write; unknown bits */
    g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_REMOTE_WRITE, 0, 100, 0, &d,
                                 &key2), ==, SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_REMOTE_ATOMIC |
                                 SHCA_ACCESS_REMOTE_READ, 0, 100, 0, &d,
                                 &key2), ==, SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_reg_mr(&r, 1u << 7, 0, 100, 0, &d, &key2), ==,
                     SHCA_AQ_BAD_PARAM);
    /* length 0, wrapping iova, past MAX_MR_SIZE */
    g_assert_cmpuint(rdma_reg_mr(&r, rw, 0, 0, 0, &d, &key2), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_reg_mr(&r, rw, ~0ull - 10, 100, 0, &d, &key2), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_reg_mr(&r, rw, 0, 1ull << 41, 0, &d, &key2), ==,
                     SHCA_AQ_BAD_PARAM);
    /* DIRECT and LIST2 together */
    d.flags = SHCA_BUF_DIRECT | SHCA_BUF_LIST2;
    g_assert_cmpuint(rdma_reg_mr(&r, rw, 0, 100, 0, &d, &key2), ==,
                     SHCA_AQ_BAD_PARAM);

    /* one-level list of 3 pages; then a bad page in it */
    qtest_writeq(r.h.qts, list, data + 3 * 4096);
    qtest_writeq(r.h.qts, list + 8, data);
    qtest_writeq(r.h.qts, list + 16, data + 4096);
    d = (struct shca_buf_desc) {
        .addr = cpu_to_le64(list), .npages = cpu_to_le32(3), .page_shift = 12,
    };
    g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_REMOTE_READ, 0, 3 * 4096, 0,
                                 &d, &key2), ==, SHCA_AQ_OK);
    g_assert_cmphex(key2 >> 8, ==, 2);
    qtest_writeq(r.h.qts, list + 8, RAM_TOP);
    g_assert_cmpuint(rdma_reg_mr(&r, 0, 0, 100, 0, &d, &key3), ==,
                     SHCA_AQ_BAD_ADDR);
    qtest_writeq(r.h.qts, list + 8, data + 8);
    g_assert_cmpuint(rdma_reg_mr(&r, 0, 0, 100, 0, &d, &key3), ==,
                     SHCA_AQ_BAD_ADDR);
    qtest_writeq(r.h.qts, list + 8, 0xfee00000);
    g_assert_cmpuint(rdma_reg_mr(&r, 0, 0, 100, 0, &d, &key3), ==,
                     SHCA_AQ_BAD_ADDR);
    /* a one-level list holds at most 512 pages */
    d.npages = cpu_to_le32(513);
    g_assert_cmpuint(rdma_reg_mr(&r, 0, 0, 100, 0, &d, &key3), ==,
                     SHCA_AQ_BAD_PARAM);

    /* LIST2: 600 pages in two list pages (512 + 88) */
    big = guest_alloc(&r.h.alloc, 600 * 4096);
    l2 = guest_alloc(&r.h.alloc, 2 * 4096);
    qtest_writeq(r.h.qts, list, l2);
    qtest_writeq(r.h.qts, list + 8, l2 + 4096);
    for (p = 0; p < 600; p++) {
        qtest_writeq(r.h.qts, l2 + p * 8, big + p * 4096);
    }
    d = (struct shca_buf_desc) {
        .addr = cpu_to_le64(list), .npages = cpu_to_le32(600),
        .page_shift = 12, .flags = SHCA_BUF_LIST2,
    };
    g_assert_cmpuint(rdma_reg_mr(&r, rw, 0x1000, 600 * 4096, 0, &d, &key3),
                     ==, SHCA_AQ_OK);
    g_assert_cmphex(key3 >> 8, ==, 3);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEREG_MR, key3, NULL), ==,
                     SHCA_AQ_OK);
    /* a bad page in the second list page, a list page outside RAM */
    qtest_writeq(r.h.qts, l2 + 550 * 8, RAM_TOP + 4096);
    g_assert_cmpuint(rdma_reg_mr(&r, rw, 0, 100, 0, &d, &key3), ==,
                     SHCA_AQ_BAD_ADDR);
    qtest_writeq(r.h.qts, l2 + 550 * 8, big + 550 * 4096);
    qtest_writeq(r.h.qts, list + 8, RAM_TOP);
    g_assert_cmpuint(rdma_reg_mr(&r, rw, 0, 100, 0, &d, &key3), ==,
                     SHCA_AQ_BAD_ADDR);
    /* more than 512 x 512 pages */
    d.npages = cpu_to_le32(512 * 512 + 1);
    g_assert_cmpuint(rdma_reg_mr(&r, rw, 0, 100, 0, &d, &key3), ==,
                     SHCA_AQ_BAD_PARAM);

    /* PHYS: no pages */
    g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_PHYS | rw, 0, RAM_TOP, 0,
                                 NULL, &key3), ==, SHCA_AQ_OK);
    g_assert_cmphex(key3 >> 8, ==, 3);
    buf_direct(&d, data, 1);
    g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_PHYS, 0, 100, 0, &d, &key4),
                     ==, SHCA_AQ_BAD_PARAM);
    /* guest-physical MRs are the kernel's: not on a user context's PD */
    {
        uint32_t uctx, kpd = r.pd;

        g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_ALLOC_UCTX, 0, &uctx), ==,
                         SHCA_AQ_OK);
        r.pd = rdma_user_pd(&r, uctx);
        g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_PHYS | rw, 0, RAM_TOP,
                                     0, NULL, &key4), ==, SHCA_AQ_BAD_PARAM);
        g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_FAST_REG, 0, 0, 0, &d,
                                     &key4), ==, SHCA_AQ_BAD_PARAM);
        r.pd = kpd;
    }

    /* the index is reused with another tag; old keys are dead */
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEREG_MR, key2, NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEREG_MR, key2, NULL), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(rdma_reg_mr(&r, 0, 0, 100, 0, &d, &key4), ==,
                     SHCA_AQ_OK);
    g_assert_cmphex(key4 >> 8, ==, 2);
    g_assert_cmphex(key4, !=, key2);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEREG_MR, key2, NULL), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEREG_MR, key ^ 1, NULL), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEREG_MR, 0, NULL), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEREG_MR, 0xffffffff, NULL),
                     ==, SHCA_AQ_BAD_HANDLE);
    /* a PD with MRs stays; another PD's number is not ours */
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEALLOC_PD, r.pd, NULL), ==,
                     SHCA_AQ_BUSY);
    r.pd = 99;
    g_assert_cmpuint(rdma_reg_mr(&r, 0, 0, 100, 0, &d, &key3), ==,
                     SHCA_AQ_BAD_HANDLE);
    r.pd = 1;
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEREG_MR, key, NULL), ==,
                     SHCA_AQ_OK);
    hca_stop(&r.h);
}

static void test_query_stats(void)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_QUERY_STATS };
    uint64_t buf;
    Rdma r;

    rdma_start(&r);
    buf = guest_alloc(&r.h.alloc, 4096);
    qtest_memset(r.h.qts, buf, 0xff, 4096);
    cmd.query_stats.addr = cpu_to_le64(buf);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_OK);
    for (int i = 0; i < SHCA_STAT_COUNT; i++) {
        g_assert_cmphex(qtest_readq(r.h.qts, buf + 8 * i), ==, 0);
    }
    g_assert_cmphex(qtest_readq(r.h.qts, buf + 8 * SHCA_STAT_COUNT), ==,
                    ~0ull);
    cmd.query_stats.addr = cpu_to_le64(RAM_TOP - 8);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_ADDR);
    hca_stop(&r.h);
}

static void test_wqe_send_self(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    uint8_t data[3000], got[3000], inl[48];
    struct shca_send_wqe w = {
        .wr_id = cpu_to_le64(0x2223),
        .opcode = SHCA_WR_SEND,
        .flags = SHCA_WQE_SIGNALED | SHCA_WQE_INLINE,
        .inline_len = cpu_to_le32(sizeof(inl)),
    };
    uint64_t tx, rx;
    struct shca_cqe cqe;
    Rdma r;
    Loop l;

    /*
     * The NIC rings stay disabled: RoCEv2 frames reach the transport
     * without them (regression: the port once held every frame back while
     * the NIC function had no RX buffer).
     */
    rdma_start_with(&r, netdev);
    loop_start(&r, &l, SHCA_QPT_RC, 7);
    loop_connect(&r, &l, false);
    tx = guest_alloc(&r.h.alloc, 4096);
    rx = guest_alloc(&r.h.alloc, 8192);
    for (size_t i = 0; i < sizeof(data); i++) {
        data[i] = i * 7 + 1;
    }
    qtest_memwrite(r.h.qts, tx, data, sizeof(data));
    qtest_memset(r.h.qts, rx, 0, 8192);

    /* 3000 bytes at a 1024-byte MTU: three packets into one receive */
    loop_recv(&r, &l, 0, 0x1111, rx, 4096);
    loop_recv(&r, &l, 1, 0x1112, rx + 4096, 4096);
    rdma_db(&r, 0, SHCA_DB_RQ, 2 << 16 | l.qpn);
    loop_send(&r, &l, 0, 0x2222, tx, sizeof(data), SHCA_WQE_SIGNALED);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);

    cqe = loop_recv_cqe(&r, &l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmphex(cqe.opcode, ==, SHCA_CQE_OP_RECV);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x1111);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, sizeof(data));
    g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, l.qpn);
    g_assert_cmpuint(le16_to_cpu(cqe.wqe_index), ==, 0);
    cqe = loop_send_cqe(&r, &l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmphex(cqe.opcode, ==, SHCA_CQE_OP_SEND);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x2222);
    g_assert_cmpuint(le16_to_cpu(cqe.wqe_index), ==, 0);
    qtest_memread(r.h.qts, rx, got, sizeof(got));
    g_assert(memcmp(got, data, sizeof(data)) == 0);

    /* inline data travels in the WQE itself */
    memset(inl, 0x5a, sizeof(inl));
    loop_write_send(&r, &l, 1, &w, inl, sizeof(inl));
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | l.qpn);
    cqe = loop_recv_cqe(&r, &l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x1112);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, sizeof(inl));
    g_assert_cmpuint(le16_to_cpu(cqe.wqe_index), ==, 1);
    cqe = loop_send_cqe(&r, &l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x2223);
    qtest_memread(r.h.qts, rx + 4096, got, sizeof(inl));
    g_assert(memcmp(got, inl, sizeof(inl)) == 0);
    g_assert_cmpuint(rdma_state(&r, l.qpn), ==, SHCA_QPS_RTS);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&r.h);
}

/*
 * SQD (spec §13.2): the WQE started before goes on and completes, the
 * SQ_DRAINED event follows, one posted in SQD waits for RTS.
 */
static void test_qp_sqd(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    struct shca_qp_attr a = rc_attr(SHCA_QPS_SQD);
    uint64_t tx, rx;
    struct shca_eqe eqe;
    Rdma r;
    Loop l;

    rdma_start_with(&r, netdev);
    loop_start(&r, &l, SHCA_QPT_RC, 7);
    loop_connect(&r, &l, false);
    tx = guest_alloc(&r.h.alloc, 4096);
    rx = guest_alloc(&r.h.alloc, 8192);
    loop_recv(&r, &l, 0, 0x1111, rx, 4096);
    loop_recv(&r, &l, 1, 0x1112, rx + 4096, 4096);
    rdma_db(&r, 0, SHCA_DB_RQ, 2 << 16 | l.qpn);

    /* 3000 bytes: the first packet leaves at the doorbell, then SQD */
    loop_send(&r, &l, 0, 0x2222, tx, 3000, SHCA_WQE_SIGNALED);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    g_assert_cmpuint(rdma_modify(&r, l.qpn, SHCA_QP_ATTR_STATE |
                                 SHCA_QP_ATTR_SQD_NOTIFY, &a), ==,
                     SHCA_AQ_OK);
    loop_send(&r, &l, 1, 0x2223, tx, 16, SHCA_WQE_SIGNALED);
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | l.qpn);
    g_assert_cmphex(le64_to_cpu(loop_recv_cqe(&r, &l).wr_id), ==, 0x1111);
    g_assert_cmphex(le64_to_cpu(loop_send_cqe(&r, &l).wr_id), ==, 0x2222);
    eqe = rdma_eqe(&r, r.eq0, 0);
    g_assert_cmpuint(eqe.type, ==, SHCA_EQE_SQ_DRAINED);
    g_assert_cmpuint(le32_to_cpu(eqe.obj), ==, l.qpn);
    qtest_clock_step(r.h.qts, 10 * 1000 * 1000);
    g_assert(!loop_cqe_ready(&r, l.scqbuf, l.scq_n));
    g_assert_cmpuint(rdma_state(&r, l.qpn), ==, SHCA_QPS_SQD);
    g_assert_cmpuint(rdma_eqe(&r, r.eq0, 1).type, ==, 0);

    /* SQD_NOTIFY only into SQD; SQD only from RTS */
    a.state = SHCA_QPS_RTS;
    g_assert_cmpuint(rdma_modify(&r, l.qpn, SHCA_QP_ATTR_STATE |
                                 SHCA_QP_ATTR_SQD_NOTIFY, &a), ==,
                     SHCA_AQ_BAD_PARAM);
    /* back to RTS: the SEND posted in SQD goes */
    g_assert_cmpuint(rdma_modify(&r, l.qpn, SHCA_QP_ATTR_STATE, &a), ==,
                     SHCA_AQ_OK);
    g_assert_cmphex(le64_to_cpu(loop_recv_cqe(&r, &l).wr_id), ==, 0x1112);
    g_assert_cmphex(le64_to_cpu(loop_send_cqe(&r, &l).wr_id), ==, 0x2223);
    loop_connect(&r, &l, true);
    a.state = SHCA_QPS_SQD;
    g_assert_cmpuint(rdma_modify(&r, l.qpn, SHCA_QP_ATTR_STATE, &a), ==,
                     SHCA_AQ_BAD_PARAM);
    hca_stop(&r.h);
}

#define DEV_MAX_SGE 16
#define DEV_MAX_INLINE 256

/* Malformed send WQEs (spec §15) complete with an error, never harm QEMU. */
static void test_wqe_malformed(void)
{
    struct shca_sge sge[17] = { 0 };
    uint8_t inl[DEV_MAX_INLINE + 1] = { 0 };
    struct shca_send_wqe w;
    uint64_t buf;
    Rdma r;
    Loop big, small;

    rdma_start(&r);
    loop_start(&r, &big, SHCA_QPT_RC, 9);      /* room for 28 SGEs */
    loop_start(&r, &small, SHCA_QPT_RC, 7);    /* room for 4 SGEs */
    g_assert_cmpuint(rd(&r.h, SHCA_REG_MAX_SGE), ==, DEV_MAX_SGE);
    g_assert_cmpuint(rd(&r.h, SHCA_REG_MAX_INLINE), ==, DEV_MAX_INLINE);
    buf = guest_alloc(&r.h.alloc, 4096);
    for (int i = 0; i < ARRAY_SIZE(sge); i++) {
        sge[i].addr = cpu_to_le64(buf);
        sge[i].length = cpu_to_le32(8);
        sge[i].lkey = cpu_to_le32(big.key);
    }

    /* an opcode that does not exist */
    w = (struct shca_send_wqe) {
        .wr_id = cpu_to_le64(0xb0), .opcode = 0x42,
        .flags = SHCA_WQE_SIGNALED,
    };
    check_bad_send(&r, &big, &w, NULL, 0, SHCA_CQE_LOC_QP_OP_ERR);
    /* num_sge over MAX_SGE (within the stride) */
    w = (struct shca_send_wqe) {
        .wr_id = cpu_to_le64(0xb1), .opcode = SHCA_WR_SEND,
        .num_sge = DEV_MAX_SGE + 1,
    };
    check_bad_send(&r, &big, &w, sge, sizeof(sge),
                   SHCA_CQE_LOC_QP_OP_ERR);
    /* num_sge within MAX_SGE but over the stride */
    w.wr_id = cpu_to_le64(0xb2);
    w.num_sge = 5;
    check_bad_send(&r, &small, &w, sge, 4 * sizeof(sge[0]),
                   SHCA_CQE_LOC_QP_OP_ERR);
    /* inline data over MAX_INLINE (within the stride), over the stride */
    w = (struct shca_send_wqe) {
        .wr_id = cpu_to_le64(0xb3), .opcode = SHCA_WR_SEND,
        .flags = SHCA_WQE_INLINE,
        .inline_len = cpu_to_le32(sizeof(inl)),
    };
    check_bad_send(&r, &big, &w, inl, sizeof(inl), SHCA_CQE_LOC_QP_OP_ERR);
    w.wr_id = cpu_to_le64(0xb4);
    w.inline_len = cpu_to_le32(65);
    check_bad_send(&r, &small, &w, inl, 64, SHCA_CQE_LOC_QP_OP_ERR);
    /* a message over MAX_MSG_SIZE */
    w = (struct shca_send_wqe) {
        .wr_id = cpu_to_le64(0xb5), .opcode = SHCA_WR_SEND, .num_sge = 2,
    };
    sge[0].length = sge[1].length = cpu_to_le32(0x80000000);
    check_bad_send(&r, &big, &w, sge, 2 * sizeof(sge[0]),
                   SHCA_CQE_LOC_QP_OP_ERR);
    sge[0].length = sge[1].length = cpu_to_le32(8);
    /* an atomic needs one SGE of 8 bytes */
    w = (struct shca_send_wqe) {
        .wr_id = cpu_to_le64(0xb6), .opcode = SHCA_WR_ATOMIC_FETCH_ADD,
        .num_sge = 2,
    };
    check_bad_send(&r, &big, &w, sge, 2 * sizeof(sge[0]),
                   SHCA_CQE_LOC_QP_OP_ERR);

    /* a bad lkey, an address outside the MR */
    w = (struct shca_send_wqe) {
        .wr_id = cpu_to_le64(0xb7), .opcode = SHCA_WR_SEND, .num_sge = 1,
    };
    sge[0].lkey = cpu_to_le32(0xffff00);     /* no MR of that index */
    check_bad_send(&r, &big, &w, sge, sizeof(sge[0]), SHCA_CQE_LOC_PROT_ERR);
    sge[0].lkey = cpu_to_le32(big.key);
    sge[0].addr = cpu_to_le64(RAM_TOP - 4);
    w.wr_id = cpu_to_le64(0xb8);
    check_bad_send(&r, &big, &w, sge, sizeof(sge[0]), SHCA_CQE_LOC_PROT_ERR);
    hca_stop(&r.h);
}

/* A doorbell more than the ring ahead (spec §14): QP_FATAL and ERR. */
static void test_wqe_doorbell_overrun(void)
{
    struct shca_cqe cqe;
    struct shca_eqe eqe;
    Rdma r;
    Loop l;

    rdma_start(&r);
    loop_start(&r, &l, SHCA_QPT_RC, 9);        /* an SQ of 8 */
    loop_connect(&r, &l, true);

    /* a full ring is fine (held in INIT) */
    rdma_db(&r, 0, SHCA_DB_SQ, 8 << 16 | l.qpn);
    g_assert_cmpuint(rdma_state(&r, l.qpn), ==, SHCA_QPS_INIT);
    g_assert_cmpuint(rdma_eqe(&r, r.eq0, 0).type, ==, 0);

    /* two sends held, then a count 9 ahead of the device */
    loop_connect(&r, &l, true);
    loop_send(&r, &l, 0, 0xc0, 0, 0, SHCA_WQE_SIGNALED);
    loop_send(&r, &l, 1, 0xc1, 0, 0, 0);
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | l.qpn);
    rdma_db(&r, 0, SHCA_DB_SQ, 9 << 16 | l.qpn);
    eqe = rdma_eqe(&r, r.eq0, 0);
    g_assert_cmpuint(eqe.type, ==, SHCA_EQE_QP_FATAL);
    g_assert_cmpuint(le32_to_cpu(eqe.obj), ==, l.qpn);
    g_assert_cmpuint(rdma_state(&r, l.qpn), ==, SHCA_QPS_ERR);
    /* what was posted before is flushed, unsignaled or not */
    for (unsigned i = 0; i < 2; i++) {
        cqe = loop_send_cqe(&r, &l);
        g_assert_cmpuint(cqe.status, ==, SHCA_CQE_WR_FLUSH_ERR);
        g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0xc0 + i);
    }

    /* the same for the RQ, and a count behind the device */
    loop_connect(&r, &l, true);
    rdma_db(&r, 0, SHCA_DB_RQ, 17 << 16 | l.qpn);
    eqe = rdma_eqe(&r, r.eq0, 1);
    g_assert_cmpuint(eqe.type, ==, SHCA_EQE_QP_FATAL);
    g_assert_cmpuint(rdma_state(&r, l.qpn), ==, SHCA_QPS_ERR);
    loop_connect(&r, &l, true);
    rdma_db(&r, 0, SHCA_DB_SQ, 0xffffu << 16 | l.qpn);
    g_assert_cmpuint(rdma_eqe(&r, r.eq0, 2).type, ==, SHCA_EQE_QP_FATAL);
    g_assert_cmpuint(rdma_state(&r, l.qpn), ==, SHCA_QPS_ERR);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&r.h);
}

/* Fault injection (spec §12) */
#define FAULT_ALL(pm) ",fault-tx-drop=" pm ",fault-tx-dup=" pm \
                      ",fault-tx-reorder=" pm ",fault-rx-drop=" pm \
                      ",fault-rx-dup=" pm ",fault-rx-reorder=" pm

static void rdma_stats(Rdma *r, uint64_t *stats)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_QUERY_STATS };
    uint64_t buf = guest_alloc(&r->h.alloc, 4096);

    cmd.query_stats.addr = cpu_to_le64(buf);
    g_assert_cmpuint(hca_cmd(&r->h, &cmd, NULL), ==, SHCA_AQ_OK);
    for (int i = 0; i < SHCA_STAT_COUNT; i++) {
        stats[i] = qtest_readq(r->h.qts, buf + 8 * i);
    }
    guest_free(&r->h.alloc, buf);
}

/* Wait (bounded) for CQE n of a CQ with the VM clock stopped. */
static void loop_wait_cqe_frozen(Rdma *r, uint64_t cqbuf, uint32_t n)
{
    for (int tries = 0; tries < 400 && !loop_cqe_ready(r, cqbuf, n); tries++) {
        g_usleep(5 * 1000);
    }
    g_assert(loop_cqe_ready(r, cqbuf, n));
}

static uint64_t loop_tx_packets(Rdma *r)
{
    uint64_t stats[SHCA_STAT_COUNT];

    rdma_stats(r, stats);
    return stats[SHCA_STAT_TX_PACKETS];
}

/*
 * Post SEND i (signaled, 64 bytes at buf) and wait, with the VM clock
 * stopped, until it is received; then long enough for an ACK that goes
 * at once to have gone.
 */
static void loop_send_received(Rdma *r, Loop *l, uint16_t i, uint64_t wr_id,
                               uint64_t buf)
{
    loop_send(r, l, i, wr_id, buf, 64, SHCA_WQE_SIGNALED);
    rdma_db(r, 0, SHCA_DB_SQ, (i + 1) << 16 | l->qpn);
    loop_wait_cqe_frozen(r, l->rcqbuf, i);
    g_usleep(50 * 1000);
}

/*
 * A QP that sends requests holds its ACKs back for the next one (spec §16):
 * the ACK goes out just before it, or when the ACK delay runs out on the
 * VM clock.  The loop QP answers its own requests, so it is such a QP.
 */
static void test_rc_ack_rides(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    uint64_t buf;
    Rdma r;
    Loop l;

    rdma_start_with(&r, netdev);
    loop_start(&r, &l, SHCA_QPT_RC, 7);
    loop_connect(&r, &l, false);
    buf = guest_alloc(&r.h.alloc, 4096);
    loop_recv(&r, &l, 0, 0x31, buf, 2048);
    loop_recv(&r, &l, 1, 0x32, buf + 2048, 2048);
    rdma_db(&r, 0, SHCA_DB_RQ, 2 << 16 | l.qpn);

    /* the SEND arrives; its ACK waits, so the SEND is not complete */
    loop_send_received(&r, &l, 0, 0x41, buf);
    g_assert_cmpuint(loop_tx_packets(&r), ==, 1);
    g_assert(!loop_cqe_ready(&r, l.scqbuf, 0));

    /* the next request takes the ACK with it, ahead of itself */
    loop_send_received(&r, &l, 1, 0x42, buf);
    loop_wait_cqe_frozen(&r, l.scqbuf, 0);
    g_assert_cmphex(le64_to_cpu(rdma_cqe(&r, l.scqbuf, 0).wr_id), ==, 0x41);
    g_assert_cmpuint(loop_tx_packets(&r), ==, 3);
    g_assert(!loop_cqe_ready(&r, l.scqbuf, 1));

    /* with no request to ride, the ACK goes when its delay runs out */
    qtest_clock_step(r.h.qts, SHCA_ACK_DELAY_NS);
    loop_wait_cqe_frozen(&r, l.scqbuf, 1);
    g_assert_cmphex(le64_to_cpu(rdma_cqe(&r, l.scqbuf, 1).wr_id), ==, 0x42);
    g_assert_cmpuint(loop_tx_packets(&r), ==, 4);
    g_assert_cmpuint(rdma_state(&r, l.qpn), ==, SHCA_QPS_RTS);

    /*
     * A held ACK is not lost when the QP stops answering: a program that
     * has its last receive may move its QP on (or destroy it) at once.
     */
    loop_recv(&r, &l, 2, 0x33, buf, 2048);
    rdma_db(&r, 0, SHCA_DB_RQ, 3 << 16 | l.qpn);
    loop_send_received(&r, &l, 2, 0x43, buf);
    g_assert_cmpuint(loop_tx_packets(&r), ==, 5);
    loop_connect(&r, &l, true);         /* RTS -> RESET -> INIT */
    g_assert_cmpuint(loop_tx_packets(&r), ==, 6);
    hca_stop(&r.h);
}

#define LOOP_SQ_RECORD(l) ((l)->sq + 4096)

static uint32_t loop_polling(Rdma *r, Loop *l)
{
    return qtest_readl(r->h.qts, LOOP_SQ_RECORD(l) +
                       offsetof(struct shca_sq_record, device));
}

static void loop_record_pi(Rdma *r, Loop *l, uint32_t pi)
{
    qtest_writel(r->h.qts, LOOP_SQ_RECORD(l) +
                 offsetof(struct shca_sq_record, pi), pi);
}

/*
 * The SQ record (spec §14): POLLING is set while the QP has packets
 * unacknowledged, WQEs posted with the record alone then go out, and it
 * is clear again once all are acknowledged.  A count in the record runs
 * past the ring as a doorbell's does.
 */
static void test_rc_sq_record(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    struct shca_aq_entry cmd;
    uint64_t buf;
    uint32_t qpn;
    Rdma r;
    Loop l;

    rdma_start_with(&r, netdev);
    g_assert_cmphex(rd(&r.h, SHCA_REG_CAPS) & SHCA_CAP_SQ_RECORD, ==,
                    SHCA_CAP_SQ_RECORD);
    loop_create(&r, &l, SHCA_QPT_RC, 7, SHCA_QP_F_SQ_RECORD, 0);
    /* the ring fills the buffer: no room for the record */
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_RC, l.scq, l.rcq,
                guest_alloc(&r.h.alloc, 4096), 0);
    cmd.create_qp.sq_log_size = 6;
    cmd.create_qp.flags = SHCA_QP_F_SQ_RECORD;
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, &qpn), ==, SHCA_AQ_BAD_PARAM);
    cmd.create_qp.flags = 0x80;
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, &qpn), ==, SHCA_AQ_BAD_PARAM);

    loop_connect(&r, &l, false);
    buf = guest_alloc(&r.h.alloc, 4096);
    for (int i = 0; i < 3; i++) {
        loop_recv(&r, &l, i, 0x30 + i, buf + 1024 * i, 1024);
    }
    rdma_db(&r, 0, SHCA_DB_RQ, 3 << 16 | l.qpn);
    g_assert_cmphex(loop_polling(&r, &l), ==, 0);

    /* two SENDs by record and doorbell: the second leaves from req_bh */
    loop_send(&r, &l, 0, 0x40, buf, 64, SHCA_WQE_SIGNALED);
    loop_send(&r, &l, 1, 0x41, buf, 64, SHCA_WQE_SIGNALED);
    loop_record_pi(&r, &l, 2);
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | l.qpn);
    loop_wait_cqe_frozen(&r, l.rcqbuf, 1);
    g_assert_cmphex(loop_polling(&r, &l), ==, SHCA_SQ_RECORD_POLLING);

    /* a third by the record alone: the held ACK's arrival starts it */
    loop_send(&r, &l, 2, 0x42, buf, 64, SHCA_WQE_SIGNALED);
    loop_record_pi(&r, &l, 3);
    qtest_clock_step(r.h.qts, SHCA_ACK_DELAY_NS);
    loop_wait_cqe_frozen(&r, l.rcqbuf, 2);
    g_assert_cmphex(le64_to_cpu(rdma_cqe(&r, l.rcqbuf, 2).wr_id), ==, 0x32);

    /* all acknowledged: POLLING clear, software rings again */
    qtest_clock_step(r.h.qts, SHCA_ACK_DELAY_NS);
    loop_wait_cqe_frozen(&r, l.scqbuf, 2);
    g_assert_cmphex(le64_to_cpu(rdma_cqe(&r, l.scqbuf, 2).wr_id), ==, 0x42);
    g_assert_cmphex(loop_polling(&r, &l), ==, 0);

    /* a record that runs past the ring, read as the QP enters RTS */
    loop_connect(&r, &l, true);
    loop_record_pi(&r, &l, loop_sq_size(&l) + 1);
    loop_connect_rts(&r, &l);
    g_assert_cmpuint(rdma_eqe(&r, r.eq0, 0).type, ==, SHCA_EQE_QP_FATAL);
    g_assert_cmpuint(rdma_state(&r, l.qpn), ==, SHCA_QPS_ERR);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&r.h);
}

/* Wait until the counters stop moving (held frames go out on the clock). */
static void fault_settle(Rdma *r, uint64_t *stats)
{
    uint64_t prev[SHCA_STAT_COUNT];
    int same = 0;

    rdma_stats(r, prev);
    for (int tries = 0; tries < 400 && same < 10; tries++) {
        g_usleep(5 * 1000);
        qtest_clock_step(r->h.qts, 1000 * 1000);
        rdma_stats(r, stats);
        same = memcmp(stats, prev, sizeof(prev)) ? 0 : same + 1;
        memcpy(prev, stats, sizeof(prev));
    }
    g_assert_cmpint(same, >=, 10);
}

#define FAULT_NIC_FRAMES 100
#define FAULT_UC_MSGS 48

/*
 * Faults on FAULT_NIC_FRAMES malformed RoCEv2 frames the NIC function sends
 * to the port's GID (they reach the transport, which drops them), then on
 * FAULT_UC_MSGS UC messages of a QP to itself: the counters at the end.
 */
static void fault_run(uint64_t seed, uint64_t *stats)
{
    g_autofree char *netdev = dgram_loop_netdev();
    g_autofree char *extra = g_strdup_printf(",fault-seed=%" PRIu64
                                             FAULT_ALL("100") "%s",
                                             seed, netdev);
    uint8_t frame[64];
    Rdma r;
    Loop l;
    Nic n;

    rdma_start_with(&r, extra);
    loop_nic(&r, &n);
    loop_start(&r, &l, SHCA_QPT_UC, 9);
    loop_connect(&r, &l, false);

    make_udp_frame(frame, l.mac, 0x0a000001, 4791);
    for (int i = 0; i < FAULT_NIC_FRAMES; i++) {
        g_assert_cmpuint(nic_send(&r.h, &n, frame, sizeof(frame)), ==,
                         SHCA_NIC_DESC_DONE);
    }
    fault_settle(&r, stats);
    /* only the receive side saw them: each accounted for exactly */
    g_assert_cmpuint(stats[SHCA_STAT_TX_PACKETS], ==, 0);
    g_assert_cmpuint(stats[SHCA_STAT_RX_DROPPED], ==,
                     FAULT_NIC_FRAMES - stats[SHCA_STAT_FAULT_DROPPED] +
                     stats[SHCA_STAT_FAULT_DUPLICATED]);
    g_assert_cmpuint(stats[SHCA_STAT_FAULT_DROPPED], >, 0);
    g_assert_cmpuint(stats[SHCA_STAT_FAULT_DUPLICATED], >, 0);
    g_assert_cmpuint(stats[SHCA_STAT_FAULT_REORDERED], >, 0);

    for (uint16_t i = 0; i < FAULT_UC_MSGS; i++) {
        loop_send(&r, &l, i, i, 0, 0, 0);
        if ((i + 1) % loop_sq_size(&l) == 0) {
            rdma_db(&r, 0, SHCA_DB_SQ, (uint32_t)(i + 1) << 16 | l.qpn);
        }
    }
    fault_settle(&r, stats);
    g_assert_cmpuint(stats[SHCA_STAT_TX_PACKETS], ==, FAULT_UC_MSGS);
    g_assert_cmpuint(stats[SHCA_STAT_RX_PACKETS], >, 0);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&r.h);
}

/* The same seed gives the same faults; another seed others. */
static void test_fault_deterministic(void)
{
    uint64_t a[SHCA_STAT_COUNT], b[SHCA_STAT_COUNT], c[SHCA_STAT_COUNT];

    fault_run(42, a);
    fault_run(42, b);
    fault_run(43, c);
    for (int i = 0; i < SHCA_STAT_COUNT; i++) {
        g_assert_cmpuint(a[i], ==, b[i]);
    }
    g_assert(memcmp(&a[SHCA_STAT_FAULT_DROPPED],
                    &c[SHCA_STAT_FAULT_DROPPED], 3 * sizeof(a[0])) != 0);
}

/* Faults touch only the transport's frames, never the NIC function's. */
static void test_fault_nic_untouched(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    g_autofree char *extra = g_strdup_printf(FAULT_ALL("1000") "%s",
                                             netdev);
    uint64_t stats[SHCA_STAT_COUNT];
    uint8_t frame[64], got[64];
    Rdma r;
    Loop l;
    Nic n;

    rdma_start_with(&r, extra);
    loop_nic(&r, &n);
    loop_start(&r, &l, SHCA_QPT_UC, 9);
    loop_connect(&r, &l, false);

    /* RoCEv2 to our GID: dropped before the transport sees it */
    make_udp_frame(frame, l.mac, 0x0a000001, 4791);
    g_assert_cmpuint(nic_send(&r.h, &n, frame, sizeof(frame)), ==,
                     SHCA_NIC_DESC_DONE);
    /* a UC message: dropped on its way out */
    loop_send(&r, &l, 0, 1, 0, 0, 0);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    /* an ordinary frame: the NIC function's, untouched */
    make_udp_frame(frame, l.mac, 0x0a000001, 5000);
    g_assert_cmpuint(nic_send(&r.h, &n, frame, sizeof(frame)), ==,
                     SHCA_NIC_DESC_DONE);
    g_assert_cmpuint(nic_wait_rx(&r.h, &n, 0), ==, sizeof(frame));
    qtest_memread(r.h.qts, n.rxbuf, got, sizeof(got));
    g_assert(memcmp(got, frame, sizeof(frame)) == 0);

    fault_settle(&r, stats);
    g_assert_cmpuint(stats[SHCA_STAT_TX_PACKETS], ==, 1);
    g_assert_cmpuint(stats[SHCA_STAT_FAULT_DROPPED], ==, 2);
    g_assert_cmpuint(stats[SHCA_STAT_FAULT_DUPLICATED], ==, 0);
    g_assert_cmpuint(stats[SHCA_STAT_FAULT_REORDERED], ==, 0);
    g_assert_cmpuint(stats[SHCA_STAT_RX_PACKETS], ==, 0);
    g_assert_cmpuint(stats[SHCA_STAT_RX_DROPPED], ==, 0);
    hca_stop(&r.h);
}

/* RC recovers from drops, duplicates and reordering both ways. */
static void test_fault_rc_recovers(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    g_autofree char *extra = g_strdup_printf(FAULT_ALL("100") "%s", netdev);
    const uint32_t len = 3000, msgs = 12;
    uint64_t stats[SHCA_STAT_COUNT];
    uint8_t data[3000], got[3000];
    uint64_t tx, rx;
    struct shca_cqe cqe;
    Rdma r;
    Loop l;

    rdma_start_with(&r, extra);
    loop_start(&r, &l, SHCA_QPT_RC, 7);
    loop_connect(&r, &l, false);
    tx = guest_alloc(&r.h.alloc, msgs * 4096);
    rx = guest_alloc(&r.h.alloc, msgs * 4096);
    qtest_memset(r.h.qts, rx, 0, msgs * 4096);
    for (uint32_t m = 0; m < msgs; m++) {
        memset(data, m + 1, len);
        data[0] = m;
        qtest_memwrite(r.h.qts, tx + m * 4096, data, len);
        loop_recv(&r, &l, m, 0x100 + m, rx + m * 4096, 4096);
        loop_send(&r, &l, m, 0x200 + m, tx + m * 4096, len,
                  SHCA_WQE_SIGNALED);
    }
    rdma_db(&r, 0, SHCA_DB_RQ, msgs << 16 | l.qpn);
    rdma_db(&r, 0, SHCA_DB_SQ, msgs << 16 | l.qpn);

    for (uint32_t m = 0; m < msgs; m++) {
        cqe = loop_recv_cqe(&r, &l);
        g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
        g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x100 + m);
        g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, len);
        memset(data, m + 1, len);
        data[0] = m;
        qtest_memread(r.h.qts, rx + m * 4096, got, len);
        g_assert(memcmp(got, data, len) == 0);
        cqe = loop_send_cqe(&r, &l);
        g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
        g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x200 + m);
    }
    rdma_stats(&r, stats);
    g_assert_cmpuint(stats[SHCA_STAT_FAULT_DROPPED], >, 0);
    g_assert_cmpuint(stats[SHCA_STAT_RETRANSMITS] +
                     stats[SHCA_STAT_DUPLICATES], >, 0);
    g_assert_cmpuint(rdma_state(&r, l.qpn), ==, SHCA_QPS_RTS);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&r.h);
}

/* Probabilities are per mille: above 1000 the device does not realize. */
static void test_fault_props(void)
{
    QTestState *qts = qtest_init("-machine pc -nodefaults");
    QDict *resp;

    resp = qtest_qmp(qts, "{'execute': 'device_add', 'arguments':"
                     " {'driver': 'softhca', 'id': 'bad',"
                     " 'fault-rx-reorder': 1001}}");
    g_assert(qdict_haskey(resp, "error"));
    g_assert(strstr(qdict_get_str(qdict_get_qdict(resp, "error"), "desc"),
                     "fault-rx-reorder"));
    qobject_unref(resp);
    qtest_qmp_assert_success(qts, "{'execute': 'device_add', 'arguments':"
                             " {'driver': 'softhca', 'id': 'good',"
                             " 'fault-seed': 7, 'fault-tx-drop': 1000,"
                             " 'fault-rx-reorder': 1000}}");
    qtest_quit(qts);
}

/* The AV of the port itself (ip: unicast GID 0, or a multicast group). */
static struct shca_av ud_av(Rdma *r, uint32_t ip)
{
    struct shca_av av = { .hop_limit = 64 };

    av.dgid[10] = av.dgid[11] = 0xff;
    stl_be_p(av.dgid + 12, ip);
    if (ip == UD_IP) {
        stl_le_p(av.dmac, rd(&r->h, SHCA_REG_MAC_LO));
        stw_le_p(av.dmac + 4, rd(&r->h, SHCA_REG_MAC_HI));
    } else {
        memcpy(av.dmac, "\x01\x00\x5e\x00\x00\x05", 6);
    }
    return av;
}

/* Post and ring UD send WQE i: header w, then av, then one SGE. */
static void ud_send(Rdma *r, Ud *u, uint16_t i, struct shca_send_wqe *w,
                    const struct shca_av *av, uint64_t addr, uint32_t len,
                    uint32_t key)
{
    uint64_t slot = u->sq + ((uint64_t)(i % UD_SQ_SIZE) << UD_SQ_SHIFT);
    struct shca_sge sge = {
        .addr = cpu_to_le64(addr),
        .length = cpu_to_le32(len),
        .lkey = cpu_to_le32(key),
    };

    w->num_sge = 1;
    qtest_memwrite(r->h.qts, slot, w, sizeof(*w));
    qtest_memwrite(r->h.qts, slot + sizeof(*w), av, sizeof(*av));
    qtest_memwrite(r->h.qts, slot + sizeof(*w) + sizeof(*av), &sge,
                   sizeof(sge));
    rdma_db(r, 0, SHCA_DB_SQ, (uint32_t)(i + 1) << 16 | u->qpn);
}

/* A signaled SEND of len bytes at addr to dqpn with Q_Key qkey. */
static void ud_send_simple(Rdma *r, Ud *u, uint16_t i, uint32_t ip,
                           uint32_t dqpn, uint32_t qkey, uint64_t addr,
                           uint32_t len, uint32_t key)
{
    struct shca_send_wqe w = {
        .wr_id = cpu_to_le64(0x5000 + i),
        .opcode = SHCA_WR_SEND,
        .flags = SHCA_WQE_SIGNALED,
        .remote_qpn = cpu_to_le32(dqpn),
        .remote_qkey = cpu_to_le32(qkey),
    };
    struct shca_av av = ud_av(r, ip);

    ud_send(r, u, i, &w, &av, addr, len, key);
}

/* Post and ring receive WQE i (one SGE). */
static void ud_recv(Rdma *r, Ud *u, uint16_t i, uint64_t addr, uint32_t len,
                    uint32_t key)
{
    struct shca_recv_wqe w = {
        .wr_id = cpu_to_le64(0x7000 + i),
        .num_sge = 1,
    };
    struct shca_sge sge = {
        .addr = cpu_to_le64(addr),
        .length = cpu_to_le32(len),
        .lkey = cpu_to_le32(key),
    };
    uint64_t slot = u->rq + ((uint64_t)(i & 15) << LOOP_RQ_SHIFT);

    qtest_memwrite(r->h.qts, slot, &w, sizeof(w));
    qtest_memwrite(r->h.qts, slot + sizeof(w), &sge, sizeof(sge));
    rdma_db(r, 0, SHCA_DB_RQ, (uint32_t)(i + 1) << 16 | u->qpn);
}

/* One MR over all of RAM, for the SGEs of the datagram tests. */
static uint32_t ud_phys_key(Rdma *r)
{
    uint32_t key;

    g_assert_cmpuint(rdma_reg_mr(r, SHCA_ACCESS_PHYS | SHCA_ACCESS_LOCAL_WRITE,
                                 0, RAM_TOP, 0, NULL, &key), ==, SHCA_AQ_OK);
    return key;
}

/* Wait (bounded) until counter stat reaches want. */
static void wait_stat(Rdma *r, unsigned stat, uint64_t want)
{
    uint64_t stats[SHCA_STAT_COUNT];

    for (int tries = 0; tries < 400; tries++) {
        rdma_stats(r, stats);
        if (stats[stat] >= want) {
            g_assert_cmpuint(stats[stat], ==, want);
            return;
        }
        g_usleep(5 * 1000);
        qtest_clock_step(r->h.qts, 1000 * 1000);
    }
    g_assert_not_reached();
}

static void check_ud_recv(struct shca_cqe cqe, uint16_t i, uint32_t len,
                          uint32_t src_qp)
{
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmphex(cqe.opcode, ==, SHCA_CQE_OP_RECV);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x7000 + i);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 40 + len);
    g_assert_cmpuint(le32_to_cpu(cqe.src_qp), ==, src_qp);
    g_assert_cmphex(cqe.flags & ~SHCA_CQE_WITH_IMM, ==,
                    SHCA_CQE_GRH | SHCA_CQE_IPV4);
}

static void test_ud_send_recv(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    uint8_t data[600], got[40 + 600];
    struct shca_send_wqe w = {
        .wr_id = cpu_to_le64(0x5001),
        .opcode = SHCA_WR_SEND_IMM,
        .flags = SHCA_WQE_SIGNALED,
        .imm = cpu_to_be32(0xa1b2c3d4),
        .remote_qkey = cpu_to_le32(0x80000000),     /* the sender's own */
    };
    uint64_t tx, rx, stats[SHCA_STAT_COUNT];
    struct shca_av av;
    struct shca_cqe cqe;
    uint32_t key;
    Rdma r;
    Ud a, b;

    rdma_start_with(&r, netdev);
    g_assert_cmphex(rd(&r.h, SHCA_REG_CAPS) & SHCA_CAP_DGRAM, ==,
                    SHCA_CAP_DGRAM);
    key = ud_phys_key(&r);
    ud_start(&r, &a, SHCA_QPT_UD, UD_QKEY);
    ud_start(&r, &b, SHCA_QPT_UD, UD_QKEY);
    tx = guest_alloc(&r.h.alloc, 4096);
    rx = guest_alloc(&r.h.alloc, 4096);
    for (size_t i = 0; i < sizeof(data); i++) {
        data[i] = i * 3 + 1;
    }
    qtest_memwrite(r.h.qts, tx, data, sizeof(data));

    /* a datagram: the GRH (IPv4 behind 20 zeros), then the payload */
    ud_recv(&r, &b, 0, rx, 1024, key);
    ud_send_simple(&r, &a, 0, UD_IP, b.qpn, UD_QKEY, tx, sizeof(data), key);
    cqe = loop_wait_cqe(&r, a.scqbuf, a.scq_n++);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmphex(cqe.opcode, ==, SHCA_CQE_OP_SEND);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x5000);
    cqe = loop_wait_cqe(&r, b.rcqbuf, b.rcq_n++);
    check_ud_recv(cqe, 0, sizeof(data), a.qpn);
    g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, b.qpn);
    qtest_memread(r.h.qts, rx, got, sizeof(got));
    for (int i = 0; i < 20; i++) {
        g_assert_cmpuint(got[i], ==, 0);
    }
    g_assert_cmphex(got[20], ==, 0x45);
    g_assert_cmpuint(lduw_be_p(got + 22), ==, 20 + 8 + 12 + 8 +
                     sizeof(data) + 4);
    g_assert_cmpuint(got[20 + 9], ==, 17);
    g_assert_cmphex((uint32_t)ldl_be_p(got + 20 + 12), ==, UD_IP);
    g_assert_cmphex((uint32_t)ldl_be_p(got + 20 + 16), ==, UD_IP);
    g_assert(memcmp(got + 40, data, sizeof(data)) == 0);

    /* SEND_IMM with the controlled Q_Key; the PSN wraps */
    av = ud_av(&r, UD_IP);
    w.remote_qpn = cpu_to_le32(b.qpn);
    ud_recv(&r, &b, 1, rx, 1024, key);
    ud_send(&r, &a, 1, &w, &av, tx, 16, key);
    cqe = loop_wait_cqe(&r, b.rcqbuf, b.rcq_n++);
    check_ud_recv(cqe, 1, 16, a.qpn);
    g_assert_cmphex(cqe.flags & SHCA_CQE_WITH_IMM, ==, SHCA_CQE_WITH_IMM);
    g_assert_cmphex(be32_to_cpu(cqe.imm), ==, 0xa1b2c3d4);
    cqe = loop_wait_cqe(&r, a.scqbuf, a.scq_n++);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);

    /* a wrong Q_Key: dropped and counted, the receive WQE stays */
    ud_send_simple(&r, &a, 2, UD_IP, b.qpn, UD_QKEY + 1, tx, 8, key);
    wait_stat(&r, SHCA_STAT_RX_BAD_QKEY, 1);
    /* to a QP that has no receive WQE: dropped and counted */
    ud_send_simple(&r, &b, 0, UD_IP, a.qpn, UD_QKEY, tx, 8, key);
    wait_stat(&r, SHCA_STAT_RX_NO_RECV_WQE, 1);
    /* a buffer too short for GRH + payload: LOC_LEN_ERR, the QP stays */
    ud_recv(&r, &b, 2, rx, 40 + 7, key);
    ud_send_simple(&r, &a, 3, UD_IP, b.qpn, UD_QKEY, tx, 8, key);
    cqe = loop_wait_cqe(&r, b.rcqbuf, b.rcq_n++);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_LOC_LEN_ERR);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x7002);
    g_assert_cmpuint(rdma_state(&r, b.qpn), ==, SHCA_QPS_RTS);
    ud_recv(&r, &b, 3, rx, 1024, key);
    ud_send_simple(&r, &a, 4, UD_IP, b.qpn, UD_QKEY, tx, 8, key);
    cqe = loop_wait_cqe(&r, b.rcqbuf, b.rcq_n++);
    check_ud_recv(cqe, 3, 8, a.qpn);
    /* to a QPN with no QP: RX_DROPPED */
    ud_send_simple(&r, &a, 5, UD_IP, 999, UD_QKEY, tx, 8, key);
    wait_stat(&r, SHCA_STAT_RX_DROPPED, 1);
    for (unsigned i = 0; i < 4; i++) {
        cqe = loop_wait_cqe(&r, a.scqbuf, a.scq_n++);
        g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    }
    rdma_stats(&r, stats);
    g_assert_cmpuint(stats[SHCA_STAT_RX_PACKETS], ==, 4);

    /* longer than the port MTU (1500: 1024): LOC_LEN_ERR, QP to ERR */
    ud_send_simple(&r, &a, 6, UD_IP, b.qpn, UD_QKEY, tx, 1025, key);
    cqe = loop_wait_cqe(&r, a.scqbuf, a.scq_n++);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_LOC_LEN_ERR);
    g_assert_cmpuint(rdma_state(&r, a.qpn), ==, SHCA_QPS_ERR);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&r.h);
}

/*
 * A datagram between IPv6 GIDs: the GRH is the packet's IPv6 header, with
 * the AV's traffic class, flow label and hop limit, and no IPV4 flag.
 */
static void test_ud_ipv6(void)
{
    static const uint8_t gid6[16] = {
        0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1
    };
    g_autofree char *netdev = dgram_loop_netdev();
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_SET_GID };
    struct shca_send_wqe w = {
        .wr_id = cpu_to_le64(0x6000),
        .opcode = SHCA_WR_SEND,
        .flags = SHCA_WQE_SIGNALED,
        .remote_qkey = cpu_to_le32(UD_QKEY),
    };
    uint8_t data[100], got[40 + 100];
    struct shca_av av;
    struct shca_cqe cqe;
    uint64_t tx, rx;
    uint32_t key;
    Rdma r;
    Ud a, b;

    rdma_start_with(&r, netdev);
    cmd.set_gid.index = cpu_to_le32(1);
    cmd.set_gid.flags = cpu_to_le32(SHCA_GID_VALID);
    memcpy(cmd.set_gid.gid, gid6, 16);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_OK);
    key = ud_phys_key(&r);
    ud_start(&r, &a, SHCA_QPT_UD, UD_QKEY);
    ud_start(&r, &b, SHCA_QPT_UD, UD_QKEY);
    tx = guest_alloc(&r.h.alloc, 4096);
    rx = guest_alloc(&r.h.alloc, 4096);
    for (size_t i = 0; i < sizeof(data); i++) {
        data[i] = i ^ 0x5a;
    }
    qtest_memwrite(r.h.qts, tx, data, sizeof(data));

    av = ud_av(&r, UD_IP);
    memcpy(av.dgid, gid6, 16);
    av.sgid_index = cpu_to_le16(1);
    av.traffic_class = 0x28;
    av.flow_label = cpu_to_le32(0x12345);
    av.hop_limit = 7;
    w.remote_qpn = cpu_to_le32(b.qpn);
    ud_recv(&r, &b, 0, rx, 1024, key);
    ud_send(&r, &a, 0, &w, &av, tx, sizeof(data), key);
    cqe = loop_wait_cqe(&r, b.rcqbuf, b.rcq_n++);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 40 + sizeof(data));
    g_assert_cmpuint(le32_to_cpu(cqe.src_qp), ==, a.qpn);
    g_assert_cmphex(cqe.flags, ==, SHCA_CQE_GRH);
    qtest_memread(r.h.qts, rx, got, sizeof(got));
    /* version 6, traffic class 0x28, flow label 0x12345 */
    g_assert_cmphex((uint32_t)ldl_be_p(got), ==, 0x62812345);
    g_assert_cmpuint(lduw_be_p(got + 4), ==, 8 + 12 + 8 + sizeof(data) + 4);
    g_assert_cmpuint(got[6], ==, 17);
    g_assert_cmpuint(got[7], ==, 7);
    g_assert(memcmp(got + 8, gid6, 16) == 0);
    g_assert(memcmp(got + 24, gid6, 16) == 0);
    g_assert(memcmp(got + 40, data, sizeof(data)) == 0);
    cqe = loop_wait_cqe(&r, a.scqbuf, a.scq_n++);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&r.h);
}

/* Bad UD send WQEs complete with an error and move the QP to ERR. */
static void test_ud_send_malformed(void)
{
    struct shca_send_wqe w = {
        .wr_id = cpu_to_le64(0x99),
        .opcode = SHCA_WR_RDMA_WRITE,
        .remote_qpn = cpu_to_le32(5),
    };
    struct shca_av av;
    struct shca_cqe cqe;
    uint32_t key;
    Rdma r;
    Ud a;

    rdma_start(&r);
    key = ud_phys_key(&r);
    for (int c = 0; c < 4; c++) {
        ud_start(&r, &a, SHCA_QPT_UD, UD_QKEY);
        av = ud_av(&r, UD_IP);
        w.opcode = c == 0 ? SHCA_WR_RDMA_WRITE : SHCA_WR_SEND;
        if (c == 1) {
            av.sgid_index = cpu_to_le16(7);             /* no such GID */
        } else if (c == 2) {
            av = ud_av(&r, UD_MCAST_IP);                /* QPN not 0xffffff */
        } else if (c == 3) {
            w.remote_qpn = cpu_to_le32(0x1000000);      /* 25 bits */
        }
        ud_send(&r, &a, 0, &w, &av, 0, 0, key);
        cqe = loop_wait_cqe(&r, a.scqbuf, 0);
        g_assert_cmpuint(cqe.status, ==, SHCA_CQE_LOC_QP_OP_ERR);
        g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x99);
        g_assert_cmpuint(rdma_state(&r, a.qpn), ==, SHCA_QPS_ERR);
    }
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&r.h);
}

/* QP1: MADs only, sent with source QPN 1 */
static void test_gsi(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    uint8_t mad[256] = { 1, 1, 1 }, got[40 + 256];
    uint64_t tx, rx;
    struct shca_cqe cqe;
    uint32_t key;
    Rdma r;
    Ud gsi, ud;

    rdma_start_with(&r, netdev);
    key = ud_phys_key(&r);
    ud_start(&r, &gsi, SHCA_QPT_GSI, SHCA_GSI_QKEY);
    g_assert_cmpuint(gsi.qpn, ==, 1);
    /* a controlled Q_Key (bit 31) is the sender's own: QP1's here */
    ud_start(&r, &ud, SHCA_QPT_UD, SHCA_GSI_QKEY);
    tx = guest_alloc(&r.h.alloc, 4096);
    rx = guest_alloc(&r.h.alloc, 4096);
    qtest_memwrite(r.h.qts, tx, mad, sizeof(mad));

    /* QP1 to QP1: a MAD */
    ud_recv(&r, &gsi, 0, rx, 1024, key);
    ud_send_simple(&r, &gsi, 0, UD_IP, 1, SHCA_GSI_QKEY, tx, 256, key);
    cqe = loop_wait_cqe(&r, gsi.rcqbuf, gsi.rcq_n++);
    check_ud_recv(cqe, 0, 256, 1);
    qtest_memread(r.h.qts, rx, got, sizeof(got));
    g_assert(memcmp(got + 40, mad, sizeof(mad)) == 0);
    /* from a UD QP: its source QPN */
    ud_recv(&r, &gsi, 1, rx, 1024, key);
    ud_send_simple(&r, &ud, 0, UD_IP, 1, SHCA_GSI_QKEY, tx, 256, key);
    cqe = loop_wait_cqe(&r, gsi.rcqbuf, gsi.rcq_n++);
    check_ud_recv(cqe, 1, 256, ud.qpn);
    /* not a MAD: the wrong length, or base version */
    ud_send_simple(&r, &ud, 1, UD_IP, 1, SHCA_GSI_QKEY, tx, 200, key);
    wait_stat(&r, SHCA_STAT_RX_BAD_MAD, 1);
    mad[0] = 2;
    qtest_memwrite(r.h.qts, tx, mad, sizeof(mad));
    ud_send_simple(&r, &ud, 2, UD_IP, 1, SHCA_GSI_QKEY, tx, 256, key);
    wait_stat(&r, SHCA_STAT_RX_BAD_MAD, 2);
    /* the receive WQE posted is still there */
    mad[0] = 1;
    qtest_memwrite(r.h.qts, tx, mad, sizeof(mad));
    ud_recv(&r, &gsi, 2, rx, 1024, key);
    ud_send_simple(&r, &ud, 3, UD_IP, 1, SHCA_GSI_QKEY, tx, 256, key);
    cqe = loop_wait_cqe(&r, gsi.rcqbuf, gsi.rcq_n++);
    check_ud_recv(cqe, 2, 256, ud.qpn);
    hca_stop(&r.h);
}

static uint8_t rdma_mcast(Rdma *r, uint8_t opcode, uint32_t qpn, uint32_t ip)
{
    struct shca_aq_entry cmd = { .opcode = opcode };

    cmd.mcast.qpn = cpu_to_le32(qpn);
    cmd.mcast.gid[10] = cmd.mcast.gid[11] = 0xff;
    stl_be_p(cmd.mcast.gid + 12, ip);
    return hca_cmd(&r->h, &cmd, NULL);
}

static void test_mcast_attach(void)
{
    struct shca_aq_entry cmd;
    uint32_t cq, rc, uds[9];
    uint64_t cqbuf, q;
    Rdma r;

    rdma_start(&r);
    cq = rdma_cq(&r, 0, 4, &cqbuf);
    q = guest_alloc(&r.h.alloc, 8192);
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_RC, cq, cq, q, q + 4096);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, &rc), ==, SHCA_AQ_OK);
    for (int i = 0; i < 9; i++) {
        rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_UD, cq, cq, q, q + 4096);
        g_assert_cmpuint(hca_cmd(&r.h, &cmd, &uds[i]), ==, SHCA_AQ_OK);
    }
    /* no such QP, not UD, not a multicast GID, reserved bits */
    g_assert_cmpuint(rdma_mcast(&r, SHCA_AQ_ATTACH_MCAST, 999, UD_MCAST_IP),
                     ==, SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(rdma_mcast(&r, SHCA_AQ_ATTACH_MCAST, rc, UD_MCAST_IP),
                     ==, SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_mcast(&r, SHCA_AQ_ATTACH_MCAST, uds[0], UD_IP),
                     ==, SHCA_AQ_BAD_PARAM);
    cmd = (struct shca_aq_entry) { .opcode = SHCA_AQ_ATTACH_MCAST };
    cmd.mcast.qpn = cpu_to_le32(uds[0]);
    cmd.mcast.rsvd = cpu_to_le32(1);
    cmd.mcast.gid[0] = 0xff;
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_PARAM);
    /* 8 QPs a group, attaching twice changes nothing */
    for (int i = 0; i < 8; i++) {
        g_assert_cmpuint(rdma_mcast(&r, SHCA_AQ_ATTACH_MCAST, uds[i],
                                    UD_MCAST_IP), ==, SHCA_AQ_OK);
    }
    g_assert_cmpuint(rdma_mcast(&r, SHCA_AQ_ATTACH_MCAST, uds[3],
                                UD_MCAST_IP), ==, SHCA_AQ_OK);
    g_assert_cmpuint(rdma_mcast(&r, SHCA_AQ_ATTACH_MCAST, uds[8],
                                UD_MCAST_IP), ==, SHCA_AQ_NO_RESOURCES);
    /* detach: twice, of a QP never attached */
    g_assert_cmpuint(rdma_mcast(&r, SHCA_AQ_DETACH_MCAST, uds[3],
                                UD_MCAST_IP), ==, SHCA_AQ_OK);
    g_assert_cmpuint(rdma_mcast(&r, SHCA_AQ_DETACH_MCAST, uds[3],
                                UD_MCAST_IP), ==, SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_mcast(&r, SHCA_AQ_DETACH_MCAST, uds[8],
                                UD_MCAST_IP + 1), ==, SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_mcast(&r, SHCA_AQ_ATTACH_MCAST, uds[8],
                                UD_MCAST_IP), ==, SHCA_AQ_OK);
    /* 64 groups */
    for (uint32_t i = 1; i < 64; i++) {
        g_assert_cmpuint(rdma_mcast(&r, SHCA_AQ_ATTACH_MCAST, uds[0],
                                    UD_MCAST_IP + i), ==, SHCA_AQ_OK);
    }
    g_assert_cmpuint(rdma_mcast(&r, SHCA_AQ_ATTACH_MCAST, uds[0],
                                UD_MCAST_IP + 64), ==, SHCA_AQ_NO_RESOURCES);
    /* DESTROY_QP detaches: the group of uds[0] alone goes, one is free */
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DESTROY_QP, uds[0], NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(rdma_mcast(&r, SHCA_AQ_ATTACH_MCAST, uds[1],
                                UD_MCAST_IP + 64), ==, SHCA_AQ_OK);
    g_assert_cmpuint(rdma_mcast(&r, SHCA_AQ_ATTACH_MCAST, uds[3],
                                UD_MCAST_IP), ==, SHCA_AQ_OK);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&r.h);
}

/*
 * A datagram to a group goes out of the port once and, through the
 * loopback (spec §7.1), to every QP of the port attached to the group.
 */
static void test_mcast_deliver(void)
{
    uint8_t frame[64], got[64], sent[2048];
    uint64_t tx, rx;
    struct shca_cqe cqe;
    size_t sent_len;
    uint32_t key;
    Wire w;
    Rdma r;
    Ud a, b, c;
    Nic n;

    wire_open(&w);
    rdma_start_with(&r, w.netdev);
    key = ud_phys_key(&r);
    ud_start(&r, &a, SHCA_QPT_UD, UD_QKEY);
    ud_start(&r, &b, SHCA_QPT_UD, UD_QKEY);
    ud_start(&r, &c, SHCA_QPT_UD, UD_QKEY);
    tx = guest_alloc(&r.h.alloc, 4096);
    rx = guest_alloc(&r.h.alloc, 4096);
    qtest_memwrite(r.h.qts, tx, "multicast!", 10);
    g_assert_cmpuint(rdma_mcast(&r, SHCA_AQ_ATTACH_MCAST, b.qpn,
                                UD_MCAST_IP), ==, SHCA_AQ_OK);
    g_assert_cmpuint(rdma_mcast(&r, SHCA_AQ_ATTACH_MCAST, c.qpn,
                                UD_MCAST_IP), ==, SHCA_AQ_OK);

    /* to both attached QPs, not to the sender, and once to the wire */
    ud_recv(&r, &b, 0, rx, 1024, key);
    ud_recv(&r, &c, 0, rx + 2048, 1024, key);
    ud_recv(&r, &a, 0, rx + 1024, 1024, key);
    ud_send_simple(&r, &a, 0, UD_MCAST_IP, SHCA_MCAST_QPN, UD_QKEY, tx, 10,
                   key);
    cqe = loop_wait_cqe(&r, b.rcqbuf, b.rcq_n++);
    check_ud_recv(cqe, 0, 10, a.qpn);
    cqe = loop_wait_cqe(&r, c.rcqbuf, c.rcq_n++);
    check_ud_recv(cqe, 0, 10, a.qpn);
    qtest_memread(r.h.qts, rx + 2048, got, 50);
    g_assert_cmphex((uint32_t)ldl_be_p(got + 20 + 16), ==, UD_MCAST_IP);
    g_assert(memcmp(got + 40, "multicast!", 10) == 0);
    cqe = loop_wait_cqe(&r, a.scqbuf, a.scq_n++);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    sent_len = wire_recv(&w, sent, sizeof(sent), 1000);
    g_assert_cmpuint(sent_len, >, 0);
    g_assert(memcmp(sent, "\x01\x00\x5e\x00\x00\x05", 6) == 0);
    g_assert_cmpuint(wire_recv(&w, got, sizeof(got), 50), ==, 0);

    /*
     * A group with no QP left: the next datagram is not looped back, and
     * one from the wire is dropped and counted (RX_DROPPED).
     */
    g_assert_cmpuint(rdma_mcast(&r, SHCA_AQ_DETACH_MCAST, b.qpn,
                                UD_MCAST_IP), ==, SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DESTROY_QP, c.qpn, NULL), ==,
                     SHCA_AQ_OK);
    ud_send_simple(&r, &a, 1, UD_MCAST_IP, SHCA_MCAST_QPN, UD_QKEY, tx, 10,
                   key);
    g_assert_cmpuint(wire_recv(&w, got, sizeof(got), 1000), >, 0);
    wire_send(&w, sent, sent_len);
    wait_stat(&r, SHCA_STAT_RX_DROPPED, 1);
    g_assert_cmpuint(rdma_cqe(&r, a.rcqbuf, 0).phase, ==, 0);
    g_assert_cmpuint(rdma_cqe(&r, b.rcqbuf, 1).phase, ==, 0);

    /*
     * Multicast that is not RoCEv2 goes to the NIC function; the NIC's own
     * multicast leaves the port and does not come back.
     */
    loop_nic(&r, &n);
    make_udp_frame(frame, (const uint8_t *)"\x01\x00\x5e\x00\x00\x05",
                   UD_MCAST_IP, 5000);
    wire_send(&w, frame, sizeof(frame));
    g_assert_cmpuint(nic_wait_rx(&r.h, &n, 0), ==, sizeof(frame));
    qtest_memread(r.h.qts, n.rxbuf, got, sizeof(got));
    g_assert(memcmp(got, frame, sizeof(frame)) == 0);
    g_assert_cmpuint(nic_send(&r.h, &n, frame, sizeof(frame)), ==,
                     SHCA_NIC_DESC_DONE);
    g_assert_cmpuint(wire_recv(&w, got, sizeof(got), 1000), ==, sizeof(frame));
    g_assert_cmphex(rd(&r.h, SHCA_REG_NIC_RX_HEAD), ==, 1);
    hca_stop(&r.h);
    wire_close(&w);
}

/*
 * The port's loopback (spec §7.1): RC between a QP and itself never
 * reaches the wire, yet every packet is counted as sent and as received.
 * A NIC frame to the port's MAC comes back to the rings, in order with the
 * rest; a broadcast leaves the port and does not come back.
 */
static void test_port_loopback(void)
{
    uint8_t data[3000], got[3000], frame[64];
    uint64_t tx, rx, stats[SHCA_STAT_COUNT];
    struct shca_cqe cqe;
    Wire w;
    Rdma r;
    Loop l;
    Nic n;

    wire_open(&w);
    rdma_start_with(&r, w.netdev);
    g_assert_cmphex(rd(&r.h, SHCA_REG_CAPS) & SHCA_CAP_LOOPBACK, ==,
                    SHCA_CAP_LOOPBACK);
    loop_start(&r, &l, SHCA_QPT_RC, 7);
    loop_connect(&r, &l, false);
    tx = guest_alloc(&r.h.alloc, 4096);
    rx = guest_alloc(&r.h.alloc, 4096);
    for (size_t i = 0; i < sizeof(data); i++) {
        data[i] = i * 13 + 5;
    }
    qtest_memwrite(r.h.qts, tx, data, sizeof(data));
    qtest_memset(r.h.qts, rx, 0, 4096);
    loop_recv(&r, &l, 0, 0x1111, rx, 4096);
    rdma_db(&r, 0, SHCA_DB_RQ, 1 << 16 | l.qpn);
    loop_send(&r, &l, 0, 0x2222, tx, sizeof(data), SHCA_WQE_SIGNALED);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    cqe = loop_recv_cqe(&r, &l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, sizeof(data));
    cqe = loop_send_cqe(&r, &l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    qtest_memread(r.h.qts, rx, got, sizeof(got));
    g_assert(memcmp(got, data, sizeof(data)) == 0);

    /* three requests and an ACK at least, each sent once, received once */
    rdma_stats(&r, stats);
    g_assert_cmpuint(stats[SHCA_STAT_TX_PACKETS], >=, 4);
    g_assert_cmpuint(stats[SHCA_STAT_RX_PACKETS], ==,
                     stats[SHCA_STAT_TX_PACKETS]);
    g_assert_cmpuint(stats[SHCA_STAT_RETRANSMITS], ==, 0);
    g_assert_cmpuint(stats[SHCA_STAT_LOOPBACK_DROPPED], ==, 0);
    g_assert_cmpuint(wire_recv(&w, got, sizeof(got), 50), ==, 0);

    loop_nic(&r, &n);
    make_udp_frame(frame, l.mac, 0x0a000002, 5000);
    g_assert_cmpuint(nic_send(&r.h, &n, frame, sizeof(frame)), ==,
                     SHCA_NIC_DESC_DONE);
    g_assert_cmpuint(nic_wait_rx(&r.h, &n, 0), ==, sizeof(frame));
    qtest_memread(r.h.qts, n.rxbuf, got, sizeof(frame));
    g_assert(memcmp(got, frame, sizeof(frame)) == 0);
    make_udp_frame(frame, (const uint8_t *)"\xff\xff\xff\xff\xff\xff",
                   0x0a0000ff, 5000);
    g_assert_cmpuint(nic_send(&r.h, &n, frame, sizeof(frame)), ==,
                     SHCA_NIC_DESC_DONE);
    g_assert_cmpuint(wire_recv(&w, got, sizeof(got), 1000), ==, sizeof(frame));
    g_assert(memcmp(got, frame, sizeof(frame)) == 0);
    /* the next frame to ourselves is the next one the rings get */
    make_udp_frame(frame, l.mac, 0x0a000002, 5001);
    g_assert_cmpuint(nic_send(&r.h, &n, frame, sizeof(frame)), ==,
                     SHCA_NIC_DESC_DONE);
    g_assert_cmpuint(nic_wait_rx(&r.h, &n, 1), ==, sizeof(frame));
    qtest_memread(r.h.qts, n.rxbuf + NIC_BUF, got, sizeof(frame));
    g_assert(memcmp(got, frame, sizeof(frame)) == 0);
    hca_stop(&r.h);
    wire_close(&w);
}

#define LOOPBACK_QUEUE  512     /* spec §7.1 */
#define FULL_SQ_LOG     10
#define FULL_SENDS      600

/*
 * --- a network peer the test plays: RoCEv2 frames from 10.0.0.2, the AV
 * of rc_attr(), built here from IBA's rules rather than the device's code.
 */
#define PEER_QPN    0x123456
#define PEER_PSN    0xabcdef            /* rc_attr()'s rq_psn */
#define ROCE_OFF    42                  /* Ethernet, IPv4, UDP */

static uint32_t peer_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++) {
            crc = crc >> 1 ^ (0xedb88320 & -(crc & 1));
        }
    }
    return ~crc;
}

/*
 * Frame f of roce_len bytes of BTH, extended headers and payload (padded
 * to 4 by the caller) at f + ROCE_OFF: the envelope and the ICRC around
 * them.  The ICRC covers 8 bytes of 1s, the IP and UDP headers and the
 * BTH with their variant fields set to 1s, then the rest.
 */
static size_t peer_frame_from(uint8_t *f, const uint8_t *dmac,
                              uint32_t src_ip, size_t roce_len)
{
    size_t len = ROCE_OFF + roce_len + 4;
    uint8_t m[8 + 20 + 8 + 12];
    uint32_t icrc;

    memcpy(f, dmac, 6);
    memcpy(f + 6, "\x52\x54\x00\x12\x34\x99", 6);
    stw_be_p(f + 12, 0x0800);
    memset(f + 14, 0, 28);
    f[14] = 0x45;
    stw_be_p(f + 16, len - 14);
    stw_be_p(f + 20, 0x4000);           /* DF */
    f[22] = 64;
    f[23] = 17;
    stl_be_p(f + 26, src_ip);
    stl_be_p(f + 30, 0x0a000001);
    stw_be_p(f + 34, 0xc000);
    stw_be_p(f + 36, 4791);
    stw_be_p(f + 38, len - 34);
    ipv4_csum(f + 14);
    memset(m, 0xff, 8);
    memcpy(m + 8, f + 14, 40);
    m[8 + 1] = 0xff;                    /* TOS */
    m[8 + 8] = 0xff;                    /* TTL */
    memset(m + 8 + 10, 0xff, 2);        /* header checksum */
    memset(m + 8 + 26, 0xff, 2);        /* UDP checksum */
    m[8 + 28 + 4] = 0xff;               /* BTH resv8a */
    icrc = peer_crc32(peer_crc32(0, m, sizeof(m)), f + ROCE_OFF + 12,
                      roce_len - 12);
    stl_le_p(f + ROCE_OFF + roce_len, icrc);
    return len;
}

static size_t peer_frame(uint8_t *f, const uint8_t *dmac, size_t roce_len)
{
    return peer_frame_from(f, dmac, 0x0a000002, roce_len);
}

/* BTH: opcode, no pad, P_Key 0xffff, dest QP, ack request, PSN. */
static void peer_bth(uint8_t *b, uint8_t opcode, uint32_t dest_qpn,
                     uint32_t psn, bool ack_req)
{
    memset(b, 0, 12);
    b[0] = opcode;
    stw_be_p(b + 2, 0xffff);
    stl_be_p(b + 4, dest_qpn & 0xffffff);
    stl_be_p(b + 8, (ack_req ? 0x80000000u : 0) | (psn & 0xffffff));
}

/* An RDMA READ request to QP qpn, from src_ip. */
static void peer_read_from(Wire *w, const uint8_t *dmac, uint32_t src_ip,
                           uint32_t qpn, uint32_t psn, uint64_t va,
                           uint32_t rkey, uint32_t len)
{
    uint8_t f[128];
    uint8_t *b = f + ROCE_OFF;

    peer_bth(b, 0x0c, qpn, psn, true);
    stq_be_p(b + 12, va);
    stl_be_p(b + 20, rkey);
    stl_be_p(b + 24, len);
    wire_send(w, f, peer_frame_from(f, dmac, src_ip, 28));
}

/* The same from the peer, 10.0.0.2. */
static void peer_read(Wire *w, const uint8_t *dmac, uint32_t qpn,
                      uint32_t psn, uint64_t va, uint32_t rkey, uint32_t len)
{
    peer_read_from(w, dmac, 0x0a000002, qpn, psn, va, rkey, len);
}

/*
 * The next READ response to the peer within wait_ms (the VM clock moving
 * on), its payload in data; its PSN, or -1 if none came.
 */
static int64_t peer_read_resp(Rdma *r, Wire *w, uint8_t *data, size_t size,
                              int wait_ms)
{
    uint8_t f[4200];

    for (int t = 0; t < wait_ms; t += 10) {
        size_t n = wire_recv(w, f, sizeof(f), 10);
        uint8_t op = f[ROCE_OFF];

        qtest_clock_step(r->h.qts, 100 * 1000);
        if (n < ROCE_OFF + 20 || lduw_be_p(f + 36) != 4791 ||
            op < 0x0d || op > 0x10) {
            continue;
        }
        memcpy(data, f + ROCE_OFF + 16,
               MIN(size, n - ROCE_OFF - 16 - 4));
        return ldl_be_p(f + ROCE_OFF + 8) & 0xffffff;
    }
    return -1;
}

/*
 * Issue 11, defect 3: a UC message of more than the requester's window
 * (128 packets) never completed, the window waiting on ACKs UC never
 * gets.  256 MTUs now go, paced by the requester's per-callback budget.
 */
static void test_uc_message_over_window(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    const uint32_t len = 256 * 1024;
    struct shca_cqe cqe;
    uint64_t tx, rx;
    Rdma r;
    Loop l;

    rdma_start_with(&r, netdev);
    loop_start(&r, &l, SHCA_QPT_UC, 7);
    loop_connect(&r, &l, false);
    tx = guest_alloc(&r.h.alloc, len);
    rx = guest_alloc(&r.h.alloc, len);
    for (uint32_t i = 0; i < len; i += 4096) {
        qtest_memset(r.h.qts, tx + i, i / 4096 + 1, 4096);
    }
    loop_recv(&r, &l, 0, 0x55, rx, len);
    rdma_db(&r, 0, SHCA_DB_RQ, 1 << 16 | l.qpn);
    loop_send(&r, &l, 0, 0x66, tx, len, SHCA_WQE_SIGNALED);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    cqe = loop_send_cqe(&r, &l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    cqe = loop_recv_cqe(&r, &l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, len);
    g_assert_cmpuint(qtest_readb(r.h.qts, rx + len - 1), ==, len / 4096);
    hca_stop(&r.h);
}

/*
 * Issue 11, defect 6: Initiate Function Level Reset did nothing: the
 * registers kept their values, the bit read back 1, and the QPs went on
 * with DMA.  Now FLR resets the function as RESET does (spec §10).
 */
static void test_flr_resets(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    uint8_t exp;
    uint16_t devctl;
    Rdma r;
    Loop l;

    rdma_start_with(&r, netdev);
    loop_start(&r, &l, SHCA_QPT_RC, 7);
    loop_connect(&r, &l, false);
    loop_recv(&r, &l, 0, 0x10, 0, 0);
    rdma_db(&r, 0, SHCA_DB_RQ, 1 << 16 | l.qpn);
    loop_send(&r, &l, 0, 0x11, 0, 0, SHCA_WQE_SIGNALED);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    g_assert_cmpuint(loop_send_cqe(&r, &l).status, ==, SHCA_CQE_SUCCESS);

    exp = qpci_find_capability(r.h.dev, PCI_CAP_ID_EXP, 0);
    g_assert_cmpuint(exp, !=, 0);
    g_assert(qpci_config_readl(r.h.dev, exp + PCI_EXP_DEVCAP) &
             PCI_EXP_DEVCAP_FLR);
    devctl = qpci_config_readw(r.h.dev, exp + PCI_EXP_DEVCTL);
    qpci_config_writew(r.h.dev, exp + PCI_EXP_DEVCTL,
                       devctl | PCI_EXP_DEVCTL_BCR_FLR);
    g_assert_cmphex(qpci_config_readw(r.h.dev, exp + PCI_EXP_DEVCTL) &
                    PCI_EXP_DEVCTL_BCR_FLR, ==, 0);

    /*
     * FLR cleared the BARs and the command register as well: map them
     * again, then every register reads its reset value and no object is
     * left to do DMA.
     */
    qpci_device_enable(r.h.dev);
    r.h.bar = qpci_iomap(r.h.dev, SHCA_BAR_REGS, NULL);
    r.db = qpci_iomap(r.h.dev, SHCA_BAR_DB, NULL);
    g_assert_cmphex(rd(&r.h, SHCA_REG_MAGIC), ==, SHCA_MAGIC);
    g_assert_cmphex(rd(&r.h, SHCA_REG_CTRL), ==, 0);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, 0);
    g_assert_cmphex(rd(&r.h, SHCA_REG_AQ_BASE_LO), ==, 0);
    qtest_memset(r.h.qts, l.scqbuf, 0, 4096);
    loop_send(&r, &l, 1, 0x12, 0, 0, SHCA_WQE_SIGNALED);
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | l.qpn);
    qtest_clock_step(r.h.qts, 10 * 1000 * 1000);
    g_assert(!loop_cqe_ready(&r, l.scqbuf, 1));
    g_assert_cmpuint(rdma_cqe(&r, l.scqbuf, 1).phase, ==, 0);

    /* and it comes up again like a new one, with MSI-X enabled again */
    qpci_msix_enable(r.h.dev);
    hca_enable(&r.h);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&r.h);
}

/*
 * A wire for the peer, a device on it, and an RC QP of the device with the
 * rights access connected to the peer (rc_attr()'s AV, QPN and PSNs).
 */
static void peer_start(Wire *w, Rdma *r, Loop *l, uint32_t access)
{
    wire_open(w);
    rdma_start_with(r, w->netdev);
    loop_start(r, l, SHCA_QPT_RC, 7);
    l->access = access;
    loop_connect_peer(r, l);
}

/* An ACK from the peer for PSNs up to psn. */
static void peer_ack(Wire *w, const uint8_t *dmac, uint32_t qpn, uint32_t psn,
                     uint32_t msn)
{
    uint8_t f[128];
    uint8_t *b = f + ROCE_OFF;

    peer_bth(b, 0x11, qpn, psn, false);
    stl_be_p(b + 12, 0x1f000000 | (msn & 0xffffff));    /* ACK, no credits */
    wire_send(w, f, peer_frame(f, dmac, 16));
}

/*
 * Take the requests the device sends the peer until none came for wait_ms
 * (the VM clock moving on meanwhile): how many, and the PSN of the last.
 */
static unsigned peer_requests(Rdma *r, Wire *w, int wait_ms,
                              uint32_t *last_psn)
{
    uint8_t f[4200];
    unsigned n = 0;

    /* wait_ms of silence ends it; every frame starts the wait again */
    for (int t = 0; t < wait_ms; t += 10) {
        size_t len = wire_recv(w, f, sizeof(f), 10);

        if (!len) {
            qtest_clock_step(r->h.qts, 100 * 1000);
            continue;
        }
        if (len >= ROCE_OFF + 16 && lduw_be_p(f + 36) == 4791) {
            *last_psn = ldl_be_p(f + ROCE_OFF + 8) & 0xffffff;
            n++;
        }
        t = 0;
    }
    return n;
}

/*
 * Issue 11, defect 2: the completer took an ACK for any PSN of a message
 * started, sent or not.  An ACK for the last PSN of a message of which
 * 128 packets had gone completed it as SUCCESS; one for the PSN before
 * opened the window over the whole rest.  Only PSNs of packets sent are
 * acknowledged now; the rest is dropped and counted.
 */
static void test_forged_ack_dropped(void)
{
    const uint32_t len = 256 * 1024, first = 0x100;   /* 256 MTUs of 1 KiB */
    uint64_t stats[SHCA_STAT_COUNT], tx;
    uint32_t last = 0;
    struct shca_cqe cqe;
    Wire w;
    Rdma r;
    Loop l;

    peer_start(&w, &r, &l, SHCA_ACCESS_REMOTE_WRITE | SHCA_ACCESS_REMOTE_READ);
    tx = guest_alloc(&r.h.alloc, len);
    loop_send(&r, &l, 0, 0x99, tx, len, SHCA_WQE_SIGNALED);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    g_assert_cmpuint(peer_requests(&r, &w, 500, &last), ==, 128);
    g_assert_cmphex(last, ==, first + 127);

    /* ACKs for the message's last PSN, and the one before: never sent */
    peer_ack(&w, l.mac, l.qpn, first + 255, 1);
    peer_ack(&w, l.mac, l.qpn, first + 254, 0);
    g_assert_cmpuint(peer_requests(&r, &w, 300, &last), ==, 0);
    g_assert(!loop_cqe_ready(&r, l.scqbuf, 0));
    rdma_stats(&r, stats);
    g_assert_cmpuint(stats[SHCA_STAT_RX_DROPPED], ==, 2);

    /* the real ACKs move the window, then complete the message */
    peer_ack(&w, l.mac, l.qpn, first + 127, 0);
    g_assert_cmpuint(peer_requests(&r, &w, 500, &last), ==, 128);
    g_assert_cmphex(last, ==, first + 255);
    peer_ack(&w, l.mac, l.qpn, first + 255, 1);
    cqe = loop_send_cqe(&r, &l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x99);
    hca_stop(&r.h);
    wire_close(&w);
}

/*
 * An ACK past a READ whose responses were lost made the requester ask
 * again, and so did every ACK after, before the responses it asked for
 * could come: under reordering the ACKs of the requests it sent again
 * after the READ spent all its retries in a few milliseconds
 * (tests/guest/rdma-soak with 64 QPs).  One retry per gap, as for a gap in
 * the responses; the timer covers a retry that got lost.
 */
static void test_ack_past_read_retries_once(void)
{
    const uint32_t first = 0x100;
    uint64_t stats[SHCA_STAT_COUNT], buf;
    struct shca_send_wqe w = {
        .wr_id = cpu_to_le64(0xa1), .opcode = SHCA_WR_RDMA_READ,
        .flags = SHCA_WQE_SIGNALED, .num_sge = 1,
        .remote_addr = cpu_to_le64(0x10000), .rkey = cpu_to_le32(0x1234),
    };
    struct shca_sge sge = { .length = cpu_to_le32(2048) };
    unsigned reads = 0;
    uint8_t f[4200];
    Wire wire;
    Rdma r;
    Loop l;

    peer_start(&wire, &r, &l, SHCA_ACCESS_REMOTE_READ);
    buf = guest_alloc(&r.h.alloc, 4096);
    sge.addr = cpu_to_le64(buf);
    sge.lkey = cpu_to_le32(l.key);
    loop_write_send(&r, &l, 0, &w, &sge, sizeof(sge));
    loop_send(&r, &l, 1, 0xa2, 0, 0, SHCA_WQE_SIGNALED);
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | l.qpn);
    /* the READ (PSNs 0x100, 0x101 for its two responses), the SEND */
    g_assert_cmpuint(peer_requests(&r, &wire, 300, &(uint32_t){ 0 }), ==, 2);

    /* the SEND acknowledged three times, no READ response ever */
    for (int i = 0; i < 3; i++) {
        peer_ack(&wire, l.mac, l.qpn, first + 2, 1);
    }
    for (int t = 0; t < 300; t += 10) {
        size_t n = wire_recv(&wire, f, sizeof(f), 10);

        if (n > ROCE_OFF && f[ROCE_OFF] == 0x0c /* RDMA READ request */) {
            g_assert_cmphex(ldl_be_p(f + ROCE_OFF + 8) & 0xffffff, ==, first);
            reads++;
        }
    }
    g_assert_cmpuint(reads, ==, 1);
    rdma_stats(&r, stats);
    g_assert_cmpuint(stats[SHCA_STAT_RETRANSMITS], ==, 1);
    hca_stop(&r.h);
    wire_close(&wire);
}

/*
 * Issue 11, defect 5: a duplicate RDMA READ re-executed with whatever rkey
 * and address it carried, and without the QP's access check, so a peer
 * read an MR the original never named, or after REMOTE_READ was revoked.
 * A duplicate is answered only when it asks again for what the original
 * READ named, while the QP still grants REMOTE_READ.  Requests from
 * another host than the QP's peer are not answered at all.
 */
static void test_duplicate_read_checked(void)
{
    uint8_t a[256], b[256], got[256];
    uint64_t stats[SHCA_STAT_COUNT];
    uint32_t mr_a, mr_b;
    struct shca_qp_attr attr;
    uint64_t buf_a, buf_b;
    Wire w;
    Rdma r;
    Loop l;

    peer_start(&w, &r, &l, SHCA_ACCESS_REMOTE_READ);
    buf_a = guest_alloc(&r.h.alloc, 4096);
    buf_b = guest_alloc(&r.h.alloc, 4096);
    memset(a, 0xaa, sizeof(a));
    memset(b, 0xbb, sizeof(b));
    qtest_memwrite(r.h.qts, buf_a, a, sizeof(a));
    qtest_memwrite(r.h.qts, buf_b, b, sizeof(b));
    g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_PHYS |
                                 SHCA_ACCESS_LOCAL_WRITE |
                                 SHCA_ACCESS_REMOTE_READ, buf_a, 4096, 0,
                                 NULL, &mr_a), ==, SHCA_AQ_OK);
    g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_PHYS |
                                 SHCA_ACCESS_LOCAL_WRITE |
                                 SHCA_ACCESS_REMOTE_READ, buf_b, 4096, 0,
                                 NULL, &mr_b), ==, SHCA_AQ_OK);

    /*
     * Issue 11, defect 8: any host on the link could inject into a
     * connection.  The same READ from 10.0.0.3, not the QP's peer, is
     * dropped and counted.
     */
    peer_read_from(&w, l.mac, 0x0a000003, l.qpn, PEER_PSN, buf_a, mr_a, 256);
    g_assert_cmpint(peer_read_resp(&r, &w, got, sizeof(got), 300), ==, -1);
    rdma_stats(&r, stats);
    g_assert_cmpuint(stats[SHCA_STAT_RX_DROPPED], ==, 1);

    /* the READ, and the same READ again: answered both times */
    peer_read(&w, l.mac, l.qpn, PEER_PSN, buf_a, mr_a, 256);
    g_assert_cmpint(peer_read_resp(&r, &w, got, sizeof(got), 1000), ==,
                    PEER_PSN);
    g_assert(memcmp(got, a, sizeof(a)) == 0);
    peer_read(&w, l.mac, l.qpn, PEER_PSN, buf_a, mr_a, 256);
    g_assert_cmpint(peer_read_resp(&r, &w, got, sizeof(got), 1000), ==,
                    PEER_PSN);
    g_assert(memcmp(got, a, sizeof(a)) == 0);

    /* a "duplicate" naming another MR, or more than the original */
    peer_read(&w, l.mac, l.qpn, PEER_PSN, buf_b, mr_b, 256);
    g_assert_cmpint(peer_read_resp(&r, &w, got, sizeof(got), 300), ==, -1);
    peer_read(&w, l.mac, l.qpn, PEER_PSN, buf_a, mr_a, 512);
    g_assert_cmpint(peer_read_resp(&r, &w, got, sizeof(got), 300), ==, -1);

    /* REMOTE_READ revoked: the original is not answered again either */
    attr = rc_attr(SHCA_QPS_RTS);
    attr.access = 0;
    g_assert_cmpuint(rdma_modify(&r, l.qpn, SHCA_QP_ATTR_STATE |
                                 SHCA_QP_ATTR_ACCESS, &attr), ==, SHCA_AQ_OK);
    peer_read(&w, l.mac, l.qpn, PEER_PSN, buf_a, mr_a, 256);
    g_assert_cmpint(peer_read_resp(&r, &w, got, sizeof(got), 300), ==, -1);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&r.h);
    wire_close(&w);
}

/*
 * One doorbell of 600 UD sends to the port itself: the loopback queue
 * takes 512 frames and counts the rest as dropped (spec §7.1), the device
 * stays ready, and the frames it took are delivered.
 */
static void test_port_loopback_full(void)
{
    const size_t slot = 1u << UD_SQ_SHIFT;
    g_autofree uint8_t *sq = g_malloc0(slot << FULL_SQ_LOG);
    struct shca_send_wqe w = {
        .opcode = SHCA_WR_SEND,
        .num_sge = 1,
        .remote_qkey = cpu_to_le32(UD_QKEY),
    };
    struct shca_sge sge = { .length = cpu_to_le32(16) };
    struct shca_av av;
    uint64_t stats[SHCA_STAT_COUNT];
    struct shca_cqe cqe;
    Rdma r;
    Ud u;

    rdma_start(&r);
    sge.lkey = cpu_to_le32(ud_phys_key(&r));
    sge.addr = cpu_to_le64(guest_alloc(&r.h.alloc, 4096));
    ud_start_sq(&r, &u, SHCA_QPT_UD, UD_QKEY, FULL_SQ_LOG);
    av = ud_av(&r, UD_IP);
    w.remote_qpn = cpu_to_le32(u.qpn);
    for (int i = 0; i < FULL_SENDS; i++) {
        uint8_t *p = sq + i * slot;

        w.wr_id = cpu_to_le64(i);
        w.flags = i == FULL_SENDS - 1 ? SHCA_WQE_SIGNALED : 0;
        memcpy(p, &w, sizeof(w));
        memcpy(p + sizeof(w), &av, sizeof(av));
        memcpy(p + sizeof(w) + sizeof(av), &sge, sizeof(sge));
    }
    qtest_memwrite(r.h.qts, u.sq, sq, slot << FULL_SQ_LOG);
    rdma_db(&r, 0, SHCA_DB_SQ, FULL_SENDS << 16 | u.qpn);

    cqe = loop_wait_cqe(&r, u.scqbuf, u.scq_n++);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmpuint(le64_to_cpu(cqe.wr_id), ==, FULL_SENDS - 1);
    /* the QP has no receive WQE: every datagram delivered is counted */
    wait_stat(&r, SHCA_STAT_RX_NO_RECV_WQE, LOOPBACK_QUEUE);
    rdma_stats(&r, stats);
    g_assert_cmpuint(stats[SHCA_STAT_TX_PACKETS], ==, FULL_SENDS);
    g_assert_cmpuint(stats[SHCA_STAT_LOOPBACK_DROPPED], ==,
                     FULL_SENDS - LOOPBACK_QUEUE);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    g_assert_cmpuint(rdma_state(&r, u.qpn), ==, SHCA_QPS_RTS);
    hca_stop(&r.h);
}

/* --- shared receive queues (spec §13.5) ---------------------------------- */

#define SRQ_LOG     3           /* 8 WQEs */
#define SRQ_SHIFT   5           /* a receive WQE and one SGE */

typedef struct Srq {
    uint32_t srqn;
    uint64_t buf;               /* the ring, then the record */
    uint8_t log_size;
    uint16_t pi;
} Srq;

static uint8_t srq_create_cmd(Rdma *r, uint32_t uctx, uint32_t pdn,
                              uint8_t log_size, uint32_t limit, uint64_t buf,
                              uint32_t npages, uint32_t *srqn)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_CREATE_SRQ };

    cmd.create_srq.uctx = cpu_to_le32(uctx);
    cmd.create_srq.pdn = cpu_to_le32(pdn);
    cmd.create_srq.srq_limit = cpu_to_le32(limit);
    cmd.create_srq.log_size = log_size;
    cmd.create_srq.wqe_shift = SRQ_SHIFT;
    buf_direct(&cmd.create_srq.buf, buf, npages);
    return hca_cmd(&r->h, &cmd, srqn);
}

/* An SRQ of the kernel's PD in a fresh page, armed at limit. */
static void srq_start(Rdma *r, Srq *q, uint32_t limit)
{
    memset(q, 0, sizeof(*q));
    q->buf = guest_alloc(&r->h.alloc, 4096);
    q->log_size = SRQ_LOG;
    qtest_memset(r->h.qts, q->buf, 0, 4096);
    g_assert_cmpuint(srq_create_cmd(r, 0, r->pd, SRQ_LOG, limit, q->buf, 1,
                                    &q->srqn), ==, SHCA_AQ_OK);
}

/* Post one receive WQE (one SGE of len bytes at addr) and ring for it. */
static void srq_post(Rdma *r, Srq *q, uint64_t wr_id, uint64_t addr,
                     uint32_t len, uint32_t key)
{
    struct shca_recv_wqe w = { .wr_id = cpu_to_le64(wr_id), .num_sge = 1 };
    struct shca_sge sge = {
        .addr = cpu_to_le64(addr),
        .length = cpu_to_le32(len),
        .lkey = cpu_to_le32(key),
    };
    uint64_t slot = q->buf + ((uint64_t)(q->pi & ((1u << q->log_size) - 1))
                              << SRQ_SHIFT);

    qtest_memwrite(r->h.qts, slot, &w, sizeof(w));
    qtest_memwrite(r->h.qts, slot + sizeof(w), &sge, sizeof(sge));
    q->pi++;
    rdma_db(r, 0, SHCA_DB_SRQ, (uint32_t)q->pi << 16 | q->srqn);
}

/* The device's consumer count in the record behind the ring. */
static uint32_t srq_record_ci(Rdma *r, Srq *q)
{
    return qtest_readl(r->h.qts, q->buf + ((1u << q->log_size) << SRQ_SHIFT));
}

static uint8_t srq_modify(Rdma *r, Srq *q, uint32_t mask, uint32_t limit,
                          uint8_t log_size, uint64_t buf, uint32_t npages)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_MODIFY_SRQ };

    cmd.modify_srq.srqn = cpu_to_le32(q->srqn);
    cmd.modify_srq.attr_mask = cpu_to_le32(mask);
    cmd.modify_srq.srq_limit = cpu_to_le32(limit);
    if (mask & SHCA_SRQ_ATTR_MAX_WR) {
        cmd.modify_srq.log_size = log_size;
        buf_direct(&cmd.modify_srq.buf, buf, npages);
    }
    return hca_cmd(&r->h, &cmd, NULL);
}

/*
 * Malformed SRQ commands and QPs that name SRQs badly are refused and
 * change nothing; a bad SRQ doorbell is ignored.
 */
static void test_srq_checks(void)
{
    struct shca_aq_entry cmd;
    uint64_t buf, sq, cqbuf;
    uint32_t cq, uctx, upd, srqn, qpn, limit;
    Rdma r;
    Srq q;

    rdma_start(&r);
    g_assert_cmphex(rd(&r.h, SHCA_REG_CAPS) & SHCA_CAP_SRQ, ==, SHCA_CAP_SRQ);
    g_assert_cmpuint(rd(&r.h, SHCA_REG_MAX_SRQ), ==, 1024);
    g_assert_cmpuint(rd(&r.h, SHCA_REG_MAX_SRQ_WR), ==, 4096);
    buf = guest_alloc(&r.h.alloc, 4096);
    sq = guest_alloc(&r.h.alloc, 4096);
    cq = rdma_cq(&r, 0, LOOP_CQ_LOG, &cqbuf);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_ALLOC_UCTX, 0, &uctx), ==,
                     SHCA_AQ_OK);
    upd = rdma_user_pd(&r, uctx);

    g_assert_cmpuint(srq_create_cmd(&r, 0, 99, SRQ_LOG, 0, buf, 1, &srqn), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(srq_create_cmd(&r, 77, r.pd, SRQ_LOG, 0, buf, 1, &srqn),
                     ==, SHCA_AQ_BAD_HANDLE);
    /* a PD of another context */
    g_assert_cmpuint(srq_create_cmd(&r, 0, upd, SRQ_LOG, 0, buf, 1, &srqn), ==,
                     SHCA_AQ_BAD_PARAM);
    /* 8192 WQEs > MAX_SRQ_WR; a limit of the whole ring */
    g_assert_cmpuint(srq_create_cmd(&r, 0, r.pd, 13, 0, buf, 64, &srqn), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(srq_create_cmd(&r, 0, r.pd, SRQ_LOG, 8, buf, 1, &srqn),
                     ==, SHCA_AQ_BAD_PARAM);
    /* 128 WQEs of 32 bytes and the record do not fit in one page */
    g_assert_cmpuint(srq_create_cmd(&r, 0, r.pd, 7, 0, buf, 1, &srqn), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(srq_create_cmd(&r, 0, r.pd, SRQ_LOG, 0, RAM_TOP, 1,
                                    &srqn), ==, SHCA_AQ_BAD_ADDR);

    srq_start(&r, &q, 0);
    g_assert_cmpuint(q.srqn, ==, 1);
    /* QPs: a missing SRQ, one and an RQ, a GSI QP, another PD's SRQ */
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_RC, cq, cq, sq, 0);
    cmd.create_qp.flags = SHCA_QP_F_SRQ;
    cmd.create_qp.srqn = cpu_to_le16(5);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_HANDLE);
    cmd.create_qp.srqn = cpu_to_le16(0);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_HANDLE);
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_RC, cq, cq, sq, buf);
    cmd.create_qp.flags = SHCA_QP_F_SRQ;
    cmd.create_qp.srqn = cpu_to_le16(q.srqn);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_PARAM);
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_GSI, cq, cq, sq, 0);
    cmd.create_qp.flags = SHCA_QP_F_SRQ;
    cmd.create_qp.srqn = cpu_to_le16(q.srqn);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_PARAM);
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_RC, cq, cq, sq, 0);
    cmd.create_qp.pdn = cpu_to_le32(rdma_user_pd(&r, 0));
    cmd.create_qp.flags = SHCA_QP_F_SRQ;
    cmd.create_qp.srqn = cpu_to_le16(q.srqn);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_PARAM);

    /* a QP that uses the SRQ keeps it, and its PD, from being destroyed */
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_UD, cq, cq, sq, 0);
    cmd.create_qp.flags = SHCA_QP_F_SRQ;
    cmd.create_qp.srqn = cpu_to_le16(q.srqn);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, &qpn), ==, SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DESTROY_SRQ, q.srqn, NULL), ==,
                     SHCA_AQ_BUSY);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DESTROY_QP, qpn, NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEALLOC_PD, r.pd, NULL), ==,
                     SHCA_AQ_BUSY);

    /* MODIFY_SRQ: no mask, an unknown bit, a limit of the ring, a bad ring */
    g_assert_cmpuint(srq_modify(&r, &q, 0, 0, 0, 0, 0), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(srq_modify(&r, &q, 4, 0, 0, 0, 0), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(srq_modify(&r, &q, SHCA_SRQ_ATTR_LIMIT, 8, 0, 0, 0), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(srq_modify(&r, &q, SHCA_SRQ_ATTR_MAX_WR, 0, 7, buf, 1),
                     ==, SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(srq_modify(&r, &q, SHCA_SRQ_ATTR_LIMIT, 5, 0, 0, 0), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_QUERY_SRQ, q.srqn, &limit), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(limit, ==, 5);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_QUERY_SRQ, 9, &limit), ==,
                     SHCA_AQ_BAD_HANDLE);

    /* doorbells past the ring, of another page, of no SRQ: ignored */
    rdma_db(&r, 0, SHCA_DB_SRQ, 9 << 16 | q.srqn);
    rdma_db(&r, uctx, SHCA_DB_SRQ, 1 << 16 | q.srqn);
    rdma_db(&r, 0, SHCA_DB_SRQ, 1 << 16 | 77);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    g_assert_cmpuint(srq_record_ci(&r, &q), ==, 0);

    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DESTROY_SRQ, q.srqn, NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DESTROY_SRQ, q.srqn, NULL), ==,
                     SHCA_AQ_BAD_HANDLE);
    hca_stop(&r.h);
}

static void check_srq_recv(struct shca_cqe cqe, uint64_t wr_id, uint16_t slot,
                           uint32_t len, uint32_t qpn)
{
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmphex(cqe.opcode, ==, SHCA_CQE_OP_RECV);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, wr_id);
    g_assert_cmpuint(le16_to_cpu(cqe.wqe_index), ==, slot);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, len);
    g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, qpn);
}

/*
 * An RC QP receives through an SRQ: each SEND takes the next WQE, the
 * record gives the slots back, the limit event fires once, a resized SRQ
 * keeps its WQEs, and ERR reports the last WQE reached.
 */
static void test_srq_rc(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    uint64_t tx, rx, ring;
    struct shca_eqe eqe;
    struct shca_qp_attr a = rc_attr(SHCA_QPS_ERR);
    uint32_t limit;
    Rdma r;
    Loop l;
    Srq q;

    rdma_start_with(&r, netdev);
    srq_start(&r, &q, 2);
    loop_create(&r, &l, SHCA_QPT_RC, 7, SHCA_QP_F_SRQ, q.srqn);
    loop_connect(&r, &l, false);
    tx = guest_alloc(&r.h.alloc, 4096);
    rx = guest_alloc(&r.h.alloc, 4096);
    qtest_memwrite(r.h.qts, tx, "shared receive queue", 20);
    for (int i = 0; i < 3; i++) {
        srq_post(&r, &q, 0x500 + i, rx + i * 256, 256, l.key);
    }

    /* two SENDs take WQEs 0 and 1: one WQE left < limit 2, the event */
    for (uint16_t i = 0; i < 2; i++) {
        loop_send(&r, &l, i, 0x900 + i, tx, 20, SHCA_WQE_SIGNALED);
        rdma_db(&r, 0, SHCA_DB_SQ, (uint32_t)(i + 1) << 16 | l.qpn);
        check_srq_recv(loop_recv_cqe(&r, &l), 0x500 + i, i, 20, l.qpn);
        g_assert_cmpuint(loop_send_cqe(&r, &l).status, ==, SHCA_CQE_SUCCESS);
    }
    g_assert_cmpuint(srq_record_ci(&r, &q), ==, 2);
    eqe = rdma_eqe(&r, r.eq0, 0);
    g_assert_cmpuint(eqe.type, ==, SHCA_EQE_SRQ_LIMIT);
    g_assert_cmpuint(le32_to_cpu(eqe.obj), ==, q.srqn);
    g_assert_cmpuint(rdma_eqe(&r, r.eq0, 1).type, ==, 0);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_QUERY_SRQ, q.srqn, &limit), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(limit, ==, 0);

    /* a ring of 16 in a new page: WQE 2 moves to slot 2 of it */
    ring = guest_alloc(&r.h.alloc, 4096);
    qtest_memset(r.h.qts, ring, 0, 4096);
    g_assert_cmpuint(srq_modify(&r, &q, SHCA_SRQ_ATTR_MAX_WR, 0, 4, ring, 1),
                     ==, SHCA_AQ_OK);
    qtest_memset(r.h.qts, q.buf, 0, 4096);      /* the old ring is dead */
    q.buf = ring;
    q.log_size = 4;
    g_assert_cmpuint(srq_record_ci(&r, &q), ==, 2);
    loop_send(&r, &l, 2, 0x902, tx, 20, SHCA_WQE_SIGNALED);
    rdma_db(&r, 0, SHCA_DB_SQ, 3 << 16 | l.qpn);
    check_srq_recv(loop_recv_cqe(&r, &l), 0x502, 2, 20, l.qpn);
    g_assert_cmpuint(loop_send_cqe(&r, &l).status, ==, SHCA_CQE_SUCCESS);
    /* a ring over MAX_SRQ_WR is refused */
    g_assert_cmpuint(srq_modify(&r, &q, SHCA_SRQ_ATTR_MAX_WR, 0, 14, ring, 1),
                     ==, SHCA_AQ_BAD_PARAM);

    /* ERR: the QP's last WQE reached; the SRQ's WQEs stay posted */
    srq_post(&r, &q, 0x503, rx, 256, l.key);
    g_assert_cmpuint(rdma_modify(&r, l.qpn, SHCA_QP_ATTR_STATE, &a), ==,
                     SHCA_AQ_OK);
    eqe = rdma_eqe(&r, r.eq0, 1);
    g_assert_cmpuint(eqe.type, ==, SHCA_EQE_QP_LAST_WQE);
    g_assert_cmpuint(le32_to_cpu(eqe.obj), ==, l.qpn);
    g_assert_cmpuint(srq_record_ci(&r, &q), ==, 3);
    g_assert(!loop_cqe_ready(&r, l.rcqbuf, l.rcq_n));
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&r.h);
}

/* A UD QP takes its receive WQEs from an SRQ too. */
static void test_srq_ud(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    struct shca_aq_entry cmd;
    struct shca_qp_attr a = { .state = SHCA_QPS_INIT,
                              .qkey = cpu_to_le32(UD_QKEY) };
    uint64_t tx, rx;
    uint32_t key;
    Rdma r;
    Srq q;
    Ud u, b;

    rdma_start_with(&r, netdev);
    key = ud_phys_key(&r);
    srq_start(&r, &q, 0);
    ud_start(&r, &u, SHCA_QPT_UD, UD_QKEY);
    memset(&b, 0, sizeof(b));
    b.scq = rdma_cq(&r, 0, LOOP_CQ_LOG, &b.scqbuf);
    b.rcq = rdma_cq(&r, 0, LOOP_CQ_LOG, &b.rcqbuf);
    b.sq = guest_alloc(&r.h.alloc, 4096);
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_UD, b.scq, b.rcq, b.sq, 0);
    cmd.create_qp.flags = SHCA_QP_F_SRQ;
    cmd.create_qp.srqn = cpu_to_le16(q.srqn);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, &b.qpn), ==, SHCA_AQ_OK);
    g_assert_cmpuint(rdma_modify(&r, b.qpn, SHCA_QP_ATTR_STATE |
                                 SHCA_QP_ATTR_QKEY, &a), ==, SHCA_AQ_OK);
    a.state = SHCA_QPS_RTR;
    g_assert_cmpuint(rdma_modify(&r, b.qpn, SHCA_QP_ATTR_STATE, &a), ==,
                     SHCA_AQ_OK);

    tx = guest_alloc(&r.h.alloc, 4096);
    rx = guest_alloc(&r.h.alloc, 4096);
    qtest_memwrite(r.h.qts, tx, "datagram", 8);
    srq_post(&r, &q, 0x600, rx, 1024, key);
    ud_send_simple(&r, &u, 0, UD_IP, b.qpn, UD_QKEY, tx, 8, key);
    check_srq_recv(loop_wait_cqe(&r, b.rcqbuf, b.rcq_n++), 0x600, 0, 40 + 8,
                   b.qpn);
    g_assert_cmpuint(srq_record_ci(&r, &q), ==, 1);
    hca_stop(&r.h);
}

/* Fast registration (spec §18) on a loop RC QP of the kernel. */
typedef union FastWqe {
    struct shca_send_wqe send;
    struct shca_fast_reg_wqe reg;
    struct shca_bind_mw_wqe bind;
} FastWqe;

#define FR_IOVA     0x7654321000ull

/* A fast-registration MR of up to npages pages, its list page at list. */
static uint8_t rdma_reg_fast(Rdma *r, uint64_t list, uint32_t npages,
                             uint32_t access, uint32_t *key)
{
    struct shca_buf_desc d;

    buf_direct(&d, list, npages);
    return rdma_reg_mr(r, SHCA_ACCESS_FAST_REG | access, 0, 0, 0, &d, key);
}

static void fr_post_reg(Rdma *r, Loop *l, uint16_t i, uint32_t key,
                        uint32_t npages, uint64_t length)
{
    FastWqe w = { .reg = {
        .wr_id = cpu_to_le64(0xf000 + i),
        .opcode = SHCA_WR_REG_MR,
        .flags = SHCA_WQE_SIGNALED,
        .page_shift = 12,
        .access = cpu_to_le32(SHCA_ACCESS_LOCAL_WRITE |
                              SHCA_ACCESS_REMOTE_WRITE),
        .iova = cpu_to_le64(FR_IOVA + 0x100),
        .length = cpu_to_le64(length),
        .key = cpu_to_le32(key),
        .npages = cpu_to_le32(npages),
    } };

    loop_write_send(r, l, i, &w.send, NULL, 0);
}

/* WQE i: opcode through rkey at raddr, len bytes from src (none: 0). */
static void loop_post_op(Rdma *r, Loop *l, uint16_t i, uint8_t opcode,
                         uint32_t rkey, uint64_t raddr, uint64_t src,
                         uint32_t len)
{
    struct shca_send_wqe w = {
        .wr_id = cpu_to_le64(0xf000 + i),
        .opcode = opcode,
        .flags = SHCA_WQE_SIGNALED,
        .num_sge = 1,
        .remote_addr = cpu_to_le64(raddr),
        .rkey = cpu_to_le32(rkey),
        .imm = cpu_to_le32(rkey),       /* LOCAL_INV, SEND_INV */
    };
    struct shca_sge sge = {
        .addr = cpu_to_le64(src),
        .length = cpu_to_le32(len),
        .lkey = cpu_to_le32(l->key),
    };

    if (opcode == SHCA_WR_LOCAL_INV) {
        w.num_sge = 0;
    }
    loop_write_send(r, l, i, &w, &sge, w.num_sge ? sizeof(sge) : 0);
}

/* The same at the fast-registration MR's iova. */
static void fr_post_op(Rdma *r, Loop *l, uint16_t i, uint8_t opcode,
                       uint32_t rkey, uint64_t src, uint32_t len)
{
    loop_post_op(r, l, i, opcode, rkey, FR_IOVA + 0x100, src, len);
}

static void fr_check_cqe(Rdma *r, Loop *l, uint16_t i, uint8_t status,
                         uint8_t opcode)
{
    struct shca_cqe cqe = loop_send_cqe(r, l);

    g_assert_cmpuint(cqe.status, ==, status);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0xf000 + i);
    if (status == SHCA_CQE_SUCCESS) {
        g_assert_cmphex(cqe.opcode, ==, opcode);
    }
}

/*
 * A request the responder refuses (bad key: remote access NAK; bad
 * SEND_INV: invalid request NAK).  The loop QP is its own responder, so
 * it goes to ERR and the request's WQE is flushed before the NAK returns.
 */
static void fr_check_refused(Rdma *r, Loop *l, uint16_t i, uint64_t *naks)
{
    uint64_t stats[SHCA_STAT_COUNT];

    fr_check_cqe(r, l, i, SHCA_CQE_WR_FLUSH_ERR, 0);
    g_assert_cmpuint(rdma_state(r, l->qpn), ==, SHCA_QPS_ERR);
    rdma_stats(r, stats);
    g_assert_cmpuint(stats[SHCA_STAT_NAKS_SENT], ==, ++*naks);
}

static void test_fast_reg(void)
{
    uint64_t naks = 0;
    g_autofree char *netdev = dgram_loop_netdev();
    const uint32_t len = 5000;
    uint8_t data[5000], got[5000];
    uint64_t list, pg[2], src, rx;
    struct shca_cqe cqe;
    uint32_t key, key2;
    Rdma r;
    Loop l;

    rdma_start_with(&r, netdev);
    loop_start(&r, &l, SHCA_QPT_RC, 7);
    loop_connect(&r, &l, false);
    list = guest_alloc(&r.h.alloc, 4096);
    pg[0] = guest_alloc(&r.h.alloc, 4096);
    guest_alloc(&r.h.alloc, 4096);      /* the pages are not contiguous */
    pg[1] = guest_alloc(&r.h.alloc, 4096);
    src = guest_alloc(&r.h.alloc, 8192);
    rx = guest_alloc(&r.h.alloc, 4096);
    for (size_t i = 0; i < sizeof(data); i++) {
        data[i] = i * 5 + 3;
    }
    qtest_memwrite(r.h.qts, src, data, sizeof(data));
    qtest_writeq(r.h.qts, list, cpu_to_le64(pg[0]));
    qtest_writeq(r.h.qts, list + 8, cpu_to_le64(pg[1]));

    /* REG_MR command: no range, no other rights, a one-page list */
    g_assert_cmpuint(rdma_reg_fast(&r, list, 513, 0, &key), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_reg_fast(&r, list, 4, SHCA_ACCESS_REMOTE_READ,
                                   &key), ==, SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_reg_fast(&r, RAM_TOP, 4, 0, &key), ==,
                     SHCA_AQ_BAD_ADDR);
    g_assert_cmpuint(rdma_reg_fast(&r, list, 4, 0, &key), ==, SHCA_AQ_OK);

    /* invalid until registered: a WRITE through it fails */
    fr_post_op(&r, &l, 0, SHCA_WR_RDMA_WRITE, key, src, 16);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    fr_check_refused(&r, &l, 0, &naks);
    loop_connect(&r, &l, false);

    /* REG_MR with a new tag, then a WRITE through it, in one batch */
    key = (key & ~0xffu) | ((key + 0x11) & 0xff);
    fr_post_reg(&r, &l, 0, key, 2, len);
    fr_post_op(&r, &l, 1, SHCA_WR_RDMA_WRITE, key, src, len);
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_SUCCESS, SHCA_CQE_OP_REG_MR);
    fr_check_cqe(&r, &l, 1, SHCA_CQE_SUCCESS, SHCA_CQE_OP_RDMA_WRITE);
    qtest_memread(r.h.qts, pg[0] + 0x100, got, 4096 - 0x100);
    qtest_memread(r.h.qts, pg[1], got + 4096 - 0x100, len - 4096 + 0x100);
    g_assert(memcmp(got, data, len) == 0);

    /* valid already: REG_MR refused, QP to ERR */
    fr_post_reg(&r, &l, 2, key, 2, len);
    rdma_db(&r, 0, SHCA_DB_SQ, 3 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 2, SHCA_CQE_LOC_PROT_ERR, 0);
    g_assert_cmpuint(rdma_state(&r, l.qpn), ==, SHCA_QPS_ERR);
    loop_connect(&r, &l, false);

    /* LOCAL_INV; then the same WRITE fails; LOCAL_INV again fails */
    fr_post_op(&r, &l, 0, SHCA_WR_LOCAL_INV, key, 0, 0);
    fr_post_op(&r, &l, 1, SHCA_WR_RDMA_WRITE, key, src, 16);
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_SUCCESS, SHCA_CQE_OP_LOCAL_INV);
    fr_check_refused(&r, &l, 1, &naks);
    loop_connect(&r, &l, false);
    fr_post_op(&r, &l, 0, SHCA_WR_LOCAL_INV, key, 0, 0);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_LOC_PROT_ERR, 0);

    /* bad REG_MRs: another index, pages that do not cover the range */
    loop_connect(&r, &l, false);
    fr_post_reg(&r, &l, 0, key + 0x100, 2, len);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_LOC_PROT_ERR, 0);
    loop_connect(&r, &l, false);
    fr_post_reg(&r, &l, 0, key, 1, len);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_LOC_PROT_ERR, 0);

    /* SEND_INV invalidates at the responder, reported WITH_INV */
    loop_connect(&r, &l, false);
    key2 = (key & ~0xffu) | ((key + 1) & 0xff);
    fr_post_reg(&r, &l, 0, key2, 2, len);
    fr_post_op(&r, &l, 1, SHCA_WR_SEND_INV, key2, src, 16);
    loop_recv(&r, &l, 0, 0x1234, rx, 4096);
    rdma_db(&r, 0, SHCA_DB_RQ, 1 << 16 | l.qpn);
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_SUCCESS, SHCA_CQE_OP_REG_MR);
    fr_check_cqe(&r, &l, 1, SHCA_CQE_SUCCESS, SHCA_CQE_OP_SEND);
    cqe = loop_recv_cqe(&r, &l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmphex(cqe.flags, ==, SHCA_CQE_WITH_INV);
    g_assert_cmphex(le32_to_cpu(cqe.imm), ==, key2);
    fr_post_op(&r, &l, 2, SHCA_WR_RDMA_WRITE, key2, src, 16);
    rdma_db(&r, 0, SHCA_DB_SQ, 3 << 16 | l.qpn);
    fr_check_refused(&r, &l, 2, &naks);

    /* SEND_INV of a key that is not a valid fast-registration MR */
    loop_connect(&r, &l, false);
    loop_recv(&r, &l, 0, 0x1235, rx, 4096);
    rdma_db(&r, 0, SHCA_DB_RQ, 1 << 16 | l.qpn);
    fr_post_op(&r, &l, 0, SHCA_WR_SEND_INV, l.key, src, 16);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    fr_check_refused(&r, &l, 0, &naks);

    /*
     * deregistration in either state, by index: the MR's key is key2 now,
     * its first key (another tag) names it too
     */
    g_assert_cmphex(key, !=, key2);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEREG_MR, key, NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEREG_MR, key2, NULL), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&r.h);
}

/* --- memory windows (spec §13.6) --------------------------------------- */

static uint8_t rdma_alloc_mw(Rdma *r, uint32_t pdn, uint8_t type,
                             uint32_t *key)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_ALLOC_MW };

    cmd.alloc_mw.pdn = cpu_to_le32(pdn);
    cmd.alloc_mw.type = type;
    return hca_cmd(&r->h, &cmd, key);
}

static void mw_post_bind(Rdma *r, Loop *l, uint16_t i, uint32_t mw_key,
                         uint32_t new_key, uint32_t mr_key, uint64_t addr,
                         uint64_t length)
{
    FastWqe w = { .bind = {
        .wr_id = cpu_to_le64(0xf000 + i),
        .opcode = SHCA_WR_BIND_MW,
        .flags = SHCA_WQE_SIGNALED,
        .mw_key = cpu_to_le32(mw_key),
        .new_key = cpu_to_le32(new_key),
        .mr_key = cpu_to_le32(mr_key),
        .access = cpu_to_le32(length ? SHCA_ACCESS_REMOTE_WRITE : 0),
        .addr = cpu_to_le64(addr),
        .length = cpu_to_le64(length),
    } };

    loop_write_send(r, l, i, &w.send, NULL, 0);
}

/* The key with the next tag, as software picks it for a bind. */
static uint32_t key_next_tag(uint32_t key)
{
    return (key & ~0xffu) | ((key + 1) & 0xff);
}

/*
 * Windows of both types on a loop RC QP: unbound a key grants nothing;
 * bound it grants its range and rights only; bad binds fail with
 * MW_BIND_ERR; type 1 unbinds by a bind of length 0, type 2 by LOCAL_INV
 * or by a SEND_INV on its QP; an MR with windows bound stays registered.
 */
static void test_mw(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    uint8_t data[64], got[64];
    uint64_t naks = 0, buf, src, rx;
    uint32_t mr, plain, mw1, mw2, k1, k2, junk;
    struct shca_cqe cqe;
    Rdma r;
    Loop l;

    rdma_start_with(&r, netdev);
    g_assert_cmphex(rd(&r.h, SHCA_REG_CAPS) & SHCA_CAP_MW, ==, SHCA_CAP_MW);
    loop_start(&r, &l, SHCA_QPT_RC, 7);
    loop_connect(&r, &l, false);
    buf = guest_alloc(&r.h.alloc, 8192);
    src = guest_alloc(&r.h.alloc, 4096);
    rx = guest_alloc(&r.h.alloc, 4096);
    memset(data, 0x6d, sizeof(data));
    qtest_memwrite(r.h.qts, src, data, sizeof(data));
    g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_PHYS |
                                 SHCA_ACCESS_LOCAL_WRITE | SHCA_ACCESS_MW_BIND,
                                 0, RAM_TOP, 0, NULL, &mr), ==, SHCA_AQ_OK);
    g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_PHYS |
                                 SHCA_ACCESS_LOCAL_WRITE, 0, RAM_TOP, 0, NULL,
                                 &plain), ==, SHCA_AQ_OK);

    /* ALLOC_MW: a type, a PD; windows and MRs are freed by their own */
    g_assert_cmpuint(rdma_alloc_mw(&r, r.pd, 3, &junk), ==, SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_alloc_mw(&r, 99, 1, &junk), ==, SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(rdma_alloc_mw(&r, r.pd, 1, &mw1), ==, SHCA_AQ_OK);
    g_assert_cmpuint(rdma_alloc_mw(&r, r.pd, 2, &mw2), ==, SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEALLOC_MW, plain, NULL), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEREG_MR, mw1, NULL), ==,
                     SHCA_AQ_BAD_HANDLE);

    /* unbound: a WRITE through it is refused */
    loop_post_op(&r, &l, 0, SHCA_WR_RDMA_WRITE, mw1, buf, src, 64);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    fr_check_refused(&r, &l, 0, &naks);

    /* type 1 bound to buf .. buf + 4096 for WRITE, in one batch with one */
    loop_connect(&r, &l, false);
    k1 = key_next_tag(mw1);
    mw_post_bind(&r, &l, 0, mw1, k1, mr, buf, 4096);
    loop_post_op(&r, &l, 1, SHCA_WR_RDMA_WRITE, k1, buf + 100, src, 64);
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_SUCCESS, SHCA_CQE_OP_BIND_MW);
    fr_check_cqe(&r, &l, 1, SHCA_CQE_SUCCESS, SHCA_CQE_OP_RDMA_WRITE);
    qtest_memread(r.h.qts, buf + 100, got, sizeof(got));
    g_assert(memcmp(got, data, sizeof(got)) == 0);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEREG_MR, mr, NULL), ==,
                     SHCA_AQ_BUSY);
    /* past its end, a right it lacks, its old key */
    loop_post_op(&r, &l, 2, SHCA_WR_RDMA_WRITE, k1, buf + 4096 - 8, src, 64);
    rdma_db(&r, 0, SHCA_DB_SQ, 3 << 16 | l.qpn);
    fr_check_refused(&r, &l, 2, &naks);
    loop_connect(&r, &l, false);
    loop_post_op(&r, &l, 0, SHCA_WR_RDMA_READ, k1, buf, rx, 16);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    fr_check_refused(&r, &l, 0, &naks);
    loop_connect(&r, &l, false);
    loop_post_op(&r, &l, 0, SHCA_WR_RDMA_WRITE, mw1, buf, src, 16);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    fr_check_refused(&r, &l, 0, &naks);

    /* an MR without MW_BIND, a range past the MR: MW_BIND_ERR, ERR */
    loop_connect(&r, &l, false);
    mw_post_bind(&r, &l, 0, k1, key_next_tag(k1), plain, buf, 4096);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_MW_BIND_ERR, 0);
    g_assert_cmpuint(rdma_state(&r, l.qpn), ==, SHCA_QPS_ERR);
    loop_connect(&r, &l, false);
    mw_post_bind(&r, &l, 0, k1, key_next_tag(k1), mr, RAM_TOP - 8, 4096);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_MW_BIND_ERR, 0);

    /* type 1: a bind of length 0 unbinds; LOCAL_INV is not for type 1 */
    loop_connect(&r, &l, false);
    mw_post_bind(&r, &l, 0, k1, key_next_tag(k1), mr, 0, 0);
    k1 = key_next_tag(k1);
    loop_post_op(&r, &l, 1, SHCA_WR_RDMA_WRITE, k1, buf, src, 16);
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_SUCCESS, SHCA_CQE_OP_BIND_MW);
    fr_check_refused(&r, &l, 1, &naks);
    loop_connect(&r, &l, false);
    loop_post_op(&r, &l, 0, SHCA_WR_LOCAL_INV, k1, 0, 0, 0);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_LOC_PROT_ERR, 0);

    /* type 2: bound once; LOCAL_INV unbinds it */
    loop_connect(&r, &l, false);
    k2 = key_next_tag(mw2);
    mw_post_bind(&r, &l, 0, mw2, k2, mr, buf, 4096);
    loop_post_op(&r, &l, 1, SHCA_WR_RDMA_WRITE, k2, buf, src, 64);
    mw_post_bind(&r, &l, 2, k2, key_next_tag(k2), mr, buf, 4096);
    rdma_db(&r, 0, SHCA_DB_SQ, 3 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_SUCCESS, SHCA_CQE_OP_BIND_MW);
    fr_check_cqe(&r, &l, 1, SHCA_CQE_SUCCESS, SHCA_CQE_OP_RDMA_WRITE);
    fr_check_cqe(&r, &l, 2, SHCA_CQE_MW_BIND_ERR, 0);
    loop_connect(&r, &l, false);
    loop_post_op(&r, &l, 0, SHCA_WR_LOCAL_INV, k2, 0, 0, 0);
    loop_post_op(&r, &l, 1, SHCA_WR_RDMA_WRITE, k2, buf, src, 16);
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_SUCCESS, SHCA_CQE_OP_LOCAL_INV);
    fr_check_refused(&r, &l, 1, &naks);

    /* SEND_INV on the QP it is associated with unbinds it, WITH_INV */
    loop_connect(&r, &l, false);
    mw_post_bind(&r, &l, 0, k2, key_next_tag(k2), mr, buf, 4096);
    k2 = key_next_tag(k2);
    loop_post_op(&r, &l, 1, SHCA_WR_SEND_INV, k2, 0, src, 16);
    loop_recv(&r, &l, 0, 0x1236, rx, 4096);
    rdma_db(&r, 0, SHCA_DB_RQ, 1 << 16 | l.qpn);
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_SUCCESS, SHCA_CQE_OP_BIND_MW);
    fr_check_cqe(&r, &l, 1, SHCA_CQE_SUCCESS, SHCA_CQE_OP_SEND);
    cqe = loop_recv_cqe(&r, &l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmphex(cqe.flags, ==, SHCA_CQE_WITH_INV);
    g_assert_cmphex(le32_to_cpu(cqe.imm), ==, k2);
    loop_post_op(&r, &l, 2, SHCA_WR_RDMA_WRITE, k2, buf, src, 16);
    rdma_db(&r, 0, SHCA_DB_SQ, 3 << 16 | l.qpn);
    fr_check_refused(&r, &l, 2, &naks);

    /* no window bound any more: the MR goes; the windows by index */
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEREG_MR, mr, NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEALLOC_MW, mw1, NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEALLOC_MW, mw2, NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEALLOC_MW, mw2, NULL), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&r.h);
}

/* --- XRC (spec §13.7) -------------------------------------------------- */

/* RESET -> INIT -> RTR -> RTS to the QP dest of this port, both ways. */
/* A signaled ATOMIC_WRITE of val, or a FLUSH (feth, len), WQE i. */
static void awf_post(Rdma *r, Loop *l, uint16_t i, uint8_t opcode,
                     uint32_t rkey, uint64_t raddr, uint64_t val_or_len,
                     uint8_t feth)
{
    struct shca_send_wqe w = {
        .wr_id = cpu_to_le64(0xf000 + i),
        .opcode = opcode,
        .flags = SHCA_WQE_SIGNALED,
        .feth = feth,
        .remote_addr = cpu_to_le64(raddr),
        .rkey = cpu_to_le32(rkey),
        .compare_add = cpu_to_le64(val_or_len),
    };

    loop_write_send(r, l, i, &w, NULL, 0);
}

/* What the responder refused so far: NAKs sent, events on EQ 0. */
typedef struct Refusals {
    uint64_t naks;
    unsigned eqes;
} Refusals;

/*
 * Post WQE 0 on a freshly connected QP and check its CQE: status, or with
 * nak (a QP event, SHCA_EQE_QP_ACCESS_ERR or _REQ_ERR) a NAK of the
 * responder, whose error flushes the WQE of its own QP first.
 */
static void awf_one(Rdma *r, Loop *l, uint8_t opcode, uint32_t rkey,
                    uint64_t raddr, uint64_t val_or_len, uint8_t feth,
                    uint8_t status, uint8_t nak, Refusals *ref)
{
    uint64_t stats[SHCA_STAT_COUNT];
    struct shca_cqe cqe;
    struct shca_eqe eqe;

    loop_connect(r, l, false);
    awf_post(r, l, 0, opcode, rkey, raddr, val_or_len, feth);
    rdma_db(r, 0, SHCA_DB_SQ, 1 << 16 | l->qpn);
    cqe = loop_send_cqe(r, l);
    g_assert_cmpuint(cqe.status, ==, nak ? SHCA_CQE_WR_FLUSH_ERR : status);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0xf000);
    if (status == SHCA_CQE_SUCCESS && !nak) {
        g_assert_cmphex(cqe.opcode, ==, opcode == SHCA_WR_FLUSH ?
                        SHCA_CQE_OP_FLUSH : SHCA_CQE_OP_ATOMIC_WRITE);
        g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==,
                         opcode == SHCA_WR_FLUSH ? val_or_len : 8);
    }
    rdma_stats(r, stats);
    if (nak) {
        ref->naks++;
        eqe = rdma_eqe(r, r->eq0, ref->eqes++);
        g_assert_cmpuint(eqe.type, ==, nak);
        g_assert_cmpuint(le32_to_cpu(eqe.obj), ==, l->qpn);
    }
    g_assert_cmpuint(stats[SHCA_STAT_NAKS_SENT], ==, ref->naks);
}

/*
 * RDMA ATOMIC WRITE and FLUSH (spec §15, §16) over the port's loopback:
 * each answered with an empty READ response, checked as rxe checks them.
 */
static void test_atomic_write_flush(void)
{
    const uint32_t rw = SHCA_ACCESS_PHYS | SHCA_ACCESS_LOCAL_WRITE |
                        SHCA_ACCESS_REMOTE_WRITE;
    g_autofree char *netdev = dgram_loop_netdev();
    const uint8_t g = SHCA_FLUSH_GLOBAL, p = SHCA_FLUSH_PERSISTENT;
    uint32_t all, plain, junk;
    Refusals ref = { 0 };
    uint64_t buf, got;
    Rdma r;
    Loop l;

    rdma_start_with(&r, netdev);
    g_assert_cmphex(rd(&r.h, SHCA_REG_CAPS) &
                    (SHCA_CAP_ATOMIC_WRITE | SHCA_CAP_FLUSH), ==,
                    SHCA_CAP_ATOMIC_WRITE | SHCA_CAP_FLUSH);
    loop_start(&r, &l, SHCA_QPT_RC, 7);
    l.access = SHCA_ACCESS_REMOTE_WRITE | SHCA_ACCESS_FLUSH_GLOBAL |
               SHCA_ACCESS_FLUSH_PERSISTENT;
    buf = guest_alloc(&r.h.alloc, 4096);
    qtest_memset(r.h.qts, buf, 0, 4096);
    g_assert_cmpuint(rdma_reg_mr(&r, rw | SHCA_ACCESS_FLUSH_GLOBAL, buf,
                                 4096, 0, NULL, &all), ==, SHCA_AQ_OK);
    g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_PHYS | SHCA_ACCESS_LOCAL_WRITE,
                                 buf, 4096, 0, NULL, &plain), ==, SHCA_AQ_OK);
    /* no persistence domain: no MR may grant FLUSH_PERSISTENT */
    g_assert_cmpuint(rdma_reg_mr(&r, rw | SHCA_ACCESS_FLUSH_PERSISTENT, buf,
                                 4096, 0, NULL, &junk), ==, SHCA_AQ_BAD_PARAM);

    /* ATOMIC WRITE: its 8 bytes land, byte for byte */
    awf_one(&r, &l, SHCA_WR_ATOMIC_WRITE, all, buf + 64,
            0x0123456789abcdefull, 0, SHCA_CQE_SUCCESS, 0, &ref);
    got = qtest_readq(r.h.qts, buf + 64);
    g_assert_cmphex(got, ==, 0x0123456789abcdefull);
    /* misaligned or with SGE-free rules broken: refused locally */
    awf_one(&r, &l, SHCA_WR_ATOMIC_WRITE, all, buf + 4, 1, 0,
            SHCA_CQE_LOC_QP_OP_ERR, 0, &ref);
    awf_one(&r, &l, SHCA_WR_ATOMIC_WRITE, all, buf, 1, g,
            SHCA_CQE_LOC_QP_OP_ERR, 0, &ref);
    /* an MR without REMOTE_WRITE, a range past its end: remote access */
    awf_one(&r, &l, SHCA_WR_ATOMIC_WRITE, plain, buf, 1, 0,
            0, SHCA_EQE_QP_ACCESS_ERR, &ref);
    awf_one(&r, &l, SHCA_WR_ATOMIC_WRITE, all, buf + 4096, 1, 0,
            0, SHCA_EQE_QP_ACCESS_ERR, &ref);
    g_assert_cmphex(qtest_readq(r.h.qts, buf), ==, 0);

    /* FLUSH: global, of a range or of the whole MR (range ignored) */
    awf_one(&r, &l, SHCA_WR_FLUSH, all, buf, 4096,
            g | SHCA_FLUSH_LEVEL_RANGE, SHCA_CQE_SUCCESS, 0, &ref);
    awf_one(&r, &l, SHCA_WR_FLUSH, all, 0, 12345678,
            g | SHCA_FLUSH_LEVEL_MR, SHCA_CQE_SUCCESS, 0, &ref);
    awf_one(&r, &l, SHCA_WR_FLUSH, all, buf + 1, 4096,
            g | SHCA_FLUSH_LEVEL_RANGE, 0, SHCA_EQE_QP_ACCESS_ERR, &ref);
    /* persistence the MR cannot grant; an MR without FLUSH_GLOBAL */
    awf_one(&r, &l, SHCA_WR_FLUSH, all, buf, 64, p | SHCA_FLUSH_LEVEL_RANGE,
            0, SHCA_EQE_QP_ACCESS_ERR, &ref);
    awf_one(&r, &l, SHCA_WR_FLUSH, plain, buf, 64, g,
            0, SHCA_EQE_QP_ACCESS_ERR, &ref);
    /* no type, a level past MR, a length past 2^31: refused locally */
    awf_one(&r, &l, SHCA_WR_FLUSH, all, buf, 64, 0, SHCA_CQE_LOC_QP_OP_ERR,
            0, &ref);
    awf_one(&r, &l, SHCA_WR_FLUSH, all, buf, 64, g | 2 << 4,
            SHCA_CQE_LOC_QP_OP_ERR, 0, &ref);
    awf_one(&r, &l, SHCA_WR_FLUSH, all, buf, (1ull << 31) + 1, g,
            SHCA_CQE_LOC_QP_OP_ERR, 0, &ref);
    /* a QP without the rights: invalid request */
    l.access = SHCA_ACCESS_REMOTE_READ;
    awf_one(&r, &l, SHCA_WR_FLUSH, all, buf, 64, g, 0,
            SHCA_EQE_QP_REQ_ERR, &ref);
    awf_one(&r, &l, SHCA_WR_ATOMIC_WRITE, all, buf, 1, 0,
            0, SHCA_EQE_QP_REQ_ERR, &ref);
    g_assert_cmphex(qtest_readq(r.h.qts, buf), ==, 0);

    /* UC carries neither */
    loop_start(&r, &l, SHCA_QPT_UC, 7);
    awf_one(&r, &l, SHCA_WR_FLUSH, all, buf, 64, g, SHCA_CQE_LOC_QP_OP_ERR,
            0, &ref);
    hca_stop(&r.h);
}

/*
 * Under dropped, duplicated and reordered frames every ATOMIC WRITE and
 * FLUSH completes once, in order, and the duplicates the responder sees
 * are answered again rather than executed again.
 */
static void test_atomic_write_flush_faults(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    g_autofree char *extra = g_strdup_printf(FAULT_ALL("100") "%s", netdev);
    const uint16_t batch = 16, rounds = 6;
    uint64_t stats[SHCA_STAT_COUNT];
    struct shca_cqe cqe;
    uint32_t key;
    uint64_t buf;
    Rdma r;
    Loop l;

    rdma_start_with(&r, extra);
    loop_start(&r, &l, SHCA_QPT_RC, 7);
    l.access = SHCA_ACCESS_REMOTE_WRITE | SHCA_ACCESS_FLUSH_GLOBAL;
    loop_connect(&r, &l, false);
    buf = guest_alloc(&r.h.alloc, 4096);
    qtest_memset(r.h.qts, buf, 0, 4096);
    g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_PHYS |
                                 SHCA_ACCESS_LOCAL_WRITE |
                                 SHCA_ACCESS_REMOTE_WRITE |
                                 SHCA_ACCESS_FLUSH_GLOBAL, buf, 4096, 0, NULL,
                                 &key), ==, SHCA_AQ_OK);
    for (uint16_t n = 0; n < rounds; n++) {
        for (uint16_t i = 0; i < batch; i++) {
            uint16_t k = n * batch + i;

            if (i % 4 == 3) {
                awf_post(&r, &l, k, SHCA_WR_FLUSH, key, buf, 4096,
                         SHCA_FLUSH_GLOBAL);
            } else {
                awf_post(&r, &l, k, SHCA_WR_ATOMIC_WRITE, key, buf + 8 * k,
                         0x1000 + k, 0);
            }
        }
        rdma_db(&r, 0, SHCA_DB_SQ, (uint32_t)(n + 1) * batch << 16 | l.qpn);
        for (uint16_t i = 0; i < batch; i++) {
            cqe = loop_send_cqe(&r, &l);
            g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
            g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==,
                            0xf000 + (uint16_t)(n * batch + i));
        }
    }
    for (uint16_t k = 0; k < rounds * batch; k++) {
        g_assert_cmphex(qtest_readq(r.h.qts, buf + 8 * k), ==,
                        k % 4 == 3 ? 0 : 0x1000 + k);
    }
    rdma_stats(&r, stats);
    g_assert_cmpuint(stats[SHCA_STAT_FAULT_DROPPED], >, 0);
    g_assert_cmpuint(stats[SHCA_STAT_DUPLICATES], >, 0);
    g_assert_cmpuint(rdma_state(&r, l.qpn), ==, SHCA_QPS_RTS);
    hca_stop(&r.h);
}

/* Aim MSI-X vector v at one of the device's own registers, unmasked. */
static void msix_aim_at_reg(Hca *h, unsigned v, uint32_t reg, uint32_t data)
{
    uint64_t e = h->dev->msix_table_off + v * PCI_MSIX_ENTRY_SIZE;
    uint64_t addr = h->bar.addr + reg;

    qpci_io_writel(h->dev, h->dev->msix_table_bar,
                   e + PCI_MSIX_ENTRY_LOWER_ADDR, addr);
    qpci_io_writel(h->dev, h->dev->msix_table_bar,
                   e + PCI_MSIX_ENTRY_UPPER_ADDR, addr >> 32);
    qpci_io_writel(h->dev, h->dev->msix_table_bar, e + PCI_MSIX_ENTRY_DATA,
                   data);
    qpci_io_writel(h->dev, h->dev->msix_table_bar,
                   e + PCI_MSIX_ENTRY_VECTOR_CTRL, 0);
}

/*
 * Issue 11, defect 1: the retransmit timer ran outside the device's
 * re-entrancy guard.  With its EQ's vector aimed at CTRL (data 0), the
 * RETRY_EXC_ERR completion's interrupt disabled the device under the
 * running timer, and QEMU crashed.  Now the write is refused as
 * re-entrant: the device stays enabled and the completion is there.
 */
static void test_reentrancy_timer_msix_ctrl(void)
{
    struct shca_qp_attr a = rc_attr(SHCA_QPS_RTR);
    struct shca_cqe cqe;
    Rdma r;
    Loop l;

    rdma_start(&r);                     /* no netdev: nothing answers */
    loop_start(&r, &l, SHCA_QPT_RC, 7);
    loop_connect(&r, &l, true);
    a.dest_qpn = cpu_to_le32(l.qpn);
    a.timeout = 8;
    g_assert_cmpuint(rdma_modify(&r, l.qpn, RC_RTR_MASK, &a), ==,
                     SHCA_AQ_OK);
    a.state = SHCA_QPS_RTS;
    a.retry_cnt = 0;
    g_assert_cmpuint(rdma_modify(&r, l.qpn, RC_RTS_MASK, &a), ==,
                     SHCA_AQ_OK);
    msix_aim_at_reg(&r.h, 2, SHCA_REG_CTRL, 0);
    msix_aim_at_reg(&r.h, 3, SHCA_REG_CTRL, 0);
    wr(&r.h, SHCA_REG_EQ_DB(0), SHCA_EQ_DB_ARM);
    wr(&r.h, SHCA_REG_EQ_DB(1), SHCA_EQ_DB_ARM);
    rdma_db(&r, 0, SHCA_DB_CQ, l.scq | SHCA_DB_CQ_ARM);

    loop_send(&r, &l, 0, 0x77, 0, 0, SHCA_WQE_SIGNALED);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    cqe = loop_send_cqe(&r, &l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_RETRY_EXC_ERR);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x77);
    g_assert_cmpuint(rdma_eqe(&r, r.eq1, 0).type, ==, SHCA_EQE_COMPLETION);
    g_assert_cmphex(rd(&r.h, SHCA_REG_CTRL), ==, SHCA_CTRL_EN);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&r.h);
}

/*
 * Issue 11, defect 1, the fault-injection side: a received frame held back
 * reaches the transport from the hold timer, and the completion it brings
 * raises a vector aimed at CTRL.  That write is refused as re-entrant too;
 * before, it disabled the device under the timer.
 */
static void test_reentrancy_hold_timer_msix_ctrl(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    g_autofree char *extra = g_strdup_printf(",fault-rx-reorder=1000%s",
                                             netdev);
    struct shca_cqe cqe;
    uint64_t rx;
    Rdma r;
    Loop l;

    rdma_start_with(&r, extra);
    loop_start(&r, &l, SHCA_QPT_RC, 7);
    loop_connect(&r, &l, false);
    rx = guest_alloc(&r.h.alloc, 4096);
    msix_aim_at_reg(&r.h, 2, SHCA_REG_CTRL, 0);
    msix_aim_at_reg(&r.h, 3, SHCA_REG_CTRL, 0);
    wr(&r.h, SHCA_REG_EQ_DB(0), SHCA_EQ_DB_ARM);
    wr(&r.h, SHCA_REG_EQ_DB(1), SHCA_EQ_DB_ARM);
    rdma_db(&r, 0, SHCA_DB_CQ, l.rcq | SHCA_DB_CQ_ARM);
    loop_recv(&r, &l, 0, 0x66, rx, 4096);
    rdma_db(&r, 0, SHCA_DB_RQ, 1 << 16 | l.qpn);
    loop_send(&r, &l, 0, 0x77, 0, 0, SHCA_WQE_SIGNALED);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    cqe = loop_recv_cqe(&r, &l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x66);
    g_assert_cmpuint(rdma_eqe(&r, r.eq1, 0).type, ==, SHCA_EQE_COMPLETION);
    g_assert_cmphex(rd(&r.h, SHCA_REG_CTRL), ==, SHCA_CTRL_EN);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&r.h);
}

static uint8_t rdma_rereg_mr(Rdma *r, uint32_t key, uint32_t pdn,
                             uint32_t access, uint64_t iova,
                             const struct shca_buf_desc *pages)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_REREG_MR };

    cmd.rereg_mr.key = cpu_to_le32(key);
    cmd.rereg_mr.mr.pdn = cpu_to_le32(pdn);
    cmd.rereg_mr.mr.access = cpu_to_le32(access);
    cmd.rereg_mr.mr.iova = cpu_to_le64(iova);
    cmd.rereg_mr.mr.length = cpu_to_le64(4096);
    if (pages) {
        cmd.rereg_mr.mr.pages = *pages;
    }
    return hca_cmd(&r->h, &cmd, NULL);
}

/* A signaled WRITE of 64 bytes of src through key at iova: ok or refused. */
static void rereg_write(Rdma *r, Loop *l, uint32_t key, uint64_t iova,
                        uint64_t src, bool ok, uint64_t *naks)
{
    loop_connect(r, l, false);
    loop_post_op(r, l, 0, SHCA_WR_RDMA_WRITE, key, iova, src, 64);
    rdma_db(r, 0, SHCA_DB_SQ, 1 << 16 | l->qpn);
    if (ok) {
        fr_check_cqe(r, l, 0, SHCA_CQE_SUCCESS, SHCA_CQE_OP_RDMA_WRITE);
    } else {
        fr_check_refused(r, l, 0, naks);
    }
}

/*
 * REREG_MR (spec §13.3): the key stays, the pages, access and PD change;
 * a refused one changes nothing; bound windows keep the MR as it is.
 */
static void test_mr_rereg(void)
{
    const uint32_t rw = SHCA_ACCESS_LOCAL_WRITE | SHCA_ACCESS_REMOTE_WRITE |
                        SHCA_ACCESS_MW_BIND;
    g_autofree char *netdev = dgram_loop_netdev();
    struct shca_buf_desc px, py;
    uint64_t naks = 0, x, y, src;
    uint8_t data[64], got[64];
    uint32_t key, uctx, upd, pd2, mw;
    Rdma r;
    Loop l;

    rdma_start_with(&r, netdev);
    g_assert_cmphex(rd(&r.h, SHCA_REG_CAPS) & SHCA_CAP_REREG_MR, ==,
                    SHCA_CAP_REREG_MR);
    loop_start(&r, &l, SHCA_QPT_RC, 7);
    x = guest_alloc(&r.h.alloc, 4096);
    y = guest_alloc(&r.h.alloc, 4096);
    src = guest_alloc(&r.h.alloc, 4096);
    qtest_memset(r.h.qts, x, 0, 4096);
    qtest_memset(r.h.qts, y, 0, 4096);
    memset(data, 0x3c, sizeof(data));
    qtest_memwrite(r.h.qts, src, data, sizeof(data));
    buf_direct(&px, x, 1);
    buf_direct(&py, y, 1);
    g_assert_cmpuint(rdma_reg_mr(&r, rw, 0x10000, 4096, 0, &px, &key), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_ALLOC_UCTX, 0, &uctx), ==,
                     SHCA_AQ_OK);
    upd = rdma_user_pd(&r, uctx);
    pd2 = rdma_user_pd(&r, 0);
    g_assert_cmpuint(upd, !=, 0);
    g_assert_cmpuint(pd2, !=, 0);

    /* refused, each for one reason */
    g_assert_cmpuint(rdma_rereg_mr(&r, key_next_tag(key), r.pd, rw, 0, &py),
                     ==, SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(rdma_rereg_mr(&r, l.key, r.pd, rw, 0, &py), ==,
                     SHCA_AQ_BAD_HANDLE);   /* PHYS */
    g_assert_cmpuint(rdma_rereg_mr(&r, key, 999, rw, 0, &py), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(rdma_rereg_mr(&r, key, upd, rw, 0, &py), ==,
                     SHCA_AQ_BAD_PARAM);    /* another context's PD */
    g_assert_cmpuint(rdma_rereg_mr(&r, key, r.pd, rw | SHCA_ACCESS_PHYS, 0,
                                   NULL), ==, SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_rereg_mr(&r, key, r.pd, SHCA_ACCESS_REMOTE_WRITE,
                                   0, &py), ==, SHCA_AQ_BAD_PARAM);
    py.npages = 0;
    g_assert_cmpuint(rdma_rereg_mr(&r, key, r.pd, rw, 0, &py), ==,
                     SHCA_AQ_BAD_PARAM);    /* pages too few */
    py.npages = cpu_to_le32(1);
    py.addr = cpu_to_le64(RAM_TOP);
    g_assert_cmpuint(rdma_rereg_mr(&r, key, r.pd, rw, 0, &py), ==,
                     SHCA_AQ_BAD_ADDR);
    buf_direct(&py, y, 1);
    rereg_write(&r, &l, key, 0x10000 + 100, src, true, &naks);
    qtest_memread(r.h.qts, x + 100, got, sizeof(got));
    g_assert(memcmp(got, data, sizeof(got)) == 0);

    /* new pages at a new iova, same key */
    g_assert_cmpuint(rdma_rereg_mr(&r, key, r.pd, rw, 0x20000, &py), ==,
                     SHCA_AQ_OK);
    rereg_write(&r, &l, key, 0x10000 + 200, src, false, &naks);
    rereg_write(&r, &l, key, 0x20000 + 200, src, true, &naks);
    qtest_memread(r.h.qts, y + 200, got, sizeof(got));
    g_assert(memcmp(got, data, sizeof(got)) == 0);
    qtest_memread(r.h.qts, x + 200, got, sizeof(got));
    g_assert_cmpuint(got[0], ==, 0);

    /* access without REMOTE_WRITE; then another PD of the context */
    g_assert_cmpuint(rdma_rereg_mr(&r, key, r.pd, SHCA_ACCESS_LOCAL_WRITE,
                                   0x20000, &py), ==, SHCA_AQ_OK);
    rereg_write(&r, &l, key, 0x20000, src, false, &naks);
    g_assert_cmpuint(rdma_rereg_mr(&r, key, pd2, rw, 0x20000, &py), ==,
                     SHCA_AQ_OK);
    rereg_write(&r, &l, key, 0x20000, src, false, &naks);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEALLOC_PD, pd2, NULL), ==,
                     SHCA_AQ_BUSY);
    g_assert_cmpuint(rdma_rereg_mr(&r, key, r.pd, rw, 0x20000, &py), ==,
                     SHCA_AQ_OK);
    rereg_write(&r, &l, key, 0x20000, src, true, &naks);

    /* a bound window keeps the MR as it is until it is unbound */
    g_assert_cmpuint(rdma_alloc_mw(&r, r.pd, 1, &mw), ==, SHCA_AQ_OK);
    loop_connect(&r, &l, false);
    mw_post_bind(&r, &l, 0, mw, key_next_tag(mw), key, 0x20000, 4096);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_SUCCESS, SHCA_CQE_OP_BIND_MW);
    g_assert_cmpuint(rdma_rereg_mr(&r, key, r.pd, rw, 0x10000, &px), ==,
                     SHCA_AQ_BUSY);
    mw_post_bind(&r, &l, 1, key_next_tag(mw), key_next_tag(key_next_tag(mw)),
                 key, 0, 0);
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 1, SHCA_CQE_SUCCESS, SHCA_CQE_OP_BIND_MW);
    g_assert_cmpuint(rdma_rereg_mr(&r, key, r.pd, rw, 0x10000, &px), ==,
                     SHCA_AQ_OK);
    rereg_write(&r, &l, key, 0x10000, src, true, &naks);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEREG_MR, key, NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEALLOC_PD, pd2, NULL), ==,
                     SHCA_AQ_OK);
    hca_stop(&r.h);
}

static void xrc_connect(Rdma *r, uint32_t qpn, uint32_t dest)
{
    struct shca_qp_attr a = rc_attr(SHCA_QPS_INIT);

    a.access = cpu_to_le32(SHCA_ACCESS_REMOTE_WRITE);
    g_assert_cmpuint(rdma_modify(r, qpn, RC_INIT_MASK, &a), ==, SHCA_AQ_OK);
    a = rc_attr(SHCA_QPS_RTR);
    a.dest_qpn = cpu_to_le32(dest);
    a.sq_psn = a.rq_psn;
    a.timeout = 8;
    a.av.dgid[10] = a.av.dgid[11] = 0xff;
    stl_be_p(a.av.dgid + 12, 0x0a000001);
    stl_le_p(a.av.dmac, rd(&r->h, SHCA_REG_MAC_LO));
    stw_le_p(a.av.dmac + 4, rd(&r->h, SHCA_REG_MAC_HI));
    g_assert_cmpuint(rdma_modify(r, qpn, RC_RTR_MASK, &a), ==, SHCA_AQ_OK);
    a.state = SHCA_QPS_RTS;
    g_assert_cmpuint(rdma_modify(r, qpn, RC_RTS_MASK, &a), ==, SHCA_AQ_OK);
}

static uint8_t xrc_create_qp(Rdma *r, uint8_t type, uint32_t pdn_or_xrcd,
                             uint32_t cq, uint64_t sq, uint32_t *qpn)
{
    struct shca_aq_entry cmd;

    rdma_qp_cmd(r, &cmd, 0, type, cq, cq, sq, 0);
    cmd.create_qp.pdn = cpu_to_le32(pdn_or_xrcd);
    /* one page of 32 WQEs of 128 bytes, or no SQ at all */
    cmd.create_qp.sq_log_size = sq ? 5 : 0;
    cmd.create_qp.sq_wqe_shift = sq ? 7 : 0;
    if (!sq) {
        memset(&cmd.create_qp.sq, 0, sizeof(cmd.create_qp.sq));
    }
    return hca_cmd(&r->h, &cmd, qpn);
}

/*
 * A send QP reaches a target QP of the same port; each SEND lands in the
 * XRC SRQ it names and completes to that SRQ's CQ; a WRITE uses the
 * SRQ's PD; a SEND naming an SRQ that is not of the domain is refused.
 */
static void test_xrc(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_CREATE_SRQ };
    uint32_t xrcdn, xsrq, ini, tgt, key, xkey, xpd, kpd, junk, tcq, scq;
    uint64_t sq, srqbuf, tcqbuf, scqbuf, tx, rx, dst;
    uint8_t got[32];
    struct shca_cqe cqe;
    Loop l = { .sq_shift = 7 };
    Srq basic, q;
    Rdma r;

    rdma_start_with(&r, netdev);
    g_assert_cmphex(rd(&r.h, SHCA_REG_CAPS) & SHCA_CAP_XRC, ==, SHCA_CAP_XRC);
    g_assert_cmpuint(rd(&r.h, SHCA_REG_MAX_XRCD), ==, 1024);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_ALLOC_XRCD, 1, &junk), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_ALLOC_XRCD, 0, &xrcdn), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_PHYS |
                                 SHCA_ACCESS_LOCAL_WRITE |
                                 SHCA_ACCESS_REMOTE_WRITE, 0, RAM_TOP, 0, NULL,
                                 &key), ==, SHCA_AQ_OK);
    tcq = rdma_cq(&r, 0, LOOP_CQ_LOG, &tcqbuf);
    scq = rdma_cq(&r, 0, LOOP_CQ_LOG, &scqbuf);
    /* the receive side in a PD of its own (rdma_reg_mr uses r.pd) */
    kpd = r.pd;
    xpd = r.pd = rdma_user_pd(&r, 0);
    g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_PHYS |
                                 SHCA_ACCESS_LOCAL_WRITE |
                                 SHCA_ACCESS_REMOTE_WRITE, 0, RAM_TOP, 0, NULL,
                                 &xkey), ==, SHCA_AQ_OK);
    r.pd = kpd;

    /* the XRC SRQ: of the domain, completing to tcq; bad domain, bad CQ */
    srqbuf = guest_alloc(&r.h.alloc, 4096);
    qtest_memset(r.h.qts, srqbuf, 0, 4096);
    cmd.create_srq.pdn = cpu_to_le32(xpd);
    cmd.create_srq.log_size = SRQ_LOG;
    cmd.create_srq.wqe_shift = SRQ_SHIFT;
    cmd.create_srq.flags = SHCA_SRQ_F_XRC;
    buf_direct(&cmd.create_srq.buf, srqbuf, 1);
    cmd.create_srq.xrcdn = cpu_to_le32(xrcdn + 1);
    cmd.create_srq.cqn = cpu_to_le32(tcq);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_HANDLE);
    cmd.create_srq.xrcdn = cpu_to_le32(xrcdn);
    cmd.create_srq.cqn = cpu_to_le32(999);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_HANDLE);
    cmd.create_srq.cqn = cpu_to_le32(tcq);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, &xsrq), ==, SHCA_AQ_OK);
    q = (Srq) { .srqn = xsrq, .buf = srqbuf, .log_size = SRQ_LOG };
    srq_start(&r, &basic, 0);

    /* QPs: a target of the domain, without anything; a send QP */
    g_assert_cmpuint(xrc_create_qp(&r, SHCA_QPT_XRC_TGT, xrcdn + 1, 0, 0,
                                   &junk), ==, SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(xrc_create_qp(&r, SHCA_QPT_XRC_TGT, xrcdn, scq, 0,
                                   &junk), ==, SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(xrc_create_qp(&r, SHCA_QPT_XRC_TGT, xrcdn, 0, 0, &tgt),
                     ==, SHCA_AQ_OK);
    sq = guest_alloc(&r.h.alloc, 4096);
    g_assert_cmpuint(xrc_create_qp(&r, SHCA_QPT_XRC_INI, r.pd, scq, sq, &ini),
                     ==, SHCA_AQ_OK);
    rdma_qp_cmd(&r, &cmd, 0, SHCA_QPT_XRC_INI, scq, scq, sq, srqbuf);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_BAD_PARAM);
    xrc_connect(&r, ini, tgt);
    xrc_connect(&r, tgt, ini);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEALLOC_XRCD, xrcdn, NULL), ==,
                     SHCA_AQ_BUSY);

    /* a SEND into the XRC SRQ, named by remote_qpn */
    l.qpn = ini;
    l.sq = sq;
    l.key = key;
    l.scqbuf = scqbuf;
    tx = guest_alloc(&r.h.alloc, 4096);
    rx = guest_alloc(&r.h.alloc, 4096);
    dst = guest_alloc(&r.h.alloc, 4096);
    qtest_memwrite(r.h.qts, tx, "extended reliable connection", 28);
    srq_post(&r, &q, 0x800, rx, 1024, xkey);
    loop_send(&r, &l, 0, 0x900, tx, 28, SHCA_WQE_SIGNALED);
    qtest_writel(r.h.qts, sq + offsetof(struct shca_send_wqe, remote_qpn),
                 cpu_to_le32(xsrq));
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | ini);
    cqe = loop_wait_cqe(&r, tcqbuf, 0);
    check_srq_recv(cqe, 0x800, 0, 28, tgt);
    qtest_memread(r.h.qts, rx, got, 28);
    g_assert(memcmp(got, "extended reliable connection", 28) == 0);
    cqe = loop_send_cqe(&r, &l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);

    /* a WRITE through an MR of the SRQ's PD */
    loop_post_op(&r, &l, 1, SHCA_WR_RDMA_WRITE, xkey, dst, tx, 28);
    qtest_writel(r.h.qts, sq + (1 << 7) +
                 offsetof(struct shca_send_wqe, remote_qpn),
                 cpu_to_le32(xsrq));
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | ini);
    cqe = loop_send_cqe(&r, &l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    qtest_memread(r.h.qts, dst, got, 28);
    g_assert(memcmp(got, "extended reliable connection", 28) == 0);

    /* an SRQ that is not an XRC SRQ of the domain: invalid request */
    loop_send(&r, &l, 2, 0x902, tx, 28, SHCA_WQE_SIGNALED);
    qtest_writel(r.h.qts, sq + (2 << 7) +
                 offsetof(struct shca_send_wqe, remote_qpn),
                 cpu_to_le32(basic.srqn));
    rdma_db(&r, 0, SHCA_DB_SQ, 3 << 16 | ini);
    cqe = loop_send_cqe(&r, &l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_REM_INV_REQ_ERR);

    /*
     * The SRQ goes, then its MR and PD, while the target QP that used them
     * lives (regression xrc/tgt-holds-no-pd: a target QP kept the PD of
     * the last SRQ it visited busy).  The domain goes once the QP has.
     */
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DESTROY_SRQ, xsrq, NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEREG_MR, xkey, NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEALLOC_PD, xpd, NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEALLOC_XRCD, xrcdn, NULL), ==,
                     SHCA_AQ_BUSY);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DESTROY_QP, tgt, NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEALLOC_XRCD, xrcdn, NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&r.h);
}

/* --- issue 11, defects 7 and 8 ----------------------------------------- */

/* What of transport-mem the device's QPs have reserved (spec §12). */
static uint64_t tp_mem_reserved(Rdma *r)
{
    QDict *rsp = qtest_qmp(r->h.qts, "{'execute': 'qom-get', 'arguments': "
                           "{'path': '/machine/peripheral/hca', "
                           "'property': 'x-transport-mem-reserved'}}");
    uint64_t v;

    g_assert(qdict_haskey(rsp, "return"));
    v = qdict_get_int(rsp, "return");
    qobject_unref(rsp);
    return v;
}

/* CREATE_QP of a kernel QP with an SQ of 2^sq_log WQEs of 2^sq_shift. */
static uint8_t limits_create_qp(Rdma *r, uint8_t type, uint32_t cq,
                                uint64_t sq, uint8_t sq_log,
                                uint8_t sq_shift, uint32_t *qpn)
{
    struct shca_aq_entry cmd;

    rdma_qp_cmd(r, &cmd, 0, type, cq, cq, sq, 0);
    cmd.create_qp.sq_log_size = sq_log;
    cmd.create_qp.sq_wqe_shift = sq_shift;
    buf_direct(&cmd.create_qp.sq, sq,
               MAX(1, (1u << (sq_log + sq_shift)) / 4096));
    return hca_cmd(&r->h, &cmd, qpn);
}

/*
 * Issue 11, defect 7: the transport state of QPs is reserved at CREATE_QP
 * within transport-mem, in proportion to the SQ and the type (spec
 * §13.2); past the budget CREATE_QP answers NO_RESOURCES, and DESTROY_QP
 * gives a QP's share back.
 */
static void test_limits_transport_memory_capped(void)
{
    /* 256 WQEs of 88 + 256 bytes, 128 READ/atomic slots of 80 */
    const uint64_t big = 256 * (88 + 256) + 128 * 80;
    const uint64_t small = 16 * 88 + 128 * 80;     /* 16 WQEs of 64 */
    const uint64_t uc = 64 * (88 + 64);            /* 64 WQEs of 128 */
    uint32_t qpn[16], ud, extra, n;
    uint64_t sq, cqbuf;
    uint32_t cq;
    uint8_t st;
    Rdma r;

    rdma_start_with(&r, ",transport-mem=1M");
    cq = rdma_cq(&r, 0, 4, &cqbuf);
    sq = guest_alloc(&r.h.alloc, 1024 << 9);
    g_assert_cmpuint(tp_mem_reserved(&r), ==, 0);
    for (n = 0; n < ARRAY_SIZE(qpn); n++) {
        st = limits_create_qp(&r, SHCA_QPT_RC, cq, sq, 8, 9, &qpn[n]);
        if (st != SHCA_AQ_OK) {
            break;
        }
    }
    g_assert_cmpuint(st, ==, SHCA_AQ_NO_RESOURCES);
    g_assert_cmpuint(n, ==, 1024 * 1024 / big);
    g_assert_cmpuint(tp_mem_reserved(&r), ==, n * big);

    /* what is left still takes QPs that reserve less, UD none at all */
    g_assert_cmpuint(limits_create_qp(&r, SHCA_QPT_UD, cq, sq, 8, 9, &ud),
                     ==, SHCA_AQ_OK);
    g_assert_cmpuint(tp_mem_reserved(&r), ==, n * big);
    g_assert_cmpuint(limits_create_qp(&r, SHCA_QPT_RC, cq, sq, 4, 6,
                                      &extra), ==, SHCA_AQ_OK);
    g_assert_cmpuint(tp_mem_reserved(&r), ==, n * big + small);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DESTROY_QP, extra, NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(limits_create_qp(&r, SHCA_QPT_UC, cq, sq, 6, 7,
                                      &extra), ==, SHCA_AQ_OK);
    g_assert_cmpuint(tp_mem_reserved(&r), ==, n * big + uc);

    /*
     * A QP destroyed gives its share back, which a larger SQ takes: the
     * ring stops at 256 WQEs.  A reset gives back all.
     */
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DESTROY_QP, qpn[0], NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(limits_create_qp(&r, SHCA_QPT_RC, cq, sq, 10, 9,
                                      &qpn[0]), ==, SHCA_AQ_OK);
    g_assert_cmpuint(tp_mem_reserved(&r), ==, n * big + uc);
    g_assert_cmpuint(limits_create_qp(&r, SHCA_QPT_RC, cq, sq, 8, 9,
                                      &qpn[n]), ==, SHCA_AQ_NO_RESOURCES);
    wr(&r.h, SHCA_REG_CTRL, 0);
    g_assert_cmpuint(tp_mem_reserved(&r), ==, 0);
    hca_stop(&r.h);
}

/*
 * Post a COMPARE_SWAP (compare_add, swap) or FETCH_ADD (compare_add) as
 * WQE 0 on a freshly connected QP, its result to the 8 bytes at local,
 * and check its CQE as awf_one() does: status, or with nak a NAK of the
 * responder.
 */
static void atomic_one(Rdma *r, Loop *l, uint8_t opcode, uint32_t rkey,
                       uint64_t raddr, uint64_t compare_add, uint64_t swap,
                       uint64_t local, uint8_t nak, Refusals *ref)
{
    struct shca_send_wqe w = {
        .wr_id = cpu_to_le64(0xa700),
        .opcode = opcode,
        .flags = SHCA_WQE_SIGNALED,
        .num_sge = 1,
        .remote_addr = cpu_to_le64(raddr),
        .rkey = cpu_to_le32(rkey),
        .compare_add = cpu_to_le64(compare_add),
        .swap = cpu_to_le64(swap),
    };
    struct shca_sge sge = {
        .addr = cpu_to_le64(local),
        .length = cpu_to_le32(8),
        .lkey = cpu_to_le32(l->key),
    };
    uint64_t stats[SHCA_STAT_COUNT];
    struct shca_cqe cqe;
    struct shca_eqe eqe;

    loop_connect(r, l, false);
    loop_write_send(r, l, 0, &w, &sge, sizeof(sge));
    rdma_db(r, 0, SHCA_DB_SQ, 1 << 16 | l->qpn);
    cqe = loop_send_cqe(r, l);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0xa700);
    if (nak) {
        g_assert_cmpuint(cqe.status, ==, SHCA_CQE_WR_FLUSH_ERR);
        ref->naks++;
        eqe = rdma_eqe(r, r->eq0, ref->eqes++);
        g_assert_cmpuint(eqe.type, ==, nak);
        g_assert_cmpuint(le32_to_cpu(eqe.obj), ==, l->qpn);
    } else {
        g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
        g_assert_cmphex(cqe.opcode, ==, opcode == SHCA_WR_ATOMIC_CMP_SWP ?
                        SHCA_CQE_OP_COMP_SWAP : SHCA_CQE_OP_FETCH_ADD);
        g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 8);
    }
    rdma_stats(r, stats);
    g_assert_cmpuint(stats[SHCA_STAT_NAKS_SENT], ==, ref->naks);
}

/*
 * Issue 11, defect 8: COMPARE_SWAP, FETCH_ADD and ATOMIC WRITE run as
 * host atomic operations on the guest word, mapped in place (spec §16),
 * with the results IBA gives.  A word the device cannot map so, 8-byte
 * aligned guest RAM (no memory, MMIO, or misaligned because the MR's
 * iova and first_offset disagree modulo 8), is answered with a remote
 * access NAK and left as it was.
 */
static void test_atomic_guest_word_mapped(void)
{
    const uint32_t acc = SHCA_ACCESS_LOCAL_WRITE | SHCA_ACCESS_REMOTE_WRITE |
                         SHCA_ACCESS_REMOTE_ATOMIC;
    const uint64_t iova = 0x40000000;
    g_autofree char *netdev = dgram_loop_netdev();
    const uint8_t aw = SHCA_WR_ATOMIC_WRITE, fa = SHCA_WR_ATOMIC_FETCH_ADD;
    const uint8_t cs = SHCA_WR_ATOMIC_CMP_SWP;
    const uint8_t access_err = SHCA_EQE_QP_ACCESS_ERR;
    uint32_t paged, skewed, phys;
    struct shca_buf_desc d;
    Refusals ref = { 0 };
    uint64_t pages, local;
    Rdma r;
    Loop l;

    rdma_start_with(&r, netdev);
    loop_start(&r, &l, SHCA_QPT_RC, 7);
    l.access = SHCA_ACCESS_REMOTE_ATOMIC | SHCA_ACCESS_REMOTE_WRITE;
    pages = guest_alloc(&r.h.alloc, 2 * 4096);
    qtest_memset(r.h.qts, pages, 0, 2 * 4096);
    local = guest_alloc(&r.h.alloc, 4096);
    buf_direct(&d, pages, 2);
    g_assert_cmpuint(rdma_reg_mr(&r, acc, iova, 8192, 0, &d, &paged), ==,
                     SHCA_AQ_OK);
    /* iova + 8 lies 12 bytes into the pages: no word is aligned */
    g_assert_cmpuint(rdma_reg_mr(&r, acc, iova, 8000, 4, &d, &skewed), ==,
                     SHCA_AQ_OK);
    /* guest-physical, over RAM, the holes and the MMIO below 4 GiB */
    g_assert_cmpuint(rdma_reg_mr(&r, acc | SHCA_ACCESS_PHYS, 0, 1ull << 32,
                                 0, NULL, &phys), ==, SHCA_AQ_OK);

    /* the results of IBA, in the guest's little-endian word */
    qtest_writeq(r.h.qts, pages + 8, 0x1122334455667788ull);
    atomic_one(&r, &l, fa, paged, iova + 8, 0x1000000000000001ull, 0, local,
               0, &ref);
    g_assert_cmphex(qtest_readq(r.h.qts, local), ==, 0x1122334455667788ull);
    g_assert_cmphex(qtest_readq(r.h.qts, pages + 8), ==,
                    0x2122334455667789ull);
    atomic_one(&r, &l, cs, paged, iova + 8, 0x2122334455667789ull, 0xdead,
               local, 0, &ref);
    g_assert_cmphex(qtest_readq(r.h.qts, local), ==, 0x2122334455667789ull);
    g_assert_cmphex(qtest_readq(r.h.qts, pages + 8), ==, 0xdead);
    atomic_one(&r, &l, cs, paged, iova + 8, 1, 2, local, 0, &ref);
    g_assert_cmphex(qtest_readq(r.h.qts, local), ==, 0xdead);
    g_assert_cmphex(qtest_readq(r.h.qts, pages + 8), ==, 0xdead);
    /* FETCH_ADD wraps; the second page is reached through its own entry */
    qtest_writeq(r.h.qts, pages + 4096, ~0ull);
    atomic_one(&r, &l, fa, paged, iova + 4096, 2, 0, local, 0, &ref);
    g_assert_cmphex(qtest_readq(r.h.qts, local), ==, ~0ull);
    g_assert_cmphex(qtest_readq(r.h.qts, pages + 4096), ==, 1);
    atomic_one(&r, &l, fa, phys, pages + 4096, 5, 0, local, 0, &ref);
    g_assert_cmphex(qtest_readq(r.h.qts, pages + 4096), ==, 6);
    awf_one(&r, &l, aw, paged, iova + 4088, 0x0807060504030201ull, 0,
            SHCA_CQE_SUCCESS, 0, &ref);
    g_assert_cmphex(qtest_readq(r.h.qts, pages + 4088), ==,
                    0x0807060504030201ull);

    /* no memory, MMIO (the function's own registers): refused */
    atomic_one(&r, &l, fa, phys, RAM_TOP + 4096, 1, 0, local, access_err,
               &ref);
    atomic_one(&r, &l, cs, phys, r.h.bar.addr, SHCA_MAGIC, 0, local,
               access_err, &ref);
    awf_one(&r, &l, aw, phys, r.h.bar.addr + SHCA_REG_CTRL, 0, 0, 0,
            access_err, &ref);
    g_assert_cmphex(rd(&r.h, SHCA_REG_MAGIC), ==, SHCA_MAGIC);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);

    /* a misaligned word, or one across two pages: never half done */
    atomic_one(&r, &l, fa, skewed, iova + 8, 1, 0, local, access_err, &ref);
    atomic_one(&r, &l, cs, skewed, iova + 8, 0, 1, local, access_err, &ref);
    awf_one(&r, &l, aw, skewed, iova + 4088, ~0ull, 0, 0, access_err, &ref);
    g_assert_cmphex(qtest_readq(r.h.qts, pages + 8), ==, 0xdead);
    g_assert_cmphex(qtest_readq(r.h.qts, pages + 16), ==, 0);
    g_assert_cmphex(qtest_readq(r.h.qts, pages + 4088), ==,
                    0x0807060504030201ull);
    g_assert_cmphex(qtest_readq(r.h.qts, pages + 4096), ==, 6);
    hca_stop(&r.h);
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
    qtest_add_func("/softhca/admin/burst-continues",
                   test_admin_burst_continues);
    qtest_add_func("/softhca/eq/create-checks", test_eq_create_checks);
    qtest_add_func("/softhca/eq/port-event", test_eq_port_event);
    qtest_add_func("/softhca/nic/loopback", test_nic_loopback);
    qtest_add_func("/softhca/rdma/caps-gate", test_rdma_caps_gate);
    qtest_add_func("/softhca/cq/create-checks", test_cq_create_checks);
    qtest_add_func("/softhca/qp/create-checks", test_qp_create_checks);
    qtest_add_func("/softhca/qp/modify-path", test_qp_modify_path);
    qtest_add_func("/softhca/qp/modify-illegal", test_qp_modify_illegal);
    qtest_add_func("/softhca/qp/flush", test_qp_flush);
    qtest_add_func("/softhca/qp/sqd", test_qp_sqd);
    qtest_add_func("/softhca/doorbell/wrong-page", test_doorbell_wrong_page);
    qtest_add_func("/softhca/cq/overrun", test_cq_overrun);
    qtest_add_func("/softhca/cq/resize", test_cq_resize);
    qtest_add_func("/softhca/reset/flr", test_flr_resets);
    qtest_add_func("/softhca/uc/message-over-window",
                   test_uc_message_over_window);
    qtest_add_func("/softhca/peer/forged-ack-dropped",
                   test_forged_ack_dropped);
    qtest_add_func("/softhca/rc/ack-past-read-retries-once",
                   test_ack_past_read_retries_once);
    qtest_add_func("/softhca/peer/duplicate-read-checked",
                   test_duplicate_read_checked);
    qtest_add_func("/softhca/reentrancy/timer-msix-ctrl",
                   test_reentrancy_timer_msix_ctrl);
    qtest_add_func("/softhca/reentrancy/hold-timer-msix-ctrl",
                   test_reentrancy_hold_timer_msix_ctrl);
    qtest_add_func("/softhca/mr/reg", test_mr_reg);
    qtest_add_func("/softhca/mr/rereg", test_mr_rereg);
    qtest_add_func("/softhca/wqe/atomic-write-flush", test_atomic_write_flush);
    qtest_add_func("/softhca/fault/atomic-write-flush",
                   test_atomic_write_flush_faults);
    qtest_add_func("/softhca/rdma/query-stats", test_query_stats);
    qtest_add_func("/softhca/wqe/send-self", test_wqe_send_self);
    qtest_add_func("/softhca/rc/ack-rides", test_rc_ack_rides);
    qtest_add_func("/softhca/rc/sq-record", test_rc_sq_record);
    qtest_add_func("/softhca/wqe/malformed", test_wqe_malformed);
    qtest_add_func("/softhca/wqe/doorbell-overrun", test_wqe_doorbell_overrun);
    qtest_add_func("/softhca/ud/send-recv", test_ud_send_recv);
    qtest_add_func("/softhca/ud/ipv6", test_ud_ipv6);
    qtest_add_func("/softhca/ud/send-malformed", test_ud_send_malformed);
    qtest_add_func("/softhca/ud/gsi", test_gsi);
    qtest_add_func("/softhca/mcast/attach", test_mcast_attach);
    qtest_add_func("/softhca/mcast/deliver", test_mcast_deliver);
    qtest_add_func("/softhca/port/loopback", test_port_loopback);
    qtest_add_func("/softhca/port/loopback-full", test_port_loopback_full);
    qtest_add_func("/softhca/srq/checks", test_srq_checks);
    qtest_add_func("/softhca/srq/rc", test_srq_rc);
    qtest_add_func("/softhca/srq/ud", test_srq_ud);
    qtest_add_func("/softhca/xrc/send", test_xrc);
    qtest_add_func("/softhca/mr/fast-reg", test_fast_reg);
    qtest_add_func("/softhca/mr/mw", test_mw);
    qtest_add_func("/softhca/fault/props", test_fault_props);
    qtest_add_func("/softhca/fault/nic-untouched", test_fault_nic_untouched);
    qtest_add_func("/softhca/fault/deterministic", test_fault_deterministic);
    qtest_add_func("/softhca/fault/rc-recovers", test_fault_rc_recovers);
    qtest_add_func("/softhca/limits/transport-memory-capped",
                   test_limits_transport_memory_capped);
    qtest_add_func("/softhca/atomic/guest-word-mapped",
                   test_atomic_guest_word_mapped);

    return g_test_run();
}
