/*
 * QTest testcase for the softhca RDMA adapter, driven with no guest:
 * the function as a whole: identity, the admin queue and its PDs and
 * user contexts, event queues, the NIC rings, statistics, FLR and the
 * host-memory budget.
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

/* What of transport-mem the device's QPs have reserved (spec §12). */
static uint64_t tp_mem_reserved(Rdma *r)
{
    return hca_prop(&r->h, "x-transport-mem-reserved");
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

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/softhca/admin/identity", test_identity);
    qtest_add_func("/softhca/admin/pd-uctx", test_admin_pd_uctx);
    qtest_add_func("/softhca/admin/uctx-exhaustion", test_uctx_exhaustion);
    qtest_add_func("/softhca/admin/acq-backpressure", test_acq_backpressure);
    qtest_add_func("/softhca/admin/burst-continues",
                   test_admin_burst_continues);
    qtest_add_func("/softhca/admin/eq/create-checks",
                   test_eq_create_checks);
    qtest_add_func("/softhca/admin/eq/port-event", test_eq_port_event);
    qtest_add_func("/softhca/admin/nic-loopback", test_nic_loopback);
    qtest_add_func("/softhca/admin/rdma/caps-gate", test_rdma_caps_gate);
    qtest_add_func("/softhca/admin/reset-flr", test_flr_resets);
    qtest_add_func("/softhca/admin/rdma/query-stats", test_query_stats);
    qtest_add_func("/softhca/admin/limits/transport-memory-capped",
                   test_limits_transport_memory_capped);

    return g_test_run();
}
