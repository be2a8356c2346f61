/*
 * QTest testcase for the softhca RDMA adapter, driven with no guest:
 * datagrams: UD and GSI QPs over IPv4 and IPv6, multicast.
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
    ud_recv(&r, &b, 2, rx, 1024, key);
    ud_send_simple(&r, &a, 3, UD_IP, b.qpn, UD_QKEY, tx, 8, key);
    cqe = loop_wait_cqe(&r, b.rcqbuf, b.rcq_n++);
    check_ud_recv(cqe, 2, 8, a.qpn);
    /* to a QPN with no QP: RX_DROPPED */
    ud_send_simple(&r, &a, 4, UD_IP, 999, UD_QKEY, tx, 8, key);
    wait_stat(&r, SHCA_STAT_RX_DROPPED, 1);
    for (unsigned i = 0; i < 3; i++) {
        cqe = loop_wait_cqe(&r, a.scqbuf, a.scq_n++);
        g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    }
    rdma_stats(&r, stats);
    g_assert_cmpuint(stats[SHCA_STAT_RX_PACKETS], ==, 3);

    /* longer than the port MTU (1500: 1024): LOC_LEN_ERR, QP to ERR */
    ud_send_simple(&r, &a, 5, UD_IP, b.qpn, UD_QKEY, tx, 1025, key);
    cqe = loop_wait_cqe(&r, a.scqbuf, a.scq_n++);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_LOC_LEN_ERR);
    g_assert_cmpuint(rdma_state(&r, a.qpn), ==, SHCA_QPS_ERR);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&r.h);
}

/*
 * Issue 25: a datagram longer than the receive WQE's buffer (GRH and
 * payload) completed the WQE with LOC_LEN_ERR.  As on mlx5 it is dropped
 * and counted in RX_DROPPED, and the WQE waits for a datagram that fits.
 */
static void test_ud_longer_than_recv_dropped(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    uint64_t tx, rx, stats[SHCA_STAT_COUNT];
    struct shca_cqe cqe;
    uint32_t key;
    Rdma r;
    Ud a, b;

    rdma_start_with(&r, netdev);
    key = ud_phys_key(&r);
    ud_start(&r, &a, SHCA_QPT_UD, UD_QKEY);
    ud_start(&r, &b, SHCA_QPT_UD, UD_QKEY);
    tx = guest_alloc(&r.h.alloc, 4096);
    rx = guest_alloc(&r.h.alloc, 4096);
    qtest_memwrite(r.h.qts, tx, "too long", 8);
    ud_recv(&r, &b, 0, rx, 40 + 7, key);

    ud_send_simple(&r, &a, 0, UD_IP, b.qpn, UD_QKEY, tx, 8, key);
    wait_stat(&r, SHCA_STAT_RX_DROPPED, 1);
    g_assert(!loop_cqe_ready(&r, b.rcqbuf, 0));
    ud_send_simple(&r, &a, 1, UD_IP, b.qpn, UD_QKEY, tx, 7, key);
    cqe = loop_wait_cqe(&r, b.rcqbuf, b.rcq_n++);
    check_ud_recv(cqe, 0, 7, a.qpn);
    g_assert_cmpuint(qtest_readb(r.h.qts, rx + 40 + 6), ==, 'n');
    for (unsigned i = 0; i < 2; i++) {
        cqe = loop_wait_cqe(&r, a.scqbuf, a.scq_n++);
        g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    }
    rdma_stats(&r, stats);
    g_assert_cmpuint(stats[SHCA_STAT_RX_PACKETS], ==, 1);
    g_assert_cmpuint(stats[SHCA_STAT_RX_DROPPED], ==, 1);
    g_assert_cmpuint(rdma_state(&r, b.qpn), ==, SHCA_QPS_RTS);
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
 * -netdev dgram moves datagrams in batches of 32 (qemu-patches/0001): a
 * doorbell's 200 sends leave the port, every one and in PSN order, and
 * 96 datagrams the wire sends at once all reach the QP.
 */
#define BURST_TX 200
#define BURST_RX 96

static void test_ud_dgram_burst(void)
{
    struct shca_sge sge = { .length = cpu_to_le32(16) };
    uint8_t f[2048], dmac[6];
    struct shca_av av;
    struct shca_cqe cqe;
    unsigned sent = 0;
    uint32_t psn = 0;
    size_t len;
    Wire wire;
    Rdma r;
    Ud u;

    wire_open(&wire);
    rdma_start_with(&r, wire.netdev);
    ud_start_sq(&r, &u, SHCA_QPT_UD, UD_QKEY, 8);
    sge.lkey = cpu_to_le32(ud_phys_key(&r));
    sge.addr = cpu_to_le64(guest_alloc(&r.h.alloc, 4096));
    av = ud_av(&r, 0x0a000002);
    memcpy(av.dmac, "\x52\x54\x00\x12\x34\x99", 6);
    ud_write_sends(&r, &u, 8, BURST_TX, PEER_QPN, &av, &sge);
    rdma_db(&r, 0, SHCA_DB_SQ, BURST_TX << 16 | u.qpn);
    cqe = loop_wait_cqe(&r, u.scqbuf, u.scq_n++);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmpuint(le64_to_cpu(cqe.wr_id), ==, BURST_TX - 1);
    while (sent < BURST_TX && (len = wire_recv(&wire, f, sizeof(f), 2000))) {
        uint32_t p = ldl_be_p(f + ROCE_OFF + 8) & 0xffffff;

        g_assert_cmpuint(len, ==, ROCE_OFF + 12 + 8 + 16 + 4);
        if (sent++) {
            g_assert_cmphex(p, ==, (psn + 1) & 0xffffff);
        }
        psn = p;
    }
    g_assert_cmpuint(sent, ==, BURST_TX);

    /* UD SEND_ONLY, DETH, 16 bytes, to the QP, which has no receive WQE */
    stl_le_p(dmac, rd(&r.h, SHCA_REG_MAC_LO));
    stw_le_p(dmac + 4, rd(&r.h, SHCA_REG_MAC_HI));
    memset(f, 0, sizeof(f));
    for (uint32_t i = 0; i < BURST_RX; i++) {
        peer_bth(f + ROCE_OFF, 0x64, u.qpn, i, false);
        stl_be_p(f + ROCE_OFF + 12, UD_QKEY);
        stl_be_p(f + ROCE_OFF + 16, PEER_QPN);
        wire_send(&wire, f, peer_frame(f, dmac, 12 + 8 + 16));
    }
    wait_stat(&r, SHCA_STAT_RX_NO_RECV_WQE, BURST_RX);
    hca_stop(&r.h);
    wire_close(&wire);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/softhca/ud/send-recv", test_ud_send_recv);
    qtest_add_func("/softhca/ud/longer-than-recv-dropped",
                   test_ud_longer_than_recv_dropped);
    qtest_add_func("/softhca/ud/ipv6", test_ud_ipv6);
    qtest_add_func("/softhca/ud/gsi", test_gsi);
    qtest_add_func("/softhca/ud/mcast-attach", test_mcast_attach);
    qtest_add_func("/softhca/ud/mcast-deliver", test_mcast_deliver);
    qtest_add_func("/softhca/ud/dgram-burst", test_ud_dgram_burst);

    return g_test_run();
}
