/*
 * QTest testcase for the softhca RDMA adapter, driven with no guest:
 * memory: MRs registered, re-registered and fast-registered, and
 * memory windows.
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

static void test_mr_reg(void)
{
    const uint32_t rw = SHCA_ACCESS_LOCAL_WRITE | SHCA_ACCESS_REMOTE_WRITE;
    struct shca_buf_desc d = { 0 };
    uint64_t data, list, l2, big, p;
    uint32_t key, key2, key3, key4;
    Rdma r;

    rdma_start(&r);
    data = guest_alloc(&r.h.alloc, 4 * 4096);
    list = guest_alloc(&r.h.alloc, 4096);

    /* DIRECT: 2 pages, 100 bytes in */
    buf_direct(&d, data, 2);
    g_assert_cmpuint(rdma_reg_mr(&r, rw, 0x10000, 8000, 100, &d, &key), ==,
                     SHCA_AQ_OK);
    g_assert_cmphex(key >> 8, ==, 1);
    /* the pages must cover first_offset + length */
    g_assert_cmpuint(rdma_reg_mr(&r, rw, 0x10000, 8100, 100, &d, &key2), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_reg_mr(&r, rw, 0x10000, 100, 4096, &d, &key2), ==,
                     SHCA_AQ_BAD_PARAM);
    /* access: remote write or atomic need local write; unknown bits */
    g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_REMOTE_WRITE, 0, 100, 0, &d,
                                 &key2), ==, SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_REMOTE_ATOMIC |
                                 SHCA_ACCESS_REMOTE_READ, 0, 100, 0, &d,
                                 &key2), ==, SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_reg_mr(&r, 1u << 7, 0, 100, 0, &d, &key2), ==,
                     SHCA_AQ_BAD_PARAM);
    /* length 0 of a PHYS MR (mr/zero-length), wrapping iova, too long */
    g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_PHYS | rw, 0, 0, 0, NULL,
                                 &key2), ==, SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_reg_mr(&r, rw, ~0ull - 10, 100, 0, &d, &key2), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_reg_mr(&r, rw, 0, 1ull << 41, 0, &d, &key2), ==,
                     SHCA_AQ_BAD_PARAM);
    /* DIRECT and LIST2 together */
    d.flags = SHCA_BUF_DIRECT | SHCA_BUF_LIST2;
    g_assert_cmpuint(rdma_reg_mr(&r, rw, 0, 100, 0, &d, &key2), ==,
                     SHCA_AQ_BAD_PARAM);

    /* one-level list of 3 pages; then a bad page in it */
    qtest_writeq(r.h.qts, list, data + 3 * 4096);
    qtest_writeq(r.h.qts, list + 8, data);
    qtest_writeq(r.h.qts, list + 16, data + 4096);
    d = (struct shca_buf_desc) {
        .addr = cpu_to_le64(list), .npages = cpu_to_le32(3), .page_shift = 12,
    };
    g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_REMOTE_READ, 0, 3 * 4096, 0,
                                 &d, &key2), ==, SHCA_AQ_OK);
    g_assert_cmphex(key2 >> 8, ==, 2);
    qtest_writeq(r.h.qts, list + 8, RAM_TOP);
    g_assert_cmpuint(rdma_reg_mr(&r, 0, 0, 100, 0, &d, &key3), ==,
                     SHCA_AQ_BAD_ADDR);
    qtest_writeq(r.h.qts, list + 8, data + 8);
    g_assert_cmpuint(rdma_reg_mr(&r, 0, 0, 100, 0, &d, &key3), ==,
                     SHCA_AQ_BAD_ADDR);
    qtest_writeq(r.h.qts, list + 8, 0xfee00000);
    g_assert_cmpuint(rdma_reg_mr(&r, 0, 0, 100, 0, &d, &key3), ==,
                     SHCA_AQ_BAD_ADDR);
    /* a one-level list holds at most 512 pages */
    d.npages = cpu_to_le32(513);
    g_assert_cmpuint(rdma_reg_mr(&r, 0, 0, 100, 0, &d, &key3), ==,
                     SHCA_AQ_BAD_PARAM);

    /* LIST2: 600 pages in two list pages (512 + 88) */
    big = guest_alloc(&r.h.alloc, 600 * 4096);
    l2 = guest_alloc(&r.h.alloc, 2 * 4096);
    qtest_writeq(r.h.qts, list, l2);
    qtest_writeq(r.h.qts, list + 8, l2 + 4096);
    for (p = 0; p < 600; p++) {
        qtest_writeq(r.h.qts, l2 + p * 8, big + p * 4096);
    }
    d = (struct shca_buf_desc) {
        .addr = cpu_to_le64(list), .npages = cpu_to_le32(600),
        .page_shift = 12, .flags = SHCA_BUF_LIST2,
    };
    g_assert_cmpuint(rdma_reg_mr(&r, rw, 0x1000, 600 * 4096, 0, &d, &key3),
                     ==, SHCA_AQ_OK);
    g_assert_cmphex(key3 >> 8, ==, 3);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEREG_MR, key3, NULL), ==,
                     SHCA_AQ_OK);
    /* a bad page in the second list page, a list page outside RAM */
    qtest_writeq(r.h.qts, l2 + 550 * 8, RAM_TOP + 4096);
    g_assert_cmpuint(rdma_reg_mr(&r, rw, 0, 100, 0, &d, &key3), ==,
                     SHCA_AQ_BAD_ADDR);
    qtest_writeq(r.h.qts, l2 + 550 * 8, big + 550 * 4096);
    qtest_writeq(r.h.qts, list + 8, RAM_TOP);
    g_assert_cmpuint(rdma_reg_mr(&r, rw, 0, 100, 0, &d, &key3), ==,
                     SHCA_AQ_BAD_ADDR);
    /* more than 512 x 512 pages */
    d.npages = cpu_to_le32(512 * 512 + 1);
    g_assert_cmpuint(rdma_reg_mr(&r, rw, 0, 100, 0, &d, &key3), ==,
                     SHCA_AQ_BAD_PARAM);

    /* PHYS: no pages */
    g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_PHYS | rw, 0, RAM_TOP, 0,
                                 NULL, &key3), ==, SHCA_AQ_OK);
    g_assert_cmphex(key3 >> 8, ==, 3);
    buf_direct(&d, data, 1);
    g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_PHYS, 0, 100, 0, &d, &key4),
                     ==, SHCA_AQ_BAD_PARAM);
    /* guest-physical MRs are the kernel's: not on a user context's PD */
    {
        uint32_t uctx, kpd = r.pd;

        g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_ALLOC_UCTX, 0, &uctx), ==,
                         SHCA_AQ_OK);
        r.pd = rdma_user_pd(&r, uctx);
        g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_PHYS | rw, 0, RAM_TOP,
                                     0, NULL, &key4), ==, SHCA_AQ_BAD_PARAM);
        g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_FAST_REG, 0, 0, 0, &d,
                                     &key4), ==, SHCA_AQ_BAD_PARAM);
        r.pd = kpd;
    }

    /* the index is reused with another tag; old keys are dead */
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEREG_MR, key2, NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEREG_MR, key2, NULL), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(rdma_reg_mr(&r, 0, 0, 100, 0, &d, &key4), ==,
                     SHCA_AQ_OK);
    g_assert_cmphex(key4 >> 8, ==, 2);
    g_assert_cmphex(key4, !=, key2);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEREG_MR, key2, NULL), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEREG_MR, key ^ 1, NULL), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEREG_MR, 0, NULL), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEREG_MR, 0xffffffff, NULL),
                     ==, SHCA_AQ_BAD_HANDLE);
    /* a PD with MRs stays; another PD's number is not ours */
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEALLOC_PD, r.pd, NULL), ==,
                     SHCA_AQ_BUSY);
    r.pd = 99;
    g_assert_cmpuint(rdma_reg_mr(&r, 0, 0, 100, 0, &d, &key3), ==,
                     SHCA_AQ_BAD_HANDLE);
    r.pd = 1;
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEREG_MR, key, NULL), ==,
                     SHCA_AQ_OK);
    hca_stop(&r.h);
}

/*
 * A PHYS MR names guest-physical addresses, but only RAM is memory: an
 * access that lands on MMIO (the device's own BAR here) fails its WQE, and
 * the register there never sees it, read or written.
 */
static void test_mr_phys_mmio(void)
{
    const uint32_t rw = SHCA_ACCESS_PHYS | SHCA_ACCESS_LOCAL_WRITE |
                        SHCA_ACCESS_REMOTE_READ;
    struct shca_send_wqe w;
    struct shca_sge sge;
    uint64_t bar0, buf;
    uint32_t key, mac_lo, mac_hi;
    Rdma r;
    Loop l;

    rdma_start(&r);
    loop_start(&r, &l, SHCA_QPT_RC, 7);
    l.access = SHCA_ACCESS_REMOTE_READ;
    bar0 = qpci_config_readl(r.h.dev, PCI_BASE_ADDRESS_0) & ~0xfull;
    buf = guest_alloc(&r.h.alloc, 4096);
    qtest_memset(r.h.qts, buf, 0x5a, 4096);
    g_assert_cmpuint(rdma_reg_mr(&r, rw, 0, 1ull << 32, 0, NULL, &key), ==,
                     SHCA_AQ_OK);
    mac_lo = rd(&r.h, SHCA_REG_MAC_LO);
    mac_hi = rd(&r.h, SHCA_REG_MAC_HI);

    /* a WRITE gathering from the BAR: the read is refused */
    w = (struct shca_send_wqe) {
        .wr_id = cpu_to_le64(0xc1), .opcode = SHCA_WR_RDMA_WRITE,
        .flags = SHCA_WQE_SIGNALED, .num_sge = 1,
        .remote_addr = cpu_to_le64(buf + 2048), .rkey = cpu_to_le32(key),
    };
    sge = (struct shca_sge) {
        .addr = cpu_to_le64(bar0 + SHCA_REG_MAC_LO),
        .length = cpu_to_le32(8), .lkey = cpu_to_le32(key),
    };
    check_bad_send(&r, &l, &w, &sge, sizeof(sge), SHCA_CQE_LOC_PROT_ERR);
    /* a READ scattering its response onto the BAR: the write is refused */
    w.wr_id = cpu_to_le64(0xc2);
    w.opcode = SHCA_WR_RDMA_READ;
    w.remote_addr = cpu_to_le64(buf);
    check_bad_send(&r, &l, &w, &sge, sizeof(sge), SHCA_CQE_LOC_PROT_ERR);
    g_assert_cmphex(rd(&r.h, SHCA_REG_MAC_LO), ==, mac_lo);
    g_assert_cmphex(rd(&r.h, SHCA_REG_MAC_HI), ==, mac_hi);
    hca_stop(&r.h);
}

/* Fast registration (spec §18) on a loop RC QP of the kernel. */
typedef union FastWqe {
    struct shca_send_wqe send;
    struct shca_fast_reg_wqe reg;
    struct shca_bind_mw_wqe bind;
} FastWqe;

#define FR_IOVA     0x7654321000ull

/* A fast-registration MR of up to npages pages, its list page at list. */
static uint8_t rdma_reg_fast(Rdma *r, uint64_t list, uint32_t npages,
                             uint32_t access, uint32_t *key)
{
    struct shca_buf_desc d;

    buf_direct(&d, list, npages);
    return rdma_reg_mr(r, SHCA_ACCESS_FAST_REG | access, 0, 0, 0, &d, key);
}

static void fr_post_reg(Rdma *r, Loop *l, uint16_t i, uint32_t key,
                        uint32_t npages, uint64_t length)
{
    FastWqe w = { .reg = {
        .wr_id = cpu_to_le64(0xf000 + i),
        .opcode = SHCA_WR_REG_MR,
        .flags = SHCA_WQE_SIGNALED,
        .page_shift = 12,
        .access = cpu_to_le32(SHCA_ACCESS_LOCAL_WRITE |
                              SHCA_ACCESS_REMOTE_WRITE),
        .iova = cpu_to_le64(FR_IOVA + 0x100),
        .length = cpu_to_le64(length),
        .key = cpu_to_le32(key),
        .npages = cpu_to_le32(npages),
    } };

    loop_write_send(r, l, i, &w.send, NULL, 0);
}

/* The same at the fast-registration MR's iova. */
static void fr_post_op(Rdma *r, Loop *l, uint16_t i, uint8_t opcode,
                       uint32_t rkey, uint64_t src, uint32_t len)
{
    loop_post_op(r, l, i, opcode, rkey, FR_IOVA + 0x100, src, len);
}

static void fr_check_cqe(Rdma *r, Loop *l, uint16_t i, uint8_t status,
                         uint8_t opcode)
{
    struct shca_cqe cqe = loop_send_cqe(r, l);

    g_assert_cmpuint(cqe.status, ==, status);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0xf000 + i);
    if (status == SHCA_CQE_SUCCESS) {
        g_assert_cmphex(cqe.opcode, ==, opcode);
    }
}

/*
 * A request the responder refuses (bad key: remote access NAK; bad
 * SEND_INV: invalid request NAK).  The loop QP is its own responder, so
 * it goes to ERR and the request's WQE is flushed before the NAK returns.
 */
static void fr_check_refused(Rdma *r, Loop *l, uint16_t i, uint64_t *naks)
{
    uint64_t stats[SHCA_STAT_COUNT];

    fr_check_cqe(r, l, i, SHCA_CQE_WR_FLUSH_ERR, 0);
    g_assert_cmpuint(rdma_state(r, l->qpn), ==, SHCA_QPS_ERR);
    rdma_stats(r, stats);
    g_assert_cmpuint(stats[SHCA_STAT_NAKS_SENT], ==, ++*naks);
}

static void test_fast_reg(void)
{
    uint64_t naks = 0;
    g_autofree char *netdev = dgram_loop_netdev();
    const uint32_t len = 5000;
    uint8_t data[5000], got[5000];
    uint64_t list, pg[2], src, rx;
    struct shca_cqe cqe;
    uint32_t key, key2;
    Rdma r;
    Loop l;

    rdma_start_with(&r, netdev);
    loop_start(&r, &l, SHCA_QPT_RC, 7);
    loop_connect(&r, &l, false);
    list = guest_alloc(&r.h.alloc, 4096);
    pg[0] = guest_alloc(&r.h.alloc, 4096);
    guest_alloc(&r.h.alloc, 4096);      /* the pages are not contiguous */
    pg[1] = guest_alloc(&r.h.alloc, 4096);
    src = guest_alloc(&r.h.alloc, 8192);
    rx = guest_alloc(&r.h.alloc, 4096);
    for (size_t i = 0; i < sizeof(data); i++) {
        data[i] = i * 5 + 3;
    }
    qtest_memwrite(r.h.qts, src, data, sizeof(data));
    qtest_writeq(r.h.qts, list, cpu_to_le64(pg[0]));
    qtest_writeq(r.h.qts, list + 8, cpu_to_le64(pg[1]));

    /* REG_MR command: no range, no other rights, a one-page list */
    g_assert_cmpuint(rdma_reg_fast(&r, list, 513, 0, &key), ==,
                     SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_reg_fast(&r, list, 4, SHCA_ACCESS_REMOTE_READ,
                                   &key), ==, SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_reg_fast(&r, RAM_TOP, 4, 0, &key), ==,
                     SHCA_AQ_BAD_ADDR);
    g_assert_cmpuint(rdma_reg_fast(&r, list, 4, 0, &key), ==, SHCA_AQ_OK);

    /* invalid until registered: a WRITE through it fails */
    fr_post_op(&r, &l, 0, SHCA_WR_RDMA_WRITE, key, src, 16);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    fr_check_refused(&r, &l, 0, &naks);
    loop_connect(&r, &l, false);

    /* REG_MR with a new tag, then a WRITE through it, in one batch */
    key = (key & ~0xffu) | ((key + 0x11) & 0xff);
    fr_post_reg(&r, &l, 0, key, 2, len);
    fr_post_op(&r, &l, 1, SHCA_WR_RDMA_WRITE, key, src, len);
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_SUCCESS, SHCA_CQE_OP_REG_MR);
    fr_check_cqe(&r, &l, 1, SHCA_CQE_SUCCESS, SHCA_CQE_OP_RDMA_WRITE);
    qtest_memread(r.h.qts, pg[0] + 0x100, got, 4096 - 0x100);
    qtest_memread(r.h.qts, pg[1], got + 4096 - 0x100, len - 4096 + 0x100);
    g_assert(memcmp(got, data, len) == 0);

    /* valid already: REG_MR refused, QP to ERR */
    fr_post_reg(&r, &l, 2, key, 2, len);
    rdma_db(&r, 0, SHCA_DB_SQ, 3 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 2, SHCA_CQE_LOC_PROT_ERR, 0);
    g_assert_cmpuint(rdma_state(&r, l.qpn), ==, SHCA_QPS_ERR);
    loop_connect(&r, &l, false);

    /* LOCAL_INV; then the same WRITE fails; LOCAL_INV again fails */
    fr_post_op(&r, &l, 0, SHCA_WR_LOCAL_INV, key, 0, 0);
    fr_post_op(&r, &l, 1, SHCA_WR_RDMA_WRITE, key, src, 16);
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_SUCCESS, SHCA_CQE_OP_LOCAL_INV);
    fr_check_refused(&r, &l, 1, &naks);
    loop_connect(&r, &l, false);
    fr_post_op(&r, &l, 0, SHCA_WR_LOCAL_INV, key, 0, 0);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_LOC_PROT_ERR, 0);

    /* bad REG_MRs: another index, pages that do not cover the range */
    loop_connect(&r, &l, false);
    fr_post_reg(&r, &l, 0, key + 0x100, 2, len);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_LOC_PROT_ERR, 0);
    loop_connect(&r, &l, false);
    fr_post_reg(&r, &l, 0, key, 1, len);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_LOC_PROT_ERR, 0);

    /* SEND_INV invalidates at the responder, reported WITH_INV */
    loop_connect(&r, &l, false);
    key2 = (key & ~0xffu) | ((key + 1) & 0xff);
    fr_post_reg(&r, &l, 0, key2, 2, len);
    fr_post_op(&r, &l, 1, SHCA_WR_SEND_INV, key2, src, 16);
    loop_recv(&r, &l, 0, 0x1234, rx, 4096);
    rdma_db(&r, 0, SHCA_DB_RQ, 1 << 16 | l.qpn);
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_SUCCESS, SHCA_CQE_OP_REG_MR);
    fr_check_cqe(&r, &l, 1, SHCA_CQE_SUCCESS, SHCA_CQE_OP_SEND);
    cqe = loop_recv_cqe(&r, &l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmphex(cqe.flags, ==, SHCA_CQE_WITH_INV);
    g_assert_cmphex(le32_to_cpu(cqe.imm), ==, key2);
    fr_post_op(&r, &l, 2, SHCA_WR_RDMA_WRITE, key2, src, 16);
    rdma_db(&r, 0, SHCA_DB_SQ, 3 << 16 | l.qpn);
    fr_check_refused(&r, &l, 2, &naks);

    /* SEND_INV of a key that is not a valid fast-registration MR */
    loop_connect(&r, &l, false);
    loop_recv(&r, &l, 0, 0x1235, rx, 4096);
    rdma_db(&r, 0, SHCA_DB_RQ, 1 << 16 | l.qpn);
    fr_post_op(&r, &l, 0, SHCA_WR_SEND_INV, l.key, src, 16);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    fr_check_refused(&r, &l, 0, &naks);

    /*
     * deregistration in either state, by index: the MR's key is key2 now,
     * its first key (another tag) names it too
     */
    g_assert_cmphex(key, !=, key2);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEREG_MR, key, NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEREG_MR, key2, NULL), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&r.h);
}

static uint8_t rdma_alloc_mw(Rdma *r, uint32_t pdn, uint8_t type,
                             uint32_t *key)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_ALLOC_MW };

    cmd.alloc_mw.pdn = cpu_to_le32(pdn);
    cmd.alloc_mw.type = type;
    return hca_cmd(&r->h, &cmd, key);
}

static void mw_post_bind(Rdma *r, Loop *l, uint16_t i, uint32_t mw_key,
                         uint32_t new_key, uint32_t mr_key, uint64_t addr,
                         uint64_t length)
{
    FastWqe w = { .bind = {
        .wr_id = cpu_to_le64(0xf000 + i),
        .opcode = SHCA_WR_BIND_MW,
        .flags = SHCA_WQE_SIGNALED,
        .mw_key = cpu_to_le32(mw_key),
        .new_key = cpu_to_le32(new_key),
        .mr_key = cpu_to_le32(mr_key),
        .access = cpu_to_le32(length ? SHCA_ACCESS_REMOTE_WRITE : 0),
        .addr = cpu_to_le64(addr),
        .length = cpu_to_le64(length),
    } };

    loop_write_send(r, l, i, &w.send, NULL, 0);
}

/* The key with the next tag, as software picks it for a bind. */
static uint32_t key_next_tag(uint32_t key)
{
    return (key & ~0xffu) | ((key + 1) & 0xff);
}

/*
 * Windows of both types on a loop RC QP: unbound a key grants nothing;
 * bound it grants its range and rights only; bad binds fail with
 * MW_BIND_ERR; type 1 unbinds by a bind of length 0, type 2 by LOCAL_INV
 * or by a SEND_INV on its QP; an MR with windows bound stays registered.
 */
static void test_mw(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    uint8_t data[64], got[64];
    uint64_t naks = 0, buf, src, rx;
    uint32_t mr, plain, ro, mw1, mw2, k1, k2, junk;
    struct shca_cqe cqe;
    Rdma r;
    Loop l;

    rdma_start_with(&r, netdev);
    g_assert_cmphex(rd(&r.h, SHCA_REG_CAPS) & SHCA_CAP_MW, ==, SHCA_CAP_MW);
    loop_start(&r, &l, SHCA_QPT_RC, 7);
    loop_connect(&r, &l, false);
    buf = guest_alloc(&r.h.alloc, 8192);
    src = guest_alloc(&r.h.alloc, 4096);
    rx = guest_alloc(&r.h.alloc, 4096);
    memset(data, 0x6d, sizeof(data));
    qtest_memwrite(r.h.qts, src, data, sizeof(data));
    g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_PHYS |
                                 SHCA_ACCESS_LOCAL_WRITE | SHCA_ACCESS_MW_BIND,
                                 0, RAM_TOP, 0, NULL, &mr), ==, SHCA_AQ_OK);
    g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_PHYS |
                                 SHCA_ACCESS_LOCAL_WRITE, 0, RAM_TOP, 0, NULL,
                                 &plain), ==, SHCA_AQ_OK);
    g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_PHYS | SHCA_ACCESS_MW_BIND,
                                 0, RAM_TOP, 0, NULL, &ro), ==, SHCA_AQ_OK);

    /* ALLOC_MW: a type, a PD; windows and MRs are freed by their own */
    g_assert_cmpuint(rdma_alloc_mw(&r, r.pd, 3, &junk), ==, SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_alloc_mw(&r, 99, 1, &junk), ==, SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(rdma_alloc_mw(&r, r.pd, 1, &mw1), ==, SHCA_AQ_OK);
    g_assert_cmpuint(rdma_alloc_mw(&r, r.pd, 2, &mw2), ==, SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEALLOC_MW, plain, NULL), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEREG_MR, mw1, NULL), ==,
                     SHCA_AQ_BAD_HANDLE);

    /* unbound: a WRITE through it is refused */
    loop_post_op(&r, &l, 0, SHCA_WR_RDMA_WRITE, mw1, buf, src, 64);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    fr_check_refused(&r, &l, 0, &naks);

    /* type 1 bound to buf .. buf + 4096 for WRITE, in one batch with one */
    loop_connect(&r, &l, false);
    k1 = key_next_tag(mw1);
    mw_post_bind(&r, &l, 0, mw1, k1, mr, buf, 4096);
    loop_post_op(&r, &l, 1, SHCA_WR_RDMA_WRITE, k1, buf + 100, src, 64);
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_SUCCESS, SHCA_CQE_OP_BIND_MW);
    fr_check_cqe(&r, &l, 1, SHCA_CQE_SUCCESS, SHCA_CQE_OP_RDMA_WRITE);
    qtest_memread(r.h.qts, buf + 100, got, sizeof(got));
    g_assert(memcmp(got, data, sizeof(got)) == 0);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEREG_MR, mr, NULL), ==,
                     SHCA_AQ_BUSY);
    /* past its end, a right it lacks, its old key */
    loop_post_op(&r, &l, 2, SHCA_WR_RDMA_WRITE, k1, buf + 4096 - 8, src, 64);
    rdma_db(&r, 0, SHCA_DB_SQ, 3 << 16 | l.qpn);
    fr_check_refused(&r, &l, 2, &naks);
    loop_connect(&r, &l, false);
    loop_post_op(&r, &l, 0, SHCA_WR_RDMA_READ, k1, buf, rx, 16);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    fr_check_refused(&r, &l, 0, &naks);
    loop_connect(&r, &l, false);
    loop_post_op(&r, &l, 0, SHCA_WR_RDMA_WRITE, mw1, buf, src, 16);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    fr_check_refused(&r, &l, 0, &naks);

    /*
     * An MR without MW_BIND, one without the LOCAL_WRITE that a window's
     * REMOTE_WRITE needs, a range past the MR: MW_BIND_ERR, ERR
     */
    loop_connect(&r, &l, false);
    mw_post_bind(&r, &l, 0, k1, key_next_tag(k1), plain, buf, 4096);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_MW_BIND_ERR, 0);
    g_assert_cmpuint(rdma_state(&r, l.qpn), ==, SHCA_QPS_ERR);
    loop_connect(&r, &l, false);
    mw_post_bind(&r, &l, 0, k1, key_next_tag(k1), ro, buf, 4096);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_MW_BIND_ERR, 0);
    loop_connect(&r, &l, false);
    mw_post_bind(&r, &l, 0, k1, key_next_tag(k1), mr, RAM_TOP - 8, 4096);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_MW_BIND_ERR, 0);

    /* type 1: a bind of length 0 unbinds; LOCAL_INV is not for type 1 */
    loop_connect(&r, &l, false);
    mw_post_bind(&r, &l, 0, k1, key_next_tag(k1), mr, 0, 0);
    k1 = key_next_tag(k1);
    loop_post_op(&r, &l, 1, SHCA_WR_RDMA_WRITE, k1, buf, src, 16);
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_SUCCESS, SHCA_CQE_OP_BIND_MW);
    fr_check_refused(&r, &l, 1, &naks);
    loop_connect(&r, &l, false);
    loop_post_op(&r, &l, 0, SHCA_WR_LOCAL_INV, k1, 0, 0, 0);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_LOC_PROT_ERR, 0);

    /* type 2: bound once; LOCAL_INV unbinds it */
    loop_connect(&r, &l, false);
    k2 = key_next_tag(mw2);
    mw_post_bind(&r, &l, 0, mw2, k2, mr, buf, 4096);
    loop_post_op(&r, &l, 1, SHCA_WR_RDMA_WRITE, k2, buf, src, 64);
    mw_post_bind(&r, &l, 2, k2, key_next_tag(k2), mr, buf, 4096);
    rdma_db(&r, 0, SHCA_DB_SQ, 3 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_SUCCESS, SHCA_CQE_OP_BIND_MW);
    fr_check_cqe(&r, &l, 1, SHCA_CQE_SUCCESS, SHCA_CQE_OP_RDMA_WRITE);
    fr_check_cqe(&r, &l, 2, SHCA_CQE_MW_BIND_ERR, 0);
    loop_connect(&r, &l, false);
    loop_post_op(&r, &l, 0, SHCA_WR_LOCAL_INV, k2, 0, 0, 0);
    loop_post_op(&r, &l, 1, SHCA_WR_RDMA_WRITE, k2, buf, src, 16);
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_SUCCESS, SHCA_CQE_OP_LOCAL_INV);
    fr_check_refused(&r, &l, 1, &naks);

    /* SEND_INV on the QP it is associated with unbinds it, WITH_INV */
    loop_connect(&r, &l, false);
    mw_post_bind(&r, &l, 0, k2, key_next_tag(k2), mr, buf, 4096);
    k2 = key_next_tag(k2);
    loop_post_op(&r, &l, 1, SHCA_WR_SEND_INV, k2, 0, src, 16);
    loop_recv(&r, &l, 0, 0x1236, rx, 4096);
    rdma_db(&r, 0, SHCA_DB_RQ, 1 << 16 | l.qpn);
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_SUCCESS, SHCA_CQE_OP_BIND_MW);
    fr_check_cqe(&r, &l, 1, SHCA_CQE_SUCCESS, SHCA_CQE_OP_SEND);
    cqe = loop_recv_cqe(&r, &l);
    g_assert_cmpuint(cqe.status, ==, SHCA_CQE_SUCCESS);
    g_assert_cmphex(cqe.flags, ==, SHCA_CQE_WITH_INV);
    g_assert_cmphex(le32_to_cpu(cqe.imm), ==, k2);
    loop_post_op(&r, &l, 2, SHCA_WR_RDMA_WRITE, k2, buf, src, 16);
    rdma_db(&r, 0, SHCA_DB_SQ, 3 << 16 | l.qpn);
    fr_check_refused(&r, &l, 2, &naks);

    /* no window bound any more: the MR goes; the windows by index */
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEREG_MR, mr, NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEALLOC_MW, mw1, NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEALLOC_MW, mw2, NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEALLOC_MW, mw2, NULL), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmphex(rd(&r.h, SHCA_REG_STATUS), ==, SHCA_STATUS_RDY);
    hca_stop(&r.h);
}

static uint8_t rdma_rereg_mr(Rdma *r, uint32_t key, uint32_t pdn,
                             uint32_t access, uint64_t iova,
                             const struct shca_buf_desc *pages)
{
    struct shca_aq_entry cmd = { .opcode = SHCA_AQ_REREG_MR };

    cmd.rereg_mr.key = cpu_to_le32(key);
    cmd.rereg_mr.mr.pdn = cpu_to_le32(pdn);
    cmd.rereg_mr.mr.access = cpu_to_le32(access);
    cmd.rereg_mr.mr.iova = cpu_to_le64(iova);
    cmd.rereg_mr.mr.length = cpu_to_le64(4096);
    if (pages) {
        cmd.rereg_mr.mr.pages = *pages;
    }
    return hca_cmd(&r->h, &cmd, NULL);
}

/* A signaled WRITE of 64 bytes of src through key at iova: ok or refused. */
static void rereg_write(Rdma *r, Loop *l, uint32_t key, uint64_t iova,
                        uint64_t src, bool ok, uint64_t *naks)
{
    loop_connect(r, l, false);
    loop_post_op(r, l, 0, SHCA_WR_RDMA_WRITE, key, iova, src, 64);
    rdma_db(r, 0, SHCA_DB_SQ, 1 << 16 | l->qpn);
    if (ok) {
        fr_check_cqe(r, l, 0, SHCA_CQE_SUCCESS, SHCA_CQE_OP_RDMA_WRITE);
    } else {
        fr_check_refused(r, l, 0, naks);
    }
}

/*
 * REREG_MR (spec §13.3): the key stays, the pages, access and PD change;
 * a refused one changes nothing; bound windows keep the MR as it is.
 */
static void test_mr_rereg(void)
{
    const uint32_t rw = SHCA_ACCESS_LOCAL_WRITE | SHCA_ACCESS_REMOTE_WRITE |
                        SHCA_ACCESS_MW_BIND;
    g_autofree char *netdev = dgram_loop_netdev();
    struct shca_buf_desc px, py;
    uint64_t naks = 0, x, y, src;
    uint8_t data[64], got[64];
    uint32_t key, uctx, upd, pd2, mw;
    Rdma r;
    Loop l;

    rdma_start_with(&r, netdev);
    g_assert_cmphex(rd(&r.h, SHCA_REG_CAPS) & SHCA_CAP_REREG_MR, ==,
                    SHCA_CAP_REREG_MR);
    loop_start(&r, &l, SHCA_QPT_RC, 7);
    x = guest_alloc(&r.h.alloc, 4096);
    y = guest_alloc(&r.h.alloc, 4096);
    src = guest_alloc(&r.h.alloc, 4096);
    qtest_memset(r.h.qts, x, 0, 4096);
    qtest_memset(r.h.qts, y, 0, 4096);
    memset(data, 0x3c, sizeof(data));
    qtest_memwrite(r.h.qts, src, data, sizeof(data));
    buf_direct(&px, x, 1);
    buf_direct(&py, y, 1);
    g_assert_cmpuint(rdma_reg_mr(&r, rw, 0x10000, 4096, 0, &px, &key), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_ALLOC_UCTX, 0, &uctx), ==,
                     SHCA_AQ_OK);
    upd = rdma_user_pd(&r, uctx);
    pd2 = rdma_user_pd(&r, 0);
    g_assert_cmpuint(upd, !=, 0);
    g_assert_cmpuint(pd2, !=, 0);

    /* refused, each for one reason */
    g_assert_cmpuint(rdma_rereg_mr(&r, key_next_tag(key), r.pd, rw, 0, &py),
                     ==, SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(rdma_rereg_mr(&r, l.key, r.pd, rw, 0, &py), ==,
                     SHCA_AQ_BAD_HANDLE);   /* PHYS */
    g_assert_cmpuint(rdma_rereg_mr(&r, key, 999, rw, 0, &py), ==,
                     SHCA_AQ_BAD_HANDLE);
    g_assert_cmpuint(rdma_rereg_mr(&r, key, upd, rw, 0, &py), ==,
                     SHCA_AQ_BAD_PARAM);    /* another context's PD */
    g_assert_cmpuint(rdma_rereg_mr(&r, key, r.pd, rw | SHCA_ACCESS_PHYS, 0,
                                   NULL), ==, SHCA_AQ_BAD_PARAM);
    g_assert_cmpuint(rdma_rereg_mr(&r, key, r.pd, SHCA_ACCESS_REMOTE_WRITE,
                                   0, &py), ==, SHCA_AQ_BAD_PARAM);
    py.npages = 0;
    g_assert_cmpuint(rdma_rereg_mr(&r, key, r.pd, rw, 0, &py), ==,
                     SHCA_AQ_BAD_PARAM);    /* pages too few */
    py.npages = cpu_to_le32(1);
    py.addr = cpu_to_le64(RAM_TOP);
    g_assert_cmpuint(rdma_rereg_mr(&r, key, r.pd, rw, 0, &py), ==,
                     SHCA_AQ_BAD_ADDR);
    buf_direct(&py, y, 1);
    rereg_write(&r, &l, key, 0x10000 + 100, src, true, &naks);
    qtest_memread(r.h.qts, x + 100, got, sizeof(got));
    g_assert(memcmp(got, data, sizeof(got)) == 0);

    /* new pages at a new iova, same key */
    g_assert_cmpuint(rdma_rereg_mr(&r, key, r.pd, rw, 0x20000, &py), ==,
                     SHCA_AQ_OK);
    rereg_write(&r, &l, key, 0x10000 + 200, src, false, &naks);
    rereg_write(&r, &l, key, 0x20000 + 200, src, true, &naks);
    qtest_memread(r.h.qts, y + 200, got, sizeof(got));
    g_assert(memcmp(got, data, sizeof(got)) == 0);
    qtest_memread(r.h.qts, x + 200, got, sizeof(got));
    g_assert_cmpuint(got[0], ==, 0);

    /* access without REMOTE_WRITE; then another PD of the context */
    g_assert_cmpuint(rdma_rereg_mr(&r, key, r.pd, SHCA_ACCESS_LOCAL_WRITE,
                                   0x20000, &py), ==, SHCA_AQ_OK);
    rereg_write(&r, &l, key, 0x20000, src, false, &naks);
    g_assert_cmpuint(rdma_rereg_mr(&r, key, pd2, rw, 0x20000, &py), ==,
                     SHCA_AQ_OK);
    rereg_write(&r, &l, key, 0x20000, src, false, &naks);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEALLOC_PD, pd2, NULL), ==,
                     SHCA_AQ_BUSY);
    g_assert_cmpuint(rdma_rereg_mr(&r, key, r.pd, rw, 0x20000, &py), ==,
                     SHCA_AQ_OK);
    rereg_write(&r, &l, key, 0x20000, src, true, &naks);

    /* a bound window keeps the MR as it is until it is unbound */
    g_assert_cmpuint(rdma_alloc_mw(&r, r.pd, 1, &mw), ==, SHCA_AQ_OK);
    loop_connect(&r, &l, false);
    mw_post_bind(&r, &l, 0, mw, key_next_tag(mw), key, 0x20000, 4096);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 0, SHCA_CQE_SUCCESS, SHCA_CQE_OP_BIND_MW);
    g_assert_cmpuint(rdma_rereg_mr(&r, key, r.pd, rw, 0x10000, &px), ==,
                     SHCA_AQ_BUSY);
    mw_post_bind(&r, &l, 1, key_next_tag(mw), key_next_tag(key_next_tag(mw)),
                 key, 0, 0);
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | l.qpn);
    fr_check_cqe(&r, &l, 1, SHCA_CQE_SUCCESS, SHCA_CQE_OP_BIND_MW);
    g_assert_cmpuint(rdma_rereg_mr(&r, key, r.pd, rw, 0x10000, &px), ==,
                     SHCA_AQ_OK);
    rereg_write(&r, &l, key, 0x10000, src, true, &naks);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEREG_MR, key, NULL), ==,
                     SHCA_AQ_OK);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEALLOC_PD, pd2, NULL), ==,
                     SHCA_AQ_OK);
    hca_stop(&r.h);
}

/*
 * Issue 25, defect 5: REG_MR of 0 bytes was refused, where verbs allow it
 * and rxe and mlx5 register one.  With CAPS.ZERO_LENGTH_MR the MR is made
 * (its page still covers first_offset) and grants 0-byte accesses at its
 * iova only; a PHYS MR of 0 bytes is still refused.
 */
static void test_mr_zero_length(void)
{
    g_autofree char *netdev = dgram_loop_netdev();
    struct shca_buf_desc d;
    struct shca_aq_entry cmd;
    uint32_t key, junk;
    uint64_t page;
    Rdma r;
    Loop a, b;

    rdma_start_with(&r, netdev);
    g_assert_cmphex(rd(&r.h, SHCA_REG_CAPS) & SHCA_CAP_ZERO_LENGTH_MR, ==,
                    SHCA_CAP_ZERO_LENGTH_MR);
    page = guest_alloc(&r.h.alloc, 4096);
    buf_direct(&d, page, 1);
    g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_LOCAL_WRITE |
                                 SHCA_ACCESS_REMOTE_WRITE, 0x5064, 0, 100, &d,
                                 &key), ==, SHCA_AQ_OK);
    g_assert_cmpuint(rdma_reg_mr(&r, SHCA_ACCESS_PHYS |
                                 SHCA_ACCESS_LOCAL_WRITE, 0, 0, 0, NULL,
                                 &junk), ==, SHCA_AQ_BAD_PARAM);
    /* REREG_MR to 0 bytes as well */
    cmd = (struct shca_aq_entry) { .opcode = SHCA_AQ_REREG_MR };
    cmd.rereg_mr.key = cpu_to_le32(key);
    cmd.rereg_mr.mr.pdn = cpu_to_le32(r.pd);
    cmd.rereg_mr.mr.access = cpu_to_le32(SHCA_ACCESS_LOCAL_WRITE |
                                         SHCA_ACCESS_REMOTE_WRITE);
    cmd.rereg_mr.mr.iova = cpu_to_le64(0x5064);
    cmd.rereg_mr.mr.first_offset = cpu_to_le32(100);
    cmd.rereg_mr.mr.pages = d;
    g_assert_cmpuint(hca_cmd(&r.h, &cmd, NULL), ==, SHCA_AQ_OK);

    /* a writes into it through b: 0 bytes at iova, then 1 byte */
    loop_start(&r, &a, SHCA_QPT_RC, 7);
    loop_start(&r, &b, SHCA_QPT_RC, 7);
    loop_pair(&r, &a, &b);
    loop_post_op(&r, &a, 0, SHCA_WR_RDMA_WRITE, key, 0x5064, 0, 0);
    rdma_db(&r, 0, SHCA_DB_SQ, 1 << 16 | a.qpn);
    g_assert_cmpuint(loop_send_cqe(&r, &a).status, ==, SHCA_CQE_SUCCESS);
    loop_post_op(&r, &a, 1, SHCA_WR_RDMA_WRITE, key, 0x5064, page, 1);
    rdma_db(&r, 0, SHCA_DB_SQ, 2 << 16 | a.qpn);
    g_assert_cmpuint(loop_send_cqe(&r, &a).status, ==,
                     SHCA_CQE_REM_ACCESS_ERR);
    g_assert_cmpuint(hca_simple(&r.h, SHCA_AQ_DEREG_MR, key, NULL), ==,
                     SHCA_AQ_OK);
    hca_stop(&r.h);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/softhca/mr/reg", test_mr_reg);
    qtest_add_func("/softhca/mr/rereg", test_mr_rereg);
    qtest_add_func("/softhca/mr/zero-length", test_mr_zero_length);
    qtest_add_func("/softhca/mr/phys-mmio", test_mr_phys_mmio);
    qtest_add_func("/softhca/mr/fast-reg", test_fast_reg);
    qtest_add_func("/softhca/mr/mw", test_mw);

    return g_test_run();
}
