/*
 * QTest testcase for the softhca RDMA adapter, driven with no guest:
 * malformed input from the guest (commands, configuration, rings,
 * WQEs, doorbells) and from a network peer (forged ACKs, duplicate
 * READs): each ends in an error status, never in work for nothing.
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

    /* the same for the RQ */
    loop_connect(&r, &l, true);
    rdma_db(&r, 0, SHCA_DB_RQ, 17 << 16 | l.qpn);
    eqe = rdma_eqe(&r, r.eq0, 1);
    g_assert_cmpuint(eqe.type, ==, SHCA_EQE_QP_FATAL);
    g_assert_cmpuint(rdma_state(&r, l.qpn), ==, SHCA_QPS_ERR);
    /* a count behind the device's is old news (spec §14) */
    loop_connect(&r, &l, true);
    rdma_db(&r, 0, SHCA_DB_SQ, 0xffffu << 16 | l.qpn);
    g_assert_cmpuint(rdma_eqe(&r, r.eq0, 2).type, ==, 0);
    g_assert_cmpuint(rdma_state(&r, l.qpn), ==, SHCA_QPS_INIT);
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

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/softhca/malformed/admin", test_admin_malformed);
    qtest_add_func("/softhca/malformed/admin-bad-config",
                   test_bad_admin_config);
    qtest_add_func("/softhca/malformed/admin-ring-overrun", test_ring_overrun);
    qtest_add_func("/softhca/malformed/admin-mmio-is-not-dma",
                   test_mmio_is_not_dma);
    qtest_add_func("/softhca/malformed/peer/forged-ack-dropped",
                   test_forged_ack_dropped);
    qtest_add_func("/softhca/malformed/peer/duplicate-read-checked",
                   test_duplicate_read_checked);
    qtest_add_func("/softhca/malformed/wqe", test_wqe_malformed);
    qtest_add_func("/softhca/malformed/wqe-doorbell-overrun",
                   test_wqe_doorbell_overrun);
    qtest_add_func("/softhca/malformed/ud-send", test_ud_send_malformed);

    return g_test_run();
}
