/*
 * QTest testcase for the softhca RDMA adapter, driven with no guest:
 * completion queues: their creation checks, overrun and resizing.
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

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/softhca/cq/create-checks", test_cq_create_checks);
    qtest_add_func("/softhca/cq/overrun", test_cq_overrun);
    qtest_add_func("/softhca/cq/resize", test_cq_resize);

    return g_test_run();
}
