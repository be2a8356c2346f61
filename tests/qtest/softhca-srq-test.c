/*
 * QTest testcase for the softhca RDMA adapter, driven with no guest:
 * shared receive queues (spec §13.5): their creation and MODIFY_SRQ
 * checks, RC and UD QPs that receive through one, and an SRQ of another
 * PD than its QP's.
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

/*
 * Malformed SRQ commands and QPs that name SRQs badly are refused and
 * change nothing; a bad SRQ doorbell is ignored.
 */
static void test_srq_checks(void)
{
    struct shca_aq_entry cmd;
    uint64_t buf, sq, cqbuf;
    uint32_t cq, ucq, uctx, upd, srqn, qpn, limit;
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
    /* QPs: a missing SRQ, one and an RQ, a GSI QP, another context's SRQ */
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
    ucq = rdma_cq(&r, uctx, LOOP_CQ_LOG, &cqbuf);
    rdma_qp_cmd(&r, &cmd, uctx, SHCA_QPT_RC, ucq, ucq, sq, 0);
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
    srq_rc_start(&r, &q, &l, 2, &tx, &rx);

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

/*
 * Issue 25: CREATE_QP refused an SRQ of another PD than the QP's.  IB
 * and mlx5 allow it: the SRQ's PD governs the keys of its receive WQEs,
 * so a key of the SRQ's PD works there and one of the QP's PD does not.
 */
static void test_srq_of_another_pd(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    uint32_t qpd, spd, skey;
    uint64_t tx, rx;
    struct shca_cqe cqe;
    Rdma r;
    Loop l;
    Srq q;

    rdma_start_with(&r, netdev);
    qpd = r.pd;
    spd = rdma_user_pd(&r, 0);
    q.buf = guest_alloc(&r.h.alloc, 4096);
    q.log_size = SRQ_LOG;
    q.pi = 0;
    qtest_memset(r.h.qts, q.buf, 0, 4096);
    g_assert_cmpuint(srq_create_cmd(&r, 0, spd, SRQ_LOG, 0, q.buf, 1,
                                    &q.srqn), ==, SHCA_AQ_OK);
    r.pd = spd;                 /* rdma_reg_mr registers in r.pd */
    g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_PHYS |
                                 SHCA_ACCESS_LOCAL_WRITE, 0, RAM_TOP, 0, NULL,
                                 &skey), ==, SHCA_AQ_OK);
    r.pd = qpd;
    loop_create(&r, &l, SHCA_QPT_RC, 7, SHCA_QP_F_SRQ, q.srqn);
    loop_connect(&r, &l, false);
    tx = guest_alloc(&r.h.alloc, 4096);
    rx = guest_alloc(&r.h.alloc, 4096);
    qtest_memwrite(r.h.qts, tx, "another PD", 10);

    /* the SEND's buffer by the QP's key, the receive's by the SRQ's */
    srq_post(&r, &q, 0x500, rx, 256, skey);
    loop_send(&r, &l, 0, 0x900, tx, 10, SHCA_WQE_SIGNALED);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    check_srq_recv(loop_recv_cqe(&r, &l), 0x500, 0, 10, l.qpn);
    g_assert_cmpuint(loop_send_cqe(&r, &l).status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmpuint(qtest_readb(r.h.qts, rx + 9), ==, 'D');

    /* a receive WQE with a key of the QP's PD: not the SRQ's, refused */
    srq_post(&r, &q, 0x501, rx, 256, l.key);
    loop_send(&r, &l, 1, 0x901, tx, 10, SHCA_WQE_SIGNALED);
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | l.qpn);
    cqe = loop_recv_cqe(&r, &l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_LOC_PROT_ERR);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x501);
    g_assert_cmpuint(rdma_state(&r, l.qpn), ==, SHCA_QPS_ERR);
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

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/softhca/srq/checks", test_srq_checks);
    qtest_add_func("/softhca/srq/rc", test_srq_rc);
    qtest_add_func("/softhca/srq/of-another-pd", test_srq_of_another_pd);
    qtest_add_func("/softhca/srq/ud", test_srq_ud);

    return g_test_run();
}
