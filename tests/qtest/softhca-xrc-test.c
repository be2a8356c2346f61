/*
 * QTest testcase for the softhca RDMA adapter, driven with no guest: the
 * admin rules of XRC domains, XRC SRQs and target QPs (spec §13.5, §13.7).
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

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/softhca/xrc/admin-checks", test_xrc_admin_checks);

    return g_test_run();
}
