/*
 * QTest testcase for the softhca RDMA adapter, driven with no guest:
 * queue pairs: their creation checks, the QP state machine, flushing
 * and SQ drain.
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

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/softhca/qp/create-checks", test_qp_create_checks);
    qtest_add_func("/softhca/qp/modify-path", test_qp_modify_path);
    qtest_add_func("/softhca/qp/modify-illegal", test_qp_modify_illegal);
    qtest_add_func("/softhca/qp/flush", test_qp_flush);
    qtest_add_func("/softhca/qp/sqd", test_qp_sqd);

    return g_test_run();
}
