/*
 * QTest testcase for the softhca RDMA adapter, driven with no guest:
 * atomics, ATOMIC WRITE and FLUSH, and their effect on guest words
 * that the guest's own vCPUs share.
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

    qtest_add_func("/softhca/atomic/write-flush", test_atomic_write_flush);
    qtest_add_func("/softhca/atomic/guest-word-mapped",
                   test_atomic_guest_word_mapped);

    return g_test_run();
}
