/*
 * QTest testcase for the softhca RDMA adapter, driven with no guest:
 * injected faults (the fault-* properties) and timers that fire into
 * a device the guest reprogrammed meanwhile.
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

/* Fault injection (spec §12) */
#define FAULT_ALL(pm) ",fault-tx-drop=" pm ",fault-tx-dup=" pm \
                      ",fault-tx-reorder=" pm ",fault-rx-drop=" pm \
                      ",fault-rx-dup=" pm ",fault-rx-reorder=" pm

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

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/softhca/fault/reentrancy/timer-msix-ctrl",
                   test_reentrancy_timer_msix_ctrl);
    qtest_add_func("/softhca/fault/reentrancy/hold-timer-msix-ctrl",
                   test_reentrancy_hold_timer_msix_ctrl);
    qtest_add_func("/softhca/fault/atomic-write-flush",
                   test_atomic_write_flush_faults);
    qtest_add_func("/softhca/fault/props", test_fault_props);
    qtest_add_func("/softhca/fault/nic-untouched", test_fault_nic_untouched);
    qtest_add_func("/softhca/fault/deterministic", test_fault_deterministic);
    qtest_add_func("/softhca/fault/rc-recovers", test_fault_rc_recovers);

    return g_test_run();
}
