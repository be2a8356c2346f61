/*
 * QTest testcase for the softhca RDMA adapter, driven with no guest: the
 * admin rules of XRC domains, XRC SRQs and target QPs (spec §13.5, §13.7),
 * and SENDs and WRITEs from a send QP through them.
 *
 * Copyright (c) 2026 The softhca authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "libqos/pci.h"
#include "qemu/bswap.h"
#include "hw/softhca/softhca_hw.h"
#include "softhca-qtest.h"

/* An XRC SRQ of the domain xrcdn, in PD pdn of uctx, completing to cqn. */
static uint32_t xrc_srq(Rdma *r, uint32_t uctx, uint32_t pdn,
                        uint32_t xrcdn, uint32_t cqn)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_CREATE_SRQ };
    uint64_t buf = guest_alloc(&r->h.alloc, 4096);
    uint32_t srqn;

    qtest_memset(r->h.qts, buf, 0, 4096);
    cmd.create_srq.uctx = cpu_to_le32(uctx);
    cmd.create_srq.pdn = cpu_to_le32(pdn);
    cmd.create_srq.log_size = SRQ_LOG;
    cmd.create_srq.wqe_shift = SRQ_SHIFT;
    cmd.create_srq.flags = SHCA_SRQ_F_XRC;
    cmd.create_srq.xrcdn = cpu_to_le32(xrcdn);
    cmd.create_srq.cqn = cpu_to_le32(cqn);
    buf_direct(&cmd.create_srq.buf, buf, 1);
    g_assert_cmpuint(hca_cmd(&r->h, &cmd, &srqn), ==, SHCA_AQ_OK);
    return srqn;
}

/* CREATE_QP of a target QP in the domain xrcdn, with these CQs. */
static uint8_t xrc_tgt_create(Rdma *r, uint32_t xrcdn, uint32_t send_cqn,
                              uint32_t recv_cqn)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_CREATE_QP };
    uint32_t qpn;

    cmd.create_qp.type = SHCA_QPT_XRC_TGT;
    cmd.create_qp.pdn = cpu_to_le32(xrcdn);
    cmd.create_qp.send_cqn = cpu_to_le32(send_cqn);
    cmd.create_qp.recv_cqn = cpu_to_le32(recv_cqn);
    return hca_cmd(&r->h, &cmd, &qpn);
}

/*
 * Issue 25, defect 4: a target QP named CQs, which spec §13.7 lists as 0
 * with its rings and flags; and an RC QP of a user context took an XRC
 * SRQ as its SRQ, which serves XRC target QPs only (§13.5).  Both are
 * refused with BAD_PARAM; a target QP without CQs and an RC QP with an
 * ordinary SRQ are still created.
 */
static void test_xrc_admin_checks(void)
{
    uint32_t xrcdn, uctx, upd, ucq, xsrq, srqn, qpn, cq;
    struct shca_aq_entry cmd;
    uint64_t cqbuf, sq, srqbuf;
    Rdma r;

    rdma_start(&r);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_ALLOC_XRCD, 0, &xrcdn), ==,
                     SHCA_AQ_OK);
    /* CQ numbers count from 0: the second CQ's is not */
    rdma_cq(&r, 0, LOOP_CQ_LOG, &cqbuf);
    cq = rdma_cq(&r, 0, LOOP_CQ_LOG, &cqbuf);
    g_assert_cmpuint(cq, !=, 0);
    g_assert_cmpuint(xrc_tgt_create(&r, xrcdn, cq, cq), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(xrc_tgt_create(&r, xrcdn, cq, 0), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(xrc_tgt_create(&r, xrcdn, 0, cq), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(xrc_tgt_create(&r, xrcdn, 0, 0), ==, SHCA_AQ_OK);

    /* a user context's RC QP naming its own context's XRC SRQ */
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_ALLOC_UCTX, 0, &uctx), ==,
                     SHCA_AQ_OK);
    upd = rdma_user_pd(&r, uctx);
    ucq = rdma_cq(&r, uctx, LOOP_CQ_LOG, &cqbuf);
    xsrq = xrc_srq(&r, uctx, upd, xrcdn, ucq);
    sq = guest_alloc(&r.h.alloc, 4096);
    rdma_qp_cmd(&r, &cmd, uctx, SHCA_QPT_RC, ucq, ucq, sq, 0);
    cmd.create_qp.pdn = cpu_to_le32(upd);
    cmd.create_qp.flags = SHCA_QP_F_SRQ;
    cmd.create_qp.srqn = cpu_to_le16(xsrq);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, &qpn), ==, SHCA_AQ_BAD_PARAM);

    /* the same QP with an ordinary SRQ of its context is created */
    srqbuf = guest_alloc(&r.h.alloc, 4096);
    qtest_memset(r.h.qts, srqbuf, 0, 4096);
    g_assert_cmpuint(srq_create_cmd(&r, uctx, upd, SRQ_LOG, 0, srqbuf, 1,
                                    &srqn), ==, SHCA_AQ_OK);
    cmd.create_qp.srqn = cpu_to_le16(srqn);
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, &qpn), ==, SHCA_AQ_OK);
    hca_stop(&r.h);
}

/*
 * A send QP reaches a target QP of the same port; each SEND lands in the
 * XRC SRQ it names and completes to that SRQ's CQ; a WRITE uses the
 * SRQ's PD; a SEND naming an SRQ that is not of the domain is refused.
 */
static void test_xrc(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    struct shca_aq_entry cmd;
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
    g_assert_cmpuint(xrc_srq_cmd(&r, xpd, xrcdn + 1, tcq, srqbuf, NULL), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(xrc_srq_cmd(&r, xpd, xrcdn, 999, srqbuf, NULL), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(xrc_srq_cmd(&r, xpd, xrcdn, tcq, srqbuf, &xsrq), ==,
                     SHCA_AQ_OK);
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

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/softhca/xrc/admin-checks", test_xrc_admin_checks);
    qtest_add_func("/softhca/xrc/send", test_xrc);

    return g_test_run();
}
